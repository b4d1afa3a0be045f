"""A-Res equals successive sampling (by symbolic integration), inclusion != k w / W; Algorithm L skips == R's."""

from collections import Counter
from fractions import Fraction
from itertools import permutations

import numpy as np
import pytest
import sympy
from hypothesis import example, given, settings
from hypothesis import strategies as st

from specmath import LawError, exact
from specmath.entropy.weighted_reservoir import (
    a_res_law,
    a_res_sampled,
    algorithm_l_next_law,
    algorithm_l_replacements,
    algorithm_l_threshold_density,
    algorithm_l_threshold_update,
    algorithm_r_next,
    algorithm_r_replacements,
    inclusion_probabilities,
    key_order_probability,
    naive_inclusion,
    successive_sampling,
)
from specmath.stats import detectable_tv, g_test
from specmath.validation import InvalidArgument


def successive_law(weights, k):
    return exact(successive_sampling, tuple(weights.items()), k).law


# successive sampling's exact law enumerates every ordered k-subset with its restarts: 8 examples take seconds
@settings(max_examples=8)
@given(ws=st.lists(st.integers(1, 6), min_size=2, max_size=4), data=st.data())
@example(ws=[1, 2, 3], data=None)
def test_a_res_key_order_law_equals_successive_sampling(ws, data):
    weights = {chr(97 + i): w for i, w in enumerate(ws)}
    k = 2 if data is None else data.draw(st.integers(1, min(2, len(ws))))
    ordered = successive_law(weights, k)
    for order in permutations(weights, k):
        assert key_order_probability(weights, order) == ordered.prob(order)


def test_a_res_with_rational_weights_matches_successive_sampling():
    weights = {"a": Fraction(1, 2), "b": Fraction(3, 2), "c": 1}
    ordered = successive_law(weights, 2)
    assert all(key_order_probability(weights, o) == ordered.prob(o) for o in permutations(weights, 2))


def test_a_res_inclusion_is_not_k_w_over_W():
    weights = {"a": 1, "b": 2, "c": 3}
    law = a_res_law(weights, 2)
    assert law == successive_law(weights, 2).map(lambda s: tuple(sorted(s)))
    incl = inclusion_probabilities(law, "abc")
    assert incl == {"a": Fraction(5, 12), "b": Fraction(11, 15), "c": Fraction(17, 20)}
    assert naive_inclusion(weights, 2) == {"a": Fraction(1, 3), "b": Fraction(2, 3), "c": 1}
    assert sum(incl.values()) == 2  # k items are always kept


def test_naive_inclusion_can_exceed_one():
    assert naive_inclusion({"a": 1, "b": 1, "c": 4}, 2)["c"] == Fraction(4, 3)
    assert inclusion_probabilities(a_res_law({"a": 1, "b": 1, "c": 4}, 2), "abc")["c"] < 1


def test_sampled_a_res_matches_its_exact_law_with_stated_power():
    weights = {"a": 1, "b": 2, "c": 3, "d": 4}
    law = a_res_law(weights, 2)
    rng = np.random.default_rng(5)
    n = 6000
    counts = Counter(a_res_sampled(weights, 2, rng) for _ in range(n))
    assert detectable_tv(law, n) < 0.055  # any TV >= 0.055 is caught with probability >= 0.99
    assert g_test(counts, law).p_value >= 1e-6  # not rejected at level 1e-6


@pytest.mark.parametrize("k,n", [(1, 6), (2, 7), (3, 8)])
def test_algorithm_l_next_replacement_law_equals_algorithm_r(k, n):
    for i in range(k, n):
        assert algorithm_l_next_law(i, k, n) == exact(algorithm_r_next, i, k, n).law


@pytest.mark.parametrize("k", [1, 2, 3])
def test_algorithm_l_threshold_after_a_replacement_is_beta(k):
    w = sympy.Symbol("w", positive=True)
    start = k * w ** (k - 1)  # W = u^(1/k): the largest of k uniforms
    assert sympy.simplify(start - algorithm_l_threshold_density(k, k, w)) == 0
    for i in (k, k + 2):
        for s in (0, 2):
            new = algorithm_l_threshold_update(algorithm_l_threshold_density(i, k, w), k, s, w)
            assert sympy.simplify(new - algorithm_l_threshold_density(i + s + 1, k, w)) == 0


def test_sampled_algorithm_l_replacements_match_algorithm_r_exactly_proved_law():
    k, n = 2, 7
    law = exact(algorithm_r_replacements, k, n).law
    rng = np.random.default_rng(9)
    trials = 6000
    counts = Counter(algorithm_l_replacements(k, n, rng) for _ in range(trials))
    assert detectable_tv(law, trials) < 0.08  # power 0.99 at level 1e-6 for TV >= 0.08
    assert g_test(counts, law).p_value >= 1e-6  # not rejected at level 1e-6


@pytest.mark.parametrize("weights", [{}, {"a": 0, "b": 1}, {"a": -1}, {"a": float("nan")}])
def test_weighted_reservoir_rejects_bad_weights(weights):
    with pytest.raises(LawError):
        a_res_law(weights, 1)


def test_weighted_reservoir_rejects_a_sample_larger_than_the_items():
    with pytest.raises(InvalidArgument, match=r"^k \(the reservoir size, 1 <= k <= n\) must be an int in \[1, 2\], got 3$"):
        a_res_law({"a": 1, "b": 2}, 3)


def test_algorithm_r_next_rejects_a_position_outside_k_to_n():
    with pytest.raises(InvalidArgument, match=r"^the current position i \(k <= i <= n\) must be an int in \[2, 5\], got 1$"):
        exact(algorithm_r_next, 1, 2, 5)
