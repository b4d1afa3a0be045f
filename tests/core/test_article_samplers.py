"""The article's samplers, each proved by the exact interpreter and sampled by the other."""

from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st

from specmath import LawError, exact, exact_symbolic
from specmath import strategies as sms
from specmath.classic.fair_coin import expected_flips, fair_coin_law, von_neumann
from specmath.classic.rand7 import (
    expected_calls_basic,
    rand7_article,
    rand7_basic,
    rand_article,
    rand_basic,
    uniform_target,
)
from specmath.classic.rejection import rejection_sampler, smallest_envelope
from specmath.classic.reservoir import algorithm_r, inclusion_probabilities, subset_target
from specmath.laws import Law
from specmath.sampled import sample
from specmath.speculative import residual_law
from specmath.speculative.two_token import DRAFT, TARGET, acceptance_by_token, path_table, two_token_world
from specmath.stats import detectable_tv, g_test
from specmath.validation import InvalidArgument


def test_two_token_world_outputs_target_law():
    assert exact(two_token_world).law == TARGET


def test_two_token_world_acceptance_residual_and_paths_match_the_article():
    assert acceptance_by_token() == {"A": 1, "B": Fraction(1, 2)}
    assert residual_law(TARGET, DRAFT) == Law({"A": 1, "B": 0})
    rows = [(r["draft"], r["accepted"], r["output"], r["probability"]) for r in path_table()]
    assert rows == [("A", True, "A", Fraction(2, 5)), ("B", True, "B", Fraction(3, 10)), ("B", False, "A", Fraction(3, 10))]


def test_rand7_basic_is_uniform_with_50_over_21_expected_calls():
    result = exact(rand7_basic)
    assert result.law == uniform_target(7)
    assert result.expected_cost("rand5") == Fraction(50, 21) == expected_calls_basic(5, 7)


def test_rand7_article_is_uniform_and_its_levels_have_exact_probabilities():
    result = exact(rand7_article)
    assert result.law == uniform_target(7)
    assert result.expected_cost("rand5") == Fraction(5816, 2625)
    levels = [result.expected_cost(k) for k in ("level 1", "level 2", "level 3", "fallback")]
    assert levels == [Fraction(21, 25), Fraction(14, 125), Fraction(28, 625), Fraction(2, 625)]
    assert sum(levels) == 1


@pytest.mark.parametrize("a, b", [(2, 3), (3, 7), (5, 7), (6, 10), (7, 5), (10, 3)])
def test_rand_a_to_b_basic_is_uniform_for_other_sizes(a, b):
    result = exact(rand_basic, a, b)
    assert result.law == uniform_target(b)
    assert result.expected_cost(f"rand{a}") == expected_calls_basic(a, b)


@pytest.mark.parametrize("a, b, levels", [(2, 3, 4), (3, 7, 3), (5, 7, 1), (5, 7, 6), (4, 11, 3)])
def test_rand_article_recycling_is_uniform_for_other_sizes(a, b, levels):
    assert exact(rand_article, a, b, levels).law == uniform_target(b)


def test_bad_die_sizes_are_rejected():
    with pytest.raises(InvalidArgument, match=r"^a \(rand_a -> rand_b: the die's sides\) must be an int >= 2, got 1$"):
        exact(rand_basic, 1, 7)
    with pytest.raises(InvalidArgument, match=r"^b \(rand_a -> rand_b: the target range\) must be an int >= 2, got 7.0$"):
        exact(rand_basic, 5, 7.0)
    with pytest.raises(InvalidArgument, match="a < b"):
        exact(rand_article, 7, 5)
    assert exact(rand_basic, np.int64(5), np.int64(7)).law == uniform_target(7)


@given(st.integers(1, 99).map(lambda k: Fraction(k, 100)) | st.fractions(min_value=Fraction(1, 1000), max_value=Fraction(999, 1000)))
def test_von_neumann_is_fair_for_every_rational_bias(p):
    result = exact(von_neumann, p)
    assert result.law == fair_coin_law()
    assert result.expected_cost("flip") == 1 / (p * (1 - p)) == expected_flips(p)


