"""specmath.strategies: valid by construction, every edge case reachable, shrinking to small simple examples."""

import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import find, given
from hypothesis import strategies as st

from specmath import strategies as sms
from specmath.laws import Law
from specmath.speculative.toy_lm import ToyLM


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
    p, q = find(sms.law_pairs(), condition)
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
