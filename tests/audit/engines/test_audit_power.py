"""The power of an engine audit: each test keeps at most MAX_CELLS cells (the likeliest, the rest pooled into one),
and a row chooses the N at which both its tests detect a target TV with probability 0.99.

The toy model of ``toy_jsonl_engine.py`` (32 tokens, its law exact) at T = 1, no truncation: the first two tokens
spread over hundreds of cells of expected count >= 5 at N = 10000, so the cap decides the test's size. Every
assertion is on exact laws and on ``specmath.stats.detectable_tv``'s deterministic formula: no sampling here.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

from specmath.audit.engines.checks import MAX_CELLS, POOLED, detectable_tvs, exact_laws, memoised, n_for_tv
from specmath.audit.engines.law import OTHER
from specmath.audit.engines.semantics import SEMANTICS
from specmath.sampling_options import SamplingOptions

TOY = Path(__file__).with_name("toy_jsonl_engine.py")
sys.path.insert(0, str(TOY.parent))
import toy_jsonl_engine as toy  # noqa: E402

PROMPT = [31, 26, 29, 31, 26]
SEMANTICS_LLAMA = SEMANTICS["llama.cpp"]


def toy_logits(contexts):
    return np.array([toy.logits(c) for c in contexts])


def test_each_test_keeps_the_likeliest_cells_and_pools_the_rest_into_one():
    uncapped = exact_laws(toy_logits, PROMPT, SamplingOptions(), SEMANTICS_LLAMA, 10_000, max_cells=10**6)
    laws = exact_laws(toy_logits, PROMPT, SamplingOptions(), SEMANTICS_LLAMA, 10_000)
    assert len(uncapped.cells) > 3 * MAX_CELLS and len(laws.cells) == MAX_CELLS
    assert len(laws.first_cells()) == MAX_CELLS  # MAX_CELLS - 1 tokens and OTHER
    # the kept cells are the likeliest; the pooled cell holds the rest's mass (float sums of the same numbers:
    # equal to 1e-12, rounding only)
    kept = sorted(uncapped.cells.values(), reverse=True)[:MAX_CELLS - 1]
    assert sorted((v for c, v in laws.cells.items() if c != POOLED), reverse=True) == kept
    assert math.isclose(sum(laws.cells.values()), sum(uncapped.cells.values()), rel_tol=1e-12)
    rare = min((c for c in uncapped.cells if c not in laws.cells and len(c) == 2 and c[1] != OTHER),
               key=lambda c: uncapped.cells[c])
    assert laws.cell_of(list(rare)) == POOLED and uncapped.cell_of(list(rare)) == rare
    likeliest = max((c for c in laws.cells if c != POOLED), key=laws.cells.get)
    assert laws.cell_of(list(likeliest)) == likeliest


def test_a_row_chooses_the_smallest_n_that_detects_the_target_tv():
    logits = memoised(toy_logits)
    n = n_for_tv(logits, PROMPT, SamplingOptions(), SEMANTICS_LLAMA, 0.05)
    assert 5_000 < n < 12_000, n  # 16 cells: lambda(15) / (4 * 0.05^2) is about 8000
    assert max(detectable_tvs(exact_laws(logits, PROMPT, SamplingOptions(), SEMANTICS_LLAMA, n), n)) <= 0.05
    smaller = int(n / 1.05)
    assert max(detectable_tvs(exact_laws(logits, PROMPT, SamplingOptions(), SEMANTICS_LLAMA, smaller), smaller)) > 0.05
    assert n_for_tv(logits, PROMPT, SamplingOptions(), SEMANTICS_LLAMA, 0.01, most=20_000) == 20_000
