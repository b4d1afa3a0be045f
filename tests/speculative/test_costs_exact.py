"""Exact costs of rounds: tokens per round, target passes per token, against the closed forms."""

from fractions import Fraction

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from specmath import strategies as sms
from specmath.laws import Law
from specmath.speculative import acceptance_rate, round_law
from specmath.speculative.costs import (
    expected_round_tokens,
    expected_target_passes,
    position_acceptance_rate,
    round_program_costs,
    target_passes_per_token,
)
from specmath.speculative.toy_lm import ToyLM, random_toy_lm
from specmath.theory import expected_tokens_per_round


def constant_lm(law: Law) -> ToyLM:
    return ToyLM(lambda ctx: law, tuple(law))


# the expected-cost recursion enumerates 3^gamma draft paths (gamma up to 5): 20 examples keep it to a second
@settings(max_examples=20, deadline=None)
@given(pq=sms.law_pairs(vocab=3), gamma=st.integers(0, 5))
@example(pq=(Law({0: "1/3", 1: "1/3", 2: "1/3"}),) * 2, gamma=3)  # alpha = 1: every round emits gamma + 1
@example(pq=(Law({0: 1, 1: 0, 2: 0}), Law({0: 0, 1: 1, 2: 0})), gamma=4)  # alpha = 0: every round emits 1
def test_expected_round_tokens_equals_leviathan_closed_form_when_alpha_is_constant(pq, gamma):
    p, q = pq
    alpha = acceptance_rate(p, q)
    assert expected_round_tokens(constant_lm(p), constant_lm(q), (), gamma) == expected_tokens_per_round(alpha, gamma)


def test_expected_round_tokens_with_varying_alpha_is_the_sum_of_acceptance_products():
    target, draft = random_toy_lm(3, 21), random_toy_lm(3, 22, context_window=1)
    gamma = 3
    law = round_law(target, draft, (0,), gamma)
    # sum_{k=0}^{gamma} P(first k accepted), each computed from the law of the emitted length
    assert expected_round_tokens(target, draft, (0,), gamma) == sum(law.P(lambda e, k=k: len(e) > k) for k in range(gamma + 1))


def test_expected_round_tokens_equals_the_round_program_target_and_emitted_counts():
    target, draft = random_toy_lm(3, 1), random_toy_lm(3, 2)
    costs = round_program_costs(target, draft, (0,), 2)
    assert costs["target"] == 1 and costs["draft"] == 2
    # every round ends with exactly one resample or bonus draw, after (tokens - 1) accepted coins
    assert costs["resample"] + costs["bonus"] == 1
    assert expected_round_tokens(target, draft, (0,), 2) == 1 + costs["accept"] - costs["resample"]


def renewal_passes(alpha: Fraction, gamma: int, length: int) -> Fraction:
    """Independent check: N(n) = 1 + sum_{k<n} P(|e| = k) N(n - k) with the geometric length law."""
    length_law = {k: alpha ** (k - 1) * (1 - alpha) for k in range(1, gamma + 1)}
    length_law[gamma + 1] = alpha**gamma
    memo = {}
    for n in range(1, length + 1):
        memo[n] = 1 + sum((w * memo[n - k] for k, w in length_law.items() if k < n), Fraction(0))
    return memo[length]


@pytest.mark.parametrize("gamma,length", [(1, 4), (2, 5), (3, 3), (4, 6)])
def test_expected_target_passes_equals_renewal_recursion_when_alpha_is_constant(gamma, length):
    p = Law({"A": Fraction(7, 10), "B": Fraction(3, 10)})
    q = Law({"A": Fraction(2, 5), "B": Fraction(3, 5)})
    target, draft = constant_lm(p), constant_lm(q)
    alpha = Fraction(7, 10)
    assert expected_target_passes(target, draft, (), gamma, length) == renewal_passes(alpha, gamma, length)
    assert target_passes_per_token(target, draft, (), gamma, length) == renewal_passes(alpha, gamma, length) / length


def test_identical_draft_needs_one_target_pass_per_gamma_plus_one_tokens():
    lm = random_toy_lm(3, 5)
    assert expected_target_passes(lm, lm, (), 3, 8) == 2
    assert target_passes_per_token(lm, lm, (), 3, 8) == Fraction(1, 4)


def test_position_acceptance_rate_is_sum_of_minima_at_that_context():
    target, draft = random_toy_lm(4, 7), random_toy_lm(4, 8)
    p, q = target((1, 2)), draft((1, 2))
    assert position_acceptance_rate(target, draft, (1, 2)) == sum(min(p[x], q[x]) for x in p)


def test_expected_target_passes_rejects_a_bad_length():
    lm = random_toy_lm(2, 0)
    with pytest.raises(ValueError, match="length"):
        expected_target_passes(lm, lm, (), 2, 0)
