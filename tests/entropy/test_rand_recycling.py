"""rand_a -> rand_b with unbounded recycling: uniform, 1115/504 calls for 5 -> 7, Knuth-Yao optimal."""

from fractions import Fraction

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from specmath import exact
from specmath.classic.rand7 import rand7_article, rand7_basic, rand_article, rand_basic, uniform_target
from specmath.entropy.rand_recycling import knuth_yao_bound, leftover_sizes, rand7_recycling, rand_recycling
from specmath.validation import InvalidArgument


def test_rand7_recycling_is_uniform_with_1115_over_504_expected_calls():
    result = exact(rand7_recycling)
    assert result.law == uniform_target(7)
    assert result.expected_cost("rand5") == Fraction(1115, 504)


def test_rand7_recycling_beats_the_article_and_basic_exactly():
    basic = exact(rand7_basic).expected_cost("rand5")
    article = exact(rand7_article).expected_cost("rand5")
    recycling = exact(rand7_recycling).expected_cost("rand5")
    assert (basic, article, recycling) == (Fraction(50, 21), Fraction(5816, 2625), Fraction(1115, 504))
    assert recycling < article < basic


def test_article_falls_back_with_probability_2_over_625_not_below_one_in_a_thousand():
    result = exact(rand7_article)
    assert result.expected_cost("fallback") == Fraction(2, 625)
    assert Fraction(2, 625) > Fraction(3, 1000) > Fraction(1, 1000)  # "< 0.3%" and "~0.1%" are both wrong


def test_leftover_sizes_cycle_through_the_powers_of_5_mod_7():
    assert leftover_sizes(5, 7, 12) == [1, 5, 4, 6, 2, 3, 1, 5, 4, 6, 2, 3, 1]


# each (a, b) solves an absorbing Markov chain over the recycled states exactly: 40 pairs take seconds
@settings(max_examples=40)
@given(a=st.integers(2, 9), b=st.integers(2, 13))
@example(a=5, b=7)
@example(a=2, b=4)  # a power: exact with no rejection
@example(a=7, b=5)  # a die larger than the target
@example(a=6, b=6)
def test_recycling_is_uniform_and_meets_the_knuth_yao_bound_for_any_a_b(a, b):
    result = exact(rand_recycling, a, b, label="roll")
    assert result.law == uniform_target(b)
    assert result.expected_cost("roll") == knuth_yao_bound(a, b)


@pytest.mark.parametrize("a,b", [(5, 7), (2, 3), (3, 10), (6, 11)])
def test_basic_and_article_samplers_cost_at_least_the_knuth_yao_bound(a, b):
    bound = knuth_yao_bound(a, b)
    assert exact(rand_basic, a, b, "roll").expected_cost("roll") >= bound
    if a < b:
        assert exact(rand_article, a, b, 3, "roll").expected_cost("roll") >= bound


def test_knuth_yao_bound_for_5_to_7_is_the_periodic_series():
    # sum_k (5^k mod 7) / 5^k with period 6: (1 + 1 + 4/25 + 6/125 + 2/625 + 3/3125) / (1 - 5^-6)
    head = 1 + Fraction(5, 5) + Fraction(4, 25) + Fraction(6, 125) + Fraction(2, 625) + Fraction(3, 3125)
    assert knuth_yao_bound(5, 7) == head / (1 - Fraction(1, 5**6)) == Fraction(1115, 504)


@pytest.mark.parametrize("kwargs", [{"a": 1}, {"b": 1}, {"a": 2.0}, {"value": 3, "size": 3}, {"value": -1}])
def test_recycling_rejects_bad_sizes_and_states_with_a_clear_error(kwargs):
    with pytest.raises(InvalidArgument, match=r"must be an int (>=|in)"):
        exact(rand_recycling, **kwargs)


def test_leftover_sizes_rejects_a_negative_number_of_rolls():
    with pytest.raises(InvalidArgument, match=r"^rolls \(the number of rolls\) must be an int >= 0, got -1$"):
        leftover_sizes(5, 7, -1)
