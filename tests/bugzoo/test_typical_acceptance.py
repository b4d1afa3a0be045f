"""Typical acceptance decided exactly: ties, the entropy offset, interval bounds, and the TV it costs."""

from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specmath import strategies as sms
from specmath.bugzoo import typical_acceptance as ta
from specmath.bugzoo.typical_acceptance import (
    TypicalAcceptance,
    exceeds_typical_threshold,
    greedy_token,
    typical_generation_law,
    typical_thresholds,
    typical_tv_grid,
)
from specmath.exact import NotExactError
from specmath.laws import Law, tv_distance
from specmath.speculative import autoregressive_law
from specmath.speculative.tree import TreeShape
from specmath.speculative.tree_examples import TREE_DRAFT, TREE_TARGET
from specmath.validation import InvalidArgument

PAPER = {"entropy_offset": 0}  # H(p) without the code's + 1e-5


def test_a_tie_is_rejected_uniform_laws_tie_at_delta_one():
    # uniform on 3: exp(-H) = 1/3 exactly, so p(x) = 1/3 = 1 * exp(-H): the strict test rejects
    uniform = Law({"a": Fraction(1, 3), "b": Fraction(1, 3), "c": Fraction(1, 3)})
    assert not exceeds_typical_threshold(uniform, "a", TypicalAcceptance(1, 1, **PAPER))
    assert exceeds_typical_threshold(uniform, "a", TypicalAcceptance(1, Fraction(999999, 1000000), **PAPER))


def test_a_non_uniform_law_with_rational_exp_minus_entropy_ties_too():
    # p = (1/2, 1/8, 1/8, 1/8, 1/8): exp(-H) = 2^(-1/2) 8^(-1/2) = 1/4; p(b) = 1/8 = (1/2)(1/4)
    p = Law({"a": Fraction(1, 2), **{x: Fraction(1, 8) for x in "bcde"}})
    assert not exceeds_typical_threshold(p, "b", TypicalAcceptance(1, Fraction(1, 2), **PAPER))
    assert exceeds_typical_threshold(p, "b", TypicalAcceptance(1, Fraction(1, 2) - Fraction(1, 10**30), **PAPER))


def test_a_tie_with_epsilon_is_rejected_too():
    p = Law({"a": Fraction(1, 10), "b": Fraction(9, 10)})
    assert not exceeds_typical_threshold(p, "a", TypicalAcceptance(Fraction(1, 10), 1000, **PAPER))


def test_the_code_s_entropy_offset_moves_a_decision():
    # p = (1/2, 1/2): exp(-H) = 1/2, exp(-H_c) = 1/2 + c; delta = 1 - 10^-6 puts 1/2 between delta/2 and delta (1/2 + c)
    p = Law({"a": Fraction(1, 2), "b": Fraction(1, 2)})
    delta = 1 - Fraction(1, 10**6)
    assert exceeds_typical_threshold(p, "a", TypicalAcceptance(1, delta, **PAPER))
    assert not exceeds_typical_threshold(p, "a", TypicalAcceptance(1, delta))  # c = 1/100000, as in the code


@settings(max_examples=80, deadline=None)
@given(p=sms.laws(vocab=4), x=st.integers(0, 3), delta=st.fractions(Fraction(1, 20), 2),
       offset=st.sampled_from([Fraction(0), Fraction(1, 100000)]))
def test_exact_powers_and_interval_bounds_decide_alike(p, x, delta, offset):
    rule = TypicalAcceptance(1, delta, offset)
    px = p[x]
    if px == 0:
        return
    by_powers = ta._power_compare(px, p, rule)
    try:
        by_intervals = ta._interval_compare(px, p, rule)
    except NotExactError:
        # the intervals fail to separate only at a tie: rejected, and any larger p(x) is accepted
        assert not by_powers and ta._power_compare(px * (1 + Fraction(1, 10**40)), p, rule)
        return
    assert by_powers == by_intervals


