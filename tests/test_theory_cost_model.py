"""The measured-cost speedup model: per-position acceptance, verify cost k(gamma), overheads, best gamma."""

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specmath.laws import LawError
from specmath.theory import (
    RoundCosts,
    best_gamma,
    cost_model_speedup,
    expected_tokens_by_position,
    expected_tokens_per_round,
    speedup,
)

fractions01 = st.tuples(st.integers(0, 20), st.integers(1, 20)).filter(lambda t: t[0] <= t[1]).map(lambda t: Fraction(*t))


@settings(max_examples=40, deadline=None)
@given(alpha=fractions01, gamma=st.integers(0, 8))
def test_constant_acceptance_gives_the_geometric_sum(alpha, gamma):
    assert expected_tokens_by_position(alpha, gamma) == expected_tokens_per_round(alpha, gamma)
    assert expected_tokens_by_position([alpha] * gamma, gamma) == expected_tokens_per_round(alpha, gamma)


def test_per_position_acceptance_multiplies_along_the_round():
    # 1 + 1/2 + 1/2 * 1/3 = 5/3: position 2 is reached only after position 1 was accepted
    assert expected_tokens_by_position([Fraction(1, 2), Fraction(1, 3), Fraction(1)], 2) == Fraction(5, 3)
    assert expected_tokens_by_position([Fraction(1, 2), Fraction(1, 3), Fraction(1)], 3) == Fraction(11, 6)


@settings(max_examples=40, deadline=None)
@given(alpha=fractions01, gamma=st.integers(0, 8), c=fractions01)
def test_k_one_and_no_overhead_is_leviathans_theorem(alpha, gamma, c):
    assert cost_model_speedup(alpha, gamma, RoundCosts(c)) == speedup(alpha, gamma, c)


def test_verify_cost_and_overheads_enter_the_denominator_and_numerator_exactly():
    # 3 tokens per round at k = 3/2, c = 1/10, gamma = 2, o_round = 1/10, o_plain = 1/20:
    # 3 (1 + 1/20) / (2/10 + 3/2 + 1/10) = (63/20) / (9/5) = 7/4
    alphas = [Fraction(1), Fraction(1)]
    costs = RoundCosts(c=Fraction(1, 10), k=Fraction(3, 2), o_round=Fraction(1, 10), o_plain=Fraction(1, 20))
    assert cost_model_speedup(alphas, 2, costs) == Fraction(7, 4)
    assert isinstance(cost_model_speedup(0.5, 2, RoundCosts(0.1, k=1.5)), float)


def test_bad_costs_are_errors_naming_the_quantity():
    with pytest.raises(LawError, match="k"):
        RoundCosts(0.1, k=0)
    with pytest.raises(LawError, match="o_round must be >= 0"):
        RoundCosts(0.1, o_round=-0.5)
    with pytest.raises(LawError, match="each of the gamma = 3 positions"):
        cost_model_speedup([0.5, 0.5], 3, RoundCosts(0.1))
    with pytest.raises(LawError, match="alpha"):
        expected_tokens_by_position([0.5, 1.5], 2)
    with pytest.raises(LawError, match="at least one"):
        best_gamma(0.5, {})


def test_best_gamma_trades_tokens_per_round_against_the_measured_verify_cost():
    alphas = [Fraction(9, 10)] * 8
    free = {g: RoundCosts(0) for g in range(1, 9)}
    # free verification and free drafts: the longest round wins
    assert best_gamma(alphas, free) == 8
    # each verified token costing 1/2 pass: (1 + .9 + ... + .9^g) / (1 + g/2) peaks at gamma = 3 (3439/2500)
    half = {g: RoundCosts(0, k=1 + Fraction(g, 2)) for g in range(1, 9)}
    assert best_gamma(alphas, half) == 3
    assert cost_model_speedup(alphas, 3, half[3]) == Fraction(3439, 2500)
    # each verified token costing a whole pass: the shortest round loses least
    full = {g: RoundCosts(0, k=Fraction(1 + g)) for g in range(1, 9)}
    assert best_gamma(alphas, full) == 1


def test_a_finite_run_pays_the_prefill_and_tends_to_the_asymptotic_speedup():
    # P = 10, P_d = 2, n = 60 tokens at 3 tokens per round, rounds costing 2: (10 + 60) / (12 + 20 * 2) = 70/52
    alphas = [Fraction(1), Fraction(1)]
    costs = RoundCosts(0, k=2, prefill=10, draft_prefill=2)
    assert cost_model_speedup(alphas, 2, costs, new_tokens=60) == Fraction(70, 52)
    far = cost_model_speedup(alphas, 2, costs, new_tokens=10**9)
    assert abs(far - cost_model_speedup(alphas, 2, costs)) < Fraction(1, 10**7)
    with pytest.raises(LawError, match="new tokens"):
        cost_model_speedup(alphas, 2, costs, new_tokens=0)


def test_expected_rounds_counts_the_last_rounds_overshoot():
    from specmath.theory import expected_rounds, expected_tokens_by_position

    half = Fraction(1, 2)
    # gamma = 1, alpha = 1/2: rounds emit 1 or 2 tokens; R(1) = 1, R(2) = 1 + R(1)/2 = 3/2, R(3) = 1 + R(2)/2 + R(1)/2 = 9/4
    assert [expected_rounds(half, 1, n) for n in (1, 2, 3)] == [1, Fraction(3, 2), Fraction(9, 4)]
    assert expected_rounds(half, 1, 3) > 3 / expected_tokens_by_position(half, 1)  # 9/4 > 2: the cut surplus is paid
    # every draft accepted: gamma + 1 tokens a round, so ceil(n / (gamma + 1)) rounds; a fractional n rounds up
    assert [expected_rounds([1, 1], 2, n) for n in (1, 3, 4, 60, 61)] == [1, 1, 2, 20, 21]
    assert expected_rounds([1, 1], 2, Fraction(121, 2)) == 21
    # past the recursion limit R grows by 1 / E[tokens] per token: within one round of the truth here
    # (rounds of exactly 3 tokens are periodic, so the overshoot at the limit never settles)
    assert abs(expected_rounds([1, 1], 2, 3 * 10**6) - 10**6) < 1
    with pytest.raises(LawError, match="new tokens"):
        expected_rounds(half, 1, 0)
