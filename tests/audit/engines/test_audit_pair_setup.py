"""Every audit pair's setup path, as ``audit-generate`` runs it: prompt choice, exact laws, and one
short run of each engine and its control (N = 2, no verdict asserted: at that N nothing has power).

What the test guards is that each engine x pair row of the README's table *runs*: a prompt without an
earlier n-gram made prompt lookup propose nothing, and the prompt choice then crashed on the real
pairs while the ``tiny`` rows (all CI ran) passed. The SmolLM2 rows load a 135M-parameter model and
are marked slow (``make test`` runs them).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from specmath.audit.engines.pairs import PAIRS, control_shift, load_audit_pair, lookup_draft_token  # noqa: E402
from specmath.audit.engines.torch_audit import CONFIGS, first_token_law, run_generate_audit, two_token_law  # noqa: E402
from specmath.audit.engines.torch_engines import ENGINES  # noqa: E402

PAIR_PARAMS = [pytest.param(p, marks=pytest.mark.slow) if p == "smollm2" else p for p in PAIRS]


def test_lookup_draft_token_is_none_without_an_earlier_match():
    assert lookup_draft_token([1, 2, 3]) is None
    assert lookup_draft_token([5]) is None
    assert lookup_draft_token([1, 2, 3, 1, 2]) == 3


@pytest.mark.parametrize("pair", PAIR_PARAMS)
def test_pair_setup_chooses_prompts_and_computes_laws(pair):
    loaded = load_audit_pair(pair)
    # the lookup engines' prompt has a match: prompt lookup drafts there, so its control can move the law
    drafted = lookup_draft_token(loaded.lookup_prompt)
    assert drafted is not None, loaded.lookup_prompt
    p = torch.softmax(loaded.target(torch.tensor([loaded.lookup_prompt])).logits[0, -1].double(), -1)
    one_hot = torch.nn.functional.one_hot(torch.tensor(drafted), p.numel()).double()
    assert control_shift(p, one_hot) > 0
    for sampling in CONFIGS.values():
        p1 = first_token_law(loaded, sampling)
        assert p1.shape == (loaded.vocab_size,) and math.isclose(p1.sum(), 1.0, abs_tol=1e-9)  # float64 sum
        cells, frequent = two_token_law(loaded, sampling, 50)
        assert math.isclose(sum(cells.values()), 1.0, abs_tol=1e-9)
        assert frequent == {int(x) for x in np.flatnonzero(50 * p1 >= 5)}


@pytest.mark.parametrize("pair", PAIR_PARAMS)
@pytest.mark.parametrize("engine", [e for e in ENGINES if ENGINES[e].unavailable("smollm2") is None])
def test_every_engine_row_runs_on_every_pair(engine, pair):
    audit = run_generate_audit(engine, pair, "T=1", n=2, seed=3)
    assert audit.error is None and audit.skipped is None, audit.verdict
    assert [(c.role, c.name) for c in audit.checks] == [
        ("engine", "first token"), ("engine", "first two tokens"), ("control", "first token"), ("control", "first two tokens")]