def test_an_irrational_threshold_is_decided_like_a_100_digit_evaluation():
    # p = (1/3, 2/3): exp(-H) = (4/27)^(1/3) is irrational, so no rational delta ties
    p = Law({"a": Fraction(1, 3), "b": Fraction(2, 3)})
    mpmath.mp.dps = 100
    exp_minus_h = mpmath.cbrt(mpmath.mpf(4) / 27)
    for k in range(1, 400):
        delta = Fraction(k, 200)
        expected = mpmath.mpf(1) / 3 > mpmath.mpf(k) / 200 * exp_minus_h
        assert exceeds_typical_threshold(p, "a", TypicalAcceptance(1, delta, **PAPER)) == bool(expected)


def test_large_denominators_go_to_interval_bounds_and_a_tie_there_is_an_error(monkeypatch):
    big = Law({"a": Fraction(1, 2**20 + 1), "b": 1 - Fraction(1, 2**20 + 1)})  # D = 2^20 + 1: past the power limit
    assert not exceeds_typical_threshold(big, "a", TypicalAcceptance(1, Fraction(1, 1000), **PAPER))
    assert exceeds_typical_threshold(big, "b", TypicalAcceptance(1, 1, **PAPER))
    # a tie decided by intervals alone (the power path switched off): they never separate
    monkeypatch.setattr(ta, "_MAX_EXACT_POWER", 1)
    ta._least_accepted.cache_clear()  # each law's decision is cached; an earlier test may have decided this one by powers
    uniform = Law({"a": Fraction(1, 3), "b": Fraction(1, 3), "c": Fraction(1, 3)})
    with pytest.raises(NotExactError, match="a tie"):
        exceeds_typical_threshold(uniform, "a", TypicalAcceptance(1, 1, **PAPER))


def test_zero_probability_tokens_are_never_accepted_and_a_zero_threshold_accepts_the_rest():
    p = Law({"a": 0, "b": Fraction(1, 4), "c": Fraction(3, 4)})
    assert not exceeds_typical_threshold(p, "a", TypicalAcceptance(0, 0))
    assert exceeds_typical_threshold(p, "b", TypicalAcceptance(0, 1))
    with pytest.raises(InvalidArgument, match="delta must be >= 0"):
        TypicalAcceptance(1, -1)


def test_greedy_token_is_the_first_maximum():
    assert greedy_token(Law({"x": Fraction(1, 4), "y": Fraction(3, 8), "z": Fraction(3, 8)})) == "y"


def test_with_every_candidate_rejected_the_sampled_variant_is_plain_sampling():
    # threshold min(1, 1000 exp(-H)) = 1 > every p(x): each round emits one token y ~ p
    rule = TypicalAcceptance(1, 1000, greedy_first=False)
    law = typical_generation_law(TREE_TARGET, TREE_DRAFT, (), TreeShape((1, 1)), 3, rule)
    assert law == autoregressive_law(TREE_TARGET, (), 3)


def test_medusa_defaults_tv_and_the_grid_over_epsilon_and_delta():
    wanted = autoregressive_law(TREE_TARGET, (), 3)
    medusa = typical_generation_law(TREE_TARGET, TREE_DRAFT, (), TreeShape((2, 2), "top-k"), 3, TypicalAcceptance())
    assert len(medusa.support) == 1 and tv_distance(medusa, wanted) == Fraction(29, 32)
    grid = typical_tv_grid(TREE_TARGET, TREE_DRAFT, (), TreeShape((1, 1)), 3, [Fraction(9, 100), Fraction(3, 5)],
                           [Fraction(3, 10), Fraction(3)], greedy_first=False)
    assert grid[Fraction(9, 100), Fraction(3, 10)] == Fraction(3, 10)  # vLLM-style at Medusa's defaults
    assert grid[Fraction(3, 5), Fraction(3)] == 0  # every candidate rejected on this pair: plain sampling


def test_float_thresholds_match_the_exact_decisions_away_from_ties():
    rng = np.random.default_rng(3)
    rule = TypicalAcceptance()
    for _ in range(300):
        weights = rng.integers(0, 9, size=5)
        weights[0] += 1
        p = Law.from_weights(dict(enumerate(weights.tolist())))
        row = np.array([float(p[i]) for i in range(5)])
        threshold = typical_thresholds(row[None, :], rule)[0]
        for x in range(5):
            # float64 log/exp err by ~1e-16 relative: outside 1e-9 of the threshold both decide alike
            if abs(row[x] - threshold) > 1e-9:
                assert (row[x] > threshold) == exceeds_typical_threshold(p, x, rule)
