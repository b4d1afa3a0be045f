"""Closed forms of speculative decoding: tokens per round, speedup model, optimal gamma, the article's 2x."""

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specmath.theory import (
    alpha_for_expected_tokens,
    article_speedup_example,
    expected_tokens_per_round,
    optimal_gamma,
    speedup,
    speedup_from_timings,
)

fractions01 = st.tuples(st.integers(0, 20), st.integers(1, 20)).filter(lambda t: t[0] <= t[1]).map(lambda t: Fraction(*t))


def test_article_worked_example_is_exactly_two():
    assert article_speedup_example() == 2
    assert isinstance(article_speedup_example(), Fraction)


@settings(deadline=None)
@given(alpha=fractions01, gamma=st.integers(0, 8))
def test_expected_tokens_per_round_is_the_geometric_sum_of_alpha_powers(alpha, gamma):
    assert expected_tokens_per_round(alpha, gamma) == sum(alpha**k for k in range(gamma + 1))


def test_expected_tokens_per_round_is_exact_for_rational_and_float_for_float_inputs():
    assert expected_tokens_per_round(Fraction(1, 2), 2) == Fraction(7, 4)
    assert expected_tokens_per_round("1/2", 2) == Fraction(7, 4)
    assert isinstance(expected_tokens_per_round(0.5, 2), float)
    assert expected_tokens_per_round(1, 4) == 5


def test_speedup_model_matches_leviathan_formula_on_a_rational_point():
    # (1 - (4/5)^5) / ((1 - 4/5)(4 * 1/20 + 1)) = (2101/3125) / (1/5 * 6/5)
    assert speedup(Fraction(4, 5), 4, Fraction(1, 20)) == Fraction(2101, 3125) / (Fraction(1, 5) * Fraction(6, 5))
    assert speedup(Fraction(1, 3), 0, Fraction(1, 2)) == 1


@settings(deadline=None)
@given(alpha=fractions01.filter(lambda a: 0 < a < 1), c=fractions01.filter(lambda c: c > 0))
def test_optimal_gamma_beats_every_gamma_up_to_sixty(alpha, c):
    best = optimal_gamma(alpha, c)
    assert all(speedup(alpha, best, c) >= speedup(alpha, g, c) for g in range(61))
    assert all(speedup(alpha, best, c) > speedup(alpha, g, c) for g in range(best))


def test_optimal_gamma_edge_cases():
    assert optimal_gamma(0, Fraction(1, 10)) == 0
    assert optimal_gamma(1, 1) == 0
    with pytest.raises(ValueError, match="no optimum"):
        optimal_gamma(1, Fraction(1, 2))
    with pytest.raises(ValueError, match="no optimum"):
        optimal_gamma(Fraction(1, 2), 0)


def test_speedup_from_timings_reproduces_the_article_formula():
    assert speedup_from_timings(3, 10, 3, 12) == Fraction(30, 15)
    assert speedup_from_timings("2.5", 10, 5, 10) == Fraction(5, 3)


def test_alpha_for_expected_tokens_inverts_the_geometric_sum():
    alpha = alpha_for_expected_tokens(3, 4)
    # alpha is found by float bisection to 1e-12; the geometric sum's slope at that alpha is < 10,
    # so the tokens it gives back are within 1e-11 of 3, and 1e-9 leaves room for the float sum
    assert abs(float(expected_tokens_per_round(alpha, 4)) - 3) < 1e-9


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: expected_tokens_per_round(Fraction(3, 2), 2), "alpha"),
        (lambda: expected_tokens_per_round(float("nan"), 2), "NaN"),
        (lambda: expected_tokens_per_round(Fraction(1, 2), -1), "gamma"),
        (lambda: speedup(Fraction(1, 2), 2, -1), "cost ratio"),
        (lambda: speedup_from_timings(0, 10, 3, 12), "at least one token"),
        (lambda: speedup_from_timings(3, 10, 0, 0), "positive round time"),
        (lambda: alpha_for_expected_tokens(7, 4), "between 1 and 5"),
    ],
)
def test_theory_rejects_bad_inputs_with_a_clear_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()
