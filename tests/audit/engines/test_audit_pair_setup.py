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

from specmath.audit.engines.law import first_token_law, two_token_law  # noqa: E402
from specmath.audit.engines.pairs import PAIRS, control_shift, load_audit_pair, lookup_draft_token  # noqa: E402
from specmath.audit.engines.registry import ENGINES, engines_for  # noqa: E402
from specmath.audit.engines.rows import OPTION_ROWS  # noqa: E402
from specmath.audit.engines.semantics import SEMANTICS  # noqa: E402
from specmath.audit.engines.table_runs import PAIR_CONFIGS, run_on_pair  # noqa: E402
from specmath.audit.engines.torch_engines import torch_logits  # noqa: E402

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
    logits = torch_logits(loaded.target)
    for config in PAIR_CONFIGS:
        sampling = OPTION_ROWS[config].options
        p1 = first_token_law(logits, loaded.prompt, sampling, SEMANTICS["hf"])
        assert p1.shape == (loaded.vocab_size,) and math.isclose(p1.sum(), 1.0, abs_tol=1e-9)  # float64 sum
        cells, frequent = two_token_law(logits, loaded.prompt, sampling, SEMANTICS["hf"], 50)
        assert math.isclose(sum(cells.values()), 1.0, abs_tol=1e-9)
        assert frequent == {int(x) for x in np.flatnonzero(50 * p1 >= 5)}


@pytest.mark.parametrize("pair", PAIR_PARAMS)
@pytest.mark.parametrize("engine", [e for e in engines_for("pair") if ENGINES[e].unavailable() is None])
def test_every_engine_row_runs_on_every_pair(engine, pair):
    audit = run_on_pair(engine, pair, OPTION_ROWS["T=1"].options, n=2, seed=3)
    assert audit.error is None and audit.skipped is None, audit.verdict
    assert [(c.role, c.name) for c in audit.checks] == [
        ("engine", "first token"), ("engine", "first two tokens"), ("control", "first token"), ("control", "first two tokens")]


def _same_weights(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    # exact: the same files (or the same seeded initialisation) loaded twice, no arithmetic in between
    first, second = a.state_dict(), b.state_dict()
    return first.keys() == second.keys() and all(torch.equal(first[k], second[k]) for k in first)


@pytest.mark.parametrize("name", ["tiny", "bundled"])
def test_one_loader_gives_the_audit_the_target_the_bench_and_the_explorer_the_same_models(name):
    from specmath.audit.engines.target import load_target
    from specmath.explorers.model_step_explorer import load_explorer_pair
    from specmath.lm.pairs import load_named_pair, load_named_target

    audit = load_audit_pair(name)
    bench = load_named_pair(name)
    assert _same_weights(audit.target, bench.target) and _same_weights(audit.draft, bench.draft.model)
    assert _same_weights(audit.target, load_named_target(name)[0])
    assert _same_weights(audit.target, load_target(name).model)
    if name == "bundled":
        target, draft, tokenizer, _ = load_explorer_pair()
        assert _same_weights(audit.target, target) and _same_weights(audit.draft, draft)
        assert tokenizer.get_vocab() == bench.tokenizer.get_vocab()
    else:  # the tiny pair has no tokenizer: its prompts are ids, and it takes no texts
        assert bench.tokenizer is None and all(min(p) >= 0 and max(p) < audit.vocab_size for p in bench.prompts)
        with pytest.raises(ValueError, match="pair 'tiny' has no tokenizer"):
            load_named_pair("tiny", texts=["hello"])
