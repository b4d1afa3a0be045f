"""specmath.strategies: valid by construction, every edge case reachable, shrinking to small simple examples."""

import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from specmath import strategies as sms
from specmath.laws import Law
from specmath.speculative.step import standard_rule, step_law
from specmath.speculative.toy_lm import ToyLM

#: The edge-case searches are derandomized (the same examples on every run and machine, so a rare edge
#: case cannot make the test flaky) and may look at 1000 examples: law_pairs spends only a few percent
#: of its budget on each edge case, by design (test_law_pairs_spend_their_budget_on_pairs_that_can_break_a_rule).
#: They stop at the first example that reaches the case (no shrink phase): what they check is that it is
#: reached; the tests below that check shrinking use find's default phases.
REACH = settings(derandomize=True, database=None, deadline=None, max_examples=1000,
                 phases=[Phase.explicit, Phase.generate])


def one_hot(law: Law) -> bool:
    return len(law.support) == 1


@pytest.mark.parametrize(
    ("what", "condition"),
    [
        ("p == q", lambda pq: pq[0] == pq[1] and len(pq[0]) > 1),
        ("disjoint supports", lambda pq: not (pq[0].support & pq[1].support)),
        ("q(x) = 0 < p(x)", lambda pq: any(pq[1][x] == 0 < pq[0][x] for x in pq[0])),
        ("p(x) = 0 < q(x)", lambda pq: any(pq[0][x] == 0 < pq[1][x] for x in pq[0])),
        ("one-hot p and q, different tokens", lambda pq: one_hot(pq[0]) and one_hot(pq[1]) and pq[0] != pq[1]),
        ("a one-token vocabulary", lambda pq: len(pq[0]) == 1),
        ("six tokens, full support on both sides", lambda pq: len(pq[0].support) == len(pq[1].support) == 6),
    ],
)
def test_law_pairs_reach_every_edge_case(what, condition):
    p, q = find(sms.law_pairs(), condition, settings=REACH)
    assert condition((p, q)), what
    assert p.vocabulary == q.vocabulary


def test_laws_reach_one_hot_and_shrink_to_the_smallest_example():
    # the smallest law with two tokens in its support is the uniform law on "A", "B"
    assert find(sms.laws(), lambda law: len(law.support) >= 2) == Law({"A": Fraction(1, 2), "B": Fraction(1, 2)})
    assert one_hot(find(sms.laws(min_size=3), one_hot))
    assert find(sms.laws(vocab=[7, 8, 9]), lambda law: law[9] == 1) == Law({7: 0, 8: 0, 9: 1})


@given(sms.laws(zeros=False, vocab=4))
def test_laws_without_zeros_have_full_support_and_exact_weights(law):
    assert law.support == frozenset(range(4))
    assert sum(law.values()) == 1 and all(isinstance(w, Fraction) for w in law.values())


def test_toy_lms_shrink_to_a_context_free_table_and_reach_context_dependence():
    lm = find(sms.toy_lms(2, depth=2), lambda lm: lm((0,)) != lm((1,)))
    assert isinstance(lm, ToyLM) and lm((0,)) != lm((1,))
    assert "otherwise" in lm.name  # the LM prints its table, not a seed
    position = find(sms.toy_lms(2, depth=2), lambda lm: lm(()) != lm((0, 0)))
    assert position(()) != position((0, 0))
    # the simplest LM that is one-hot somewhere is context-free: one row, no table
    simplest = find(sms.toy_lms(3), lambda lm: one_hot(lm(())))
    assert simplest.name.count("->") == 0


@given(sms.round_inputs(gamma=st.integers(1, 4), vocab=st.integers(1, 5)))
def test_round_inputs_are_valid_by_construction(inputs):
    target_probs, draft_probs, draft_tokens = inputs
    gamma = len(draft_tokens)
    assert target_probs.shape == (gamma + 1, draft_probs.shape[1]) and draft_probs.shape[0] == gamma
    assert draft_tokens.dtype == np.int64
    # every draft token could have been drawn: q_i(x_i) > 0
    assert all(draft_probs[i, x] > 0 for i, x in enumerate(draft_tokens))
    # rows are exact laws rounded to float64: each sums to 1 within V half-ulps (2^-53 relative each)
    assert np.all(np.abs(target_probs.sum(axis=1) - 1) <= target_probs.shape[1] * 2.0**-52)


