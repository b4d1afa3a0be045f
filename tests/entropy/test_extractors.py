"""Coin extractors: the bits of n flips are fair and independent given their number, exactly."""

from collections import defaultdict
from fractions import Fraction

import numpy as np
import pytest
import sympy
from hypothesis import example, given, settings
from hypothesis import strategies as st

from specmath import exact, exact_symbolic
from specmath.classic.fair_coin import von_neumann
from specmath.entropy.extractors import (
    block_extractor,
    block_rate,
    elias_bits,
    elias_rate,
    fair_given_length_target,
    peres_bits,
    peres_rate,
    von_neumann_bits,
    von_neumann_rate,
)
from specmath.validation import InvalidArgument


# the exact law of n flips enumerates 2^n outcomes through the extractor (n up to 8): 25 examples take seconds
@settings(max_examples=25)
@given(
    num=st.integers(1, 19),
    n=st.integers(1, 8),
    method=st.sampled_from(["von-neumann", "peres", "elias"]),
)
@example(num=6, n=8, method="peres")  # p = 3/10, the reported case
@example(num=6, n=8, method="elias")
@example(num=10, n=7, method="peres")  # fair coin, odd n
def test_extracted_bits_are_fair_and_independent_given_their_number(num, n, method):
    law = exact(block_extractor, Fraction(num, 20), n, method).law
    assert law == fair_given_length_target(law)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_peres_at_each_depth_is_fair_given_length_for_8_flips(depth):
    law = exact(block_extractor, Fraction(3, 10), 8, "peres", depth).law
    assert law == fair_given_length_target(law)


@pytest.mark.parametrize("method,n", [("peres", 8), ("elias", 6), ("von-neumann", 6)])
def test_extracted_bits_are_fair_given_length_for_symbolic_p(method, n):
    p = sympy.Symbol("p", positive=True)
    law, _ = exact_symbolic(block_extractor, p, n, method)
    by_length = defaultdict(set)
    for bits, w in law.items():
        by_length[len(bits)].add(sympy.expand(w))
    # every string of a given length has the same probability, as a polynomial in p
    assert all(len(ws) == 1 for ws in by_length.values())
    assert sum(len(ws) for ws in by_length.values()) == len(by_length) >= 2


def test_rates_at_p_three_tenths_rank_von_neumann_peres_elias_below_entropy():
    p = Fraction(3, 10)
    vn, pe, el = (block_rate(exact(block_extractor, p, 8, m).law, 8) for m in ("von-neumann", "peres", "elias"))
    assert vn == von_neumann_rate(p) == Fraction(21, 100)
    assert pe == Fraction(4448825325, 10**10)
    assert el == elias_rate(p, 8) == Fraction(4682202525, 10**10)
    assert vn < pe < el < 0.8813  # H(0.3) = 0.88129...


def test_von_neumann_rate_is_one_over_the_expected_flips_of_the_fair_coin_program():
    p = Fraction(3, 10)
    assert 1 / exact(von_neumann, p).expected_cost("flip") == von_neumann_rate(p) == peres_rate(p, 1)


def test_peres_asymptotic_rate_increases_with_depth_toward_entropy():
    p = Fraction(3, 10)
    rates = [peres_rate(p, d) for d in range(1, 7)]
    assert rates == sorted(rates) and rates[0] == Fraction(21, 100)
    assert float(rates[-1]) < 0.8813 and peres_rate(0.3, 14) > 0.84


def test_sampled_peres_rate_on_long_blocks_matches_the_recursion():
    rng = np.random.default_rng(11)
    blocks = rng.random((40, 2048)) < 0.3
    rates = [len(peres_bits(list(b), 3)) / 2048 for b in blocks]
    # 40 blocks: the standard error of the mean rate is about 0.0012; allow 5 standard errors
    sem = np.std(rates, ddof=1) / np.sqrt(len(rates))
    assert sem < 0.003
    assert abs(np.mean(rates) - float(peres_rate(Fraction(3, 10), 3))) < 5 * sem + 2 / 2048


def test_extractors_on_hand_worked_flips():
    H, T = True, False
    assert von_neumann_bits([H, T, T, H, H, H]) == (1, 0)
    assert peres_bits([H, H, T, T]) == (1,)  # no vN bit; u = (0, 0); v = (1, 0) gives 1
    assert elias_bits([T, T, H]) == (0,)  # rank 0 of C(3, 1) = 3 = 2 + 1: one bit and elias_bits([H, H, H]) == ()


@pytest.mark.parametrize("args", [(Fraction(0), 4, "peres"), (Fraction(3, 10), 0, "peres"), (Fraction(1, 2), 4, "nope")])
def test_block_extractor_rejects_bad_input(args):
    with pytest.raises(InvalidArgument, match=r"coin bias p must be a number in \(0, 1\)|^n \(the number of flips\) must be an int >= 1|^unknown extractor 'nope'; choose from: von-neumann, peres, elias$"):
        exact(block_extractor, *args)


@pytest.mark.parametrize(
    "call",
    [lambda: peres_rate(Fraction(1, 2), -1), lambda: peres_rate(Fraction(3, 2), 2), lambda: elias_rate(0.3, 0), lambda: von_neumann_rate(-0.1)],
)
def test_rate_formulas_reject_bad_input(call):
    with pytest.raises(InvalidArgument, match=r"^(Peres' depth|a coin bias p|Elias' block length n) must be"):
        call()