def test_von_neumann_is_fair_for_a_symbolic_bias():
    p = sympy.Symbol("p", positive=True)
    law, costs = exact_symbolic(von_neumann, p)
    assert sympy.simplify(law["H"] - sympy.Rational(1, 2)) == 0
    assert sympy.simplify(law["T"] - sympy.Rational(1, 2)) == 0
    assert sympy.simplify(costs["flip"] - 1 / (p * (1 - p))) == 0


@pytest.mark.parametrize("bad", [0, 1, Fraction(3, 2), -1, float("nan")])
def test_von_neumann_rejects_degenerate_biases(bad):
    with pytest.raises(InvalidArgument, match=r"von Neumann's coin bias p must be a (finite )?number in \(0, 1\)"):
        exact(von_neumann, bad)


@pytest.mark.parametrize("n, k", [(1, 1), (4, 1), (5, 2), (6, 3), (7, 4)])
def test_reservoir_keeps_every_k_subset_equally_likely(n, k):
    law = exact(algorithm_r, n, k).law
    assert law == subset_target(n, k)
    assert set(inclusion_probabilities(law, n).values()) == {Fraction(k, n)}


def test_reservoir_rejects_bad_sizes():
    with pytest.raises(InvalidArgument, match=r"^k \(the reservoir size, 1 <= k <= n\) must be an int in \[1, 3\], got 4$"):
        exact(algorithm_r, 3, 4)


@given(sms.laws(), st.data())
def test_rejection_sampling_outputs_p_and_accepts_with_one_over_m(p, data):
    q = data.draw(sms.laws(vocab=tuple(p), zeros=False))  # full support: an envelope exists
    M = smallest_envelope(p, q) * data.draw(st.sampled_from([1, Fraction(3, 2), 2]))
    result = exact(rejection_sampler, p, q, M)
    assert result.law == p
    assert 1 - result.attempt_restart_probability == 1 / M


def test_rejection_rejects_an_envelope_that_does_not_cover_p():
    p, q = Law({0: "3/4", 1: "1/4"}), Law({0: "1/4", 1: "3/4"})
    with pytest.raises(LawError, match="does not cover p at 0"):
        exact(rejection_sampler, p, q, 2)
    with pytest.raises(LawError, match="no envelope exists"):
        smallest_envelope(Law({0: 1, 1: 0}), Law({0: 0, 1: 1}))


@pytest.mark.parametrize(
    "program, args, target",
    [
        (rand7_article, (), uniform_target(7)),
        (von_neumann, (Fraction(1, 5),), fair_coin_law()),
        (two_token_world, (), TARGET),
        (algorithm_r, (5, 2), subset_target(5, 2)),
    ],
)
def test_sampled_runs_of_the_article_samplers_fit_the_exact_law(program, args, target):
    """Power: N = 20000 at alpha = 1e-6 detects any deviation of TV >= detectable_tv
    (0.024-0.03 for these laws) with probability 0.99; the assert checks that bound too."""
    n = 20_000
    rng = np.random.default_rng(11)
    counts = Counter(sample(program, *args, rng=rng) for _ in range(n))
    assert detectable_tv(target, n) < 0.035
    assert g_test(counts, target).p_value > 1e-6


def test_rolls_are_counted_under_the_dies_own_name():
    # a coin (rand2) making rand3 is counted as rand2 rolls, never as rand5
    result = exact(rand_basic, 2, 3)
    assert result.expected_cost("rand2") == Fraction(8, 3) and result.expected_cost("rand5") == 0
    assert exact(rand_article, 3, 7, 2).expected_cost("rand5") == 0 < exact(rand_article, 3, 7, 2).expected_cost("rand3")
    assert exact(rand_basic, 2, 3, "coin flip").expected_cost("coin flip") == Fraction(8, 3)
