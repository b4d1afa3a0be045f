"""Knuth-Yao DDG sampler: exact law == target, exact expected draws, H <= E < H + 2 for a coin."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from specmath import LawError, exact
from specmath import strategies as sms
from specmath.entropy.knuth_yao import entropy, knuth_yao, optimal_expected_draws
from specmath.laws import Law, uniform
from specmath.sampled import sample_many
from specmath.speculative import residual_law
from specmath.speculative.two_token import DRAFT, TARGET
from specmath.stats import detectable_tv, g_test
from specmath.validation import InvalidArgument


def law_of(ws: list[int]) -> Law:
    return Law.from_weights({i: w for i, w in enumerate(ws)})


# the DDG walk of a law with denominator d explores O(d) states per example: 30 keep this test to a second
@settings(max_examples=30)
@given(law=sms.laws(max_size=4), a=st.sampled_from([2, 3, 5]))
@example(law=law_of([1, 1, 1, 1, 1, 1, 1]), a=5)  # rand5 -> rand7
@example(law=law_of([1, 0]), a=5)  # a point mass: no draw at all
@example(law=law_of([1, 2, 1]), a=2)  # dyadic: E = H exactly
def test_knuth_yao_law_equals_target_and_cost_is_the_optimal_series(law, a):
    result = exact(knuth_yao, law, a)
    assert result.law == law
    assert result.expected_cost("flip" if a == 2 else f"rand{a}") == optimal_expected_draws(law, a)


@given(law=sms.laws(max_size=4))
@example(law=law_of([1, 2, 1]))
@example(law=law_of([1, 1, 1]))
def test_knuth_yao_expected_flips_lie_between_entropy_and_entropy_plus_two(law):
    e, h = optimal_expected_draws(law, 2), entropy(law, 2)
    # H is irrational in general: compared in floats, with equality (dyadic laws) allowed at 1e-12
    assert h - 1e-12 <= float(e) < h + 2


def test_dyadic_law_costs_exactly_its_entropy():
    law = Law({"a": Fraction(1, 2), "b": Fraction(1, 4), "c": Fraction(1, 4)})
    assert optimal_expected_draws(law, 2) == Fraction(3, 2) == Fraction(str(entropy(law, 2)))


def test_uniform_7_from_rand5_costs_1115_over_504_like_the_recycling_sampler():
    assert exact(knuth_yao, uniform(range(1, 8)), 5).expected_cost("rand5") == Fraction(1115, 504)


def test_two_token_residual_from_rand5_is_a_with_no_draw_at_all():
    residual = residual_law(TARGET, DRAFT)
    result = exact(knuth_yao, residual, 5)
    assert result.law == Law({"A": 1, "B": 0}) and result.expected_costs == {}


def test_non_degenerate_residual_from_rand5_is_exact():
    p = Law({"a": Fraction(1, 2), "b": Fraction(1, 4), "c": Fraction(1, 8), "d": Fraction(1, 8)})
    q = Law({"a": Fraction(1, 10), "b": Fraction(1, 2), "c": 0, "d": Fraction(2, 5)})
    residual = residual_law(p, q)  # norm(max(0, p - q)) = {a: 16/21, c: 5/21}
    assert residual == Law({"a": Fraction(16, 21), "c": Fraction(5, 21)})
    result = exact(knuth_yao, residual, 5)
    assert result.law == residual
    assert result.expected_cost("rand5") == optimal_expected_draws(residual, 5) == Fraction(5, 4)


def test_sampled_knuth_yao_matches_its_law_with_stated_power():
    law = Law({"a": Fraction(16, 21), "c": Fraction(5, 21)})
    n = 5000
    draws = sample_many(knuth_yao, n, law, 5, rng=np.random.default_rng(7))
    counts = {x: draws.count(x) for x in law}
    # power: at n = 5000 the test at level 1e-6 detects any TV >= this with probability 0.99
    assert detectable_tv(law, n) < 0.055
    assert g_test(counts, law).p_value >= 1e-6  # not rejected at level 1e-6


@pytest.mark.parametrize("a", [1, 0, 2.5, True])
def test_knuth_yao_rejects_a_bad_die_size(a):
    with pytest.raises(InvalidArgument, match=r"^Knuth-Yao's die size a \(a = 2 is a coin\) must be an int >= 2, got "):
        exact(knuth_yao, uniform([1, 2]), a)


def test_knuth_yao_reads_a_dict_as_a_law_and_rejects_a_non_law():
    assert optimal_expected_draws({"a": 0.5, "b": 0.25, "c": 0.25}, 2) == Fraction(3, 2)
    with pytest.raises(LawError, match="Mapping"):
        next(knuth_yao([("a", 1)], 2))


def test_optimal_expected_draws_rejects_bad_input():
    with pytest.raises(LawError, match="not normalised"):
        optimal_expected_draws({"a": 0.5}, 2)
    with pytest.raises(InvalidArgument, match="a = 2 is a coin"):
        optimal_expected_draws(uniform([1, 2]), 1)
    with pytest.raises(InvalidArgument, match=r"logarithm base must be a finite number > 1, got 1"):
        entropy(uniform([1, 2]), 1)