def test_round_inputs_reach_a_draft_token_the_target_cannot_emit():
    inputs = find(sms.round_inputs(gamma=1, vocab=2), lambda r: r.target_probs[0, r.draft_tokens[0]] == 0)
    assert inputs.draft_probs[0, inputs.draft_tokens[0]] > 0


def test_round_inputs_on_torch_have_the_dtype_asked_for():
    torch = pytest.importorskip("torch")
    target_probs, draft_probs, draft_tokens = find(sms.round_inputs(backend="torch", dtype=torch.float32), lambda r: True)
    assert target_probs.dtype == draft_probs.dtype == torch.float32 and draft_tokens.dtype == torch.int64


@pytest.mark.parametrize(
    "make",
    [lambda: sms.laws(min_size=0), lambda: sms.laws(vocab=[]), lambda: sms.laws(vocab=["A", "A"]),
     lambda: sms.toy_lms(2, depth=-1), lambda: sms.round_inputs(backend="jax"), lambda: sms.laws(max_weight=0)],
)
def test_bad_arguments_are_value_errors(make):
    with pytest.raises(ValueError):
        make()


def test_strategies_import_without_torch():
    code = "import sys; import specmath.strategies; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def drawn(strategy, count: int = 1000) -> list:
    """The first ``count`` examples Hypothesis generates (derandomized: the same list every run)."""
    seen = []

    @settings(max_examples=count, derandomize=True, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(example):
        seen.append(example)

    collect()
    return seen


def budget(pairs: list) -> dict:
    """Fractions of the examples that are p == q, on one token, with disjoint supports, with q(x) = 0 < p(x)."""
    def share(condition) -> float:
        return sum(map(condition, pairs)) / len(pairs)

    return {
        "p == q": share(lambda pq: pq[0] == pq[1]),
        "one token": share(lambda pq: len(pq[0]) == 1),
        "disjoint supports": share(lambda pq: not (pq[0].support & pq[1].support)),
        "q(x) = 0 < p(x)": share(lambda pq: any(pq[1][x] == 0 < pq[0][x] for x in pq[0])),
    }


def assert_worth_the_budget(fractions: dict) -> None:
    assert fractions["p == q"] <= 0.10 and fractions["one token"] <= 0.05, fractions
    assert fractions["disjoint supports"] >= 0.10 and fractions["q(x) = 0 < p(x)"] >= 0.20, fractions


def test_law_pairs_spend_their_budget_on_pairs_that_can_break_a_rule():
    pairs = drawn(sms.law_pairs())
    assert len(pairs) == 1000
    assert_worth_the_budget(budget(pairs))


@pytest.mark.slow  # drawing 1000 toy LM pairs takes Hypothesis about 12 s
def test_toy_lm_pairs_spend_their_budget_on_models_that_differ():
    models = drawn(sms.toy_lm_pairs())
    assert len(models) == 1000
    # at the first position, and everywhere up to the strategy's depth 2
    assert_worth_the_budget(budget([(target(()), draft(())) for target, draft in models]))
    contexts = [()] + [(x,) for x in range(3)] + [(x, y) for x in range(3) for y in range(3)]
    everywhere = sum(all(t(c) == d(c) for c in contexts if all(x in t.vocabulary for x in c)) for t, d in models)
    assert everywhere / len(models) <= 0.10


def test_shrinking_still_reaches_two_tokens():
    # a rule that resamples from p fails first on two tokens; Hypothesis shrinks to that size
    def resample_from_p(p, q, x):
        accept, _ = standard_rule(p, q, x)
        return accept, p

    p, q = find(sms.law_pairs(), lambda pq: step_law(pq[0], pq[1], resample_from_p) != pq[0])
    assert len(p) == 2 and p == Law({"A": Fraction(1, 2), "B": Fraction(1, 2)}) and q == Law({"A": 1, "B": 0})
    assert len(find(sms.law_pairs(), lambda pq: pq[0] != pq[1])[0]) == 2
    target, draft = find(sms.toy_lm_pairs(), lambda lms: lms[0](()) != lms[1](()))
    assert len(target.vocabulary) == 2
