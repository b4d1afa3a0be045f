"""``g_test`` and ``detectable_tv`` against an independent reference (scipy), and the pooling they share.

Tolerances: scipy's ``power_divergence`` computes the same statistic G = 2 sum O ln(O / E) by other code
(its own summation order and log of the ratio), so the two floats agree to a few ulps of G, not exactly:
relative 1e-9 is far above that and far below any change a bug makes (a factor, a degree of freedom).
"""

from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats as sps

from specmath.laws import Law
from specmath.stats import detectable_tv, g_test, pool_cells

SKEWED = Law.from_weights({i: w for i, w in enumerate([30, 20, 15, 12, 10, 8, 5])})
#: a law with a long tail of rare outcomes, so that pooling merges them at small n
TAILED = Law.from_weights({i: w for i, w in enumerate([400, 300, 200, 50, 20, 10, 8, 6, 4, 2])})
#: one rare outcome: at n = 100 it expects 2 alone, too few for a cell, so it joins the last big cell
ONE_RARE = Law({"a": "9/10", "b": "2/25", "c": "1/50"})


def _counts(law: Law, n: int, seed: int, shift: np.ndarray | None = None) -> Counter:
    outcomes = list(law)
    probs = np.array([float(law[x]) for x in outcomes])
    if shift is not None:
        probs = probs + shift
    draws = np.random.default_rng(seed).multinomial(n, probs / probs.sum())
    return Counter({x: int(c) for x, c in zip(outcomes, draws, strict=True) if c})


def _pooled(counts: Counter, law: Law, n: int) -> tuple[np.ndarray, np.ndarray]:
    cells = pool_cells(law, n)
    observed = np.array([sum(counts.get(x, 0) for x in cell) for cell in cells], dtype=float)
    expected = np.array([n * float(sum(law[x] for x in cell)) for cell in cells])
    return observed, expected


@pytest.mark.parametrize("law, n, seed", [(SKEWED, 2000, 0), (SKEWED, 300, 1), (TAILED, 120, 2), (TAILED, 5000, 3)])
def test_g_test_statistic_dof_and_p_value_equal_scipys_power_divergence(law, n, seed):
    counts = _counts(law, n, seed)
    ours = g_test(counts, law)
    observed, expected = _pooled(counts, law, n)
    reference = sps.power_divergence(observed, expected, lambda_="log-likelihood")  # dof = cells - 1 (ddof = 0)
    assert ours.dof == len(observed) - 1 == ours.cells - 1
    assert ours.statistic == pytest.approx(reference.statistic, rel=1e-9)
    assert ours.p_value == pytest.approx(reference.pvalue, rel=1e-9)
    assert ours.p_value == pytest.approx(sps.chi2.sf(reference.statistic, len(observed) - 1), rel=1e-9)


def test_detectable_tv_has_the_stated_power_under_scipys_noncentral_chi_square():
    """Under an alternative r, G is approximately non-central chi-square with dof = cells - 1 and
    lambda(r) = n sum_x (r(x) - p(x))^2 / p(x). Write d = r - p, S = {d > 0}: the positive part of d
    sums to eps = TV(r, p) and the negative part to -eps, so by Cauchy-Schwarz on each side,
    (sum_S d)^2 <= (sum_S d^2 / p)(sum_S p), i.e. sum_S d^2 / p >= eps^2 / P(S), and the same on S^c:

        lambda(r) >= n eps^2 (1 / P(S) + 1 / (1 - P(S))) >= 4 n eps^2,

    with equality when d is proportional to p on each side and P(S) = 1/2. The test's power grows with
    lambda, so every alternative at TV >= eps is rejected with probability >= P(ncx2(dof, 4 n eps^2) >
    chi2_dof^-1(1 - level)): detectable_tv must be the eps where that is the stated power.
    """
    for law in (SKEWED, TAILED, Law({0: "1/2", 1: "1/2"})):
        for n in (145, 4000):
            for level, power in ((1e-6, 0.99), (1e-3, 0.9)):
                eps = detectable_tv(law, n, level, power)
                dof = len(pool_cells(law, n)) - 1
                critical = sps.chi2.isf(level, dof)
                assert sps.ncx2.sf(critical, dof, 4 * n * eps**2) == pytest.approx(power, abs=1e-7), (law, n, level)


def test_no_alternative_at_tv_eps_has_lambda_below_four_n_eps_squared():
    # the worst case of the docstring above, checked on random alternatives and attained by the half split
    rng = np.random.default_rng(5)
    p = np.array([float(SKEWED[x]) for x in SKEWED])
    n = 1000
    for _ in range(500):
        r = rng.dirichlet(np.ones(len(p)))
        eps = 0.5 * np.abs(r - p).sum()
        assert n * ((r - p) ** 2 / p).sum() >= 4 * n * eps**2 * (1 - 1e-12)
    law = Law({0: "1/4", 1: "1/4", 2: "1/4", 3: "1/4"})
    p = np.full(4, 0.25)
    eps = 0.1
    r = p * np.array([1 + eps / 0.5] * 2 + [1 - eps / 0.5] * 2)  # +eps on a half of the mass, -eps on the other
    assert 0.5 * np.abs(r - p).sum() == pytest.approx(eps) and sum(law.values()) == 1
    assert n * ((r - p) ** 2 / p).sum() == pytest.approx(4 * n * eps**2, rel=1e-12)


def test_the_g_test_detects_the_worst_case_alternative_at_its_detectable_tv_at_the_stated_n():
    """Power, sampled at the n the detectable TV is computed for: n = 400 draws from the half-split
    alternative at TV eps = detectable_tv(uniform over 4, 400, level 0.01, power 0.9). 2000 repetitions:
    the rejection rate's standard error is sqrt(0.9 * 0.1 / 2000) = 0.0067, so a rate below 0.87 (4.5
    standard errors under 0.9) fails, while a detectable TV overstated twofold (lambda a quarter of the
    worst case) rejects in about a fifth of them (0.21 with these seeds)."""
    law = Law({0: "1/4", 1: "1/4", 2: "1/4", 3: "1/4"})
    n, level = 400, 0.01
    eps = detectable_tv(law, n, level, 0.9)
    shift = np.array([eps / 2, eps / 2, -eps / 2, -eps / 2])  # +eps on half the mass, -eps on the other half
    rejected = sum(g_test(_counts(law, n, seed, shift), law).p_value < level for seed in range(2000))
    assert rejected / 2000 >= 0.87, (rejected, eps)


def test_a_count_on_an_impossible_outcome_fails_the_g_test_for_certain():
    law = Law({"a": "1/2", "b": "1/2", "never": 0})
    fitting = Counter({"a": 5000, "b": 5000})
    # exact on every CPU, one computation path: counts equal to n p(x) give a statistic of exactly 0 (log 1 = 0),
    # whose survival function is exactly 1; an impossible outcome is decided before any float (p = 0, G = inf)
    assert g_test(fitting, law).p_value == 1.0
    result = g_test(fitting + Counter({"never": 1}), law)
    assert result.p_value == 0.0 and result.statistic == float("inf") and result.impossible == ("never",)
    assert g_test(Counter({"a": 10, "unlisted": 1}), law).impossible == ("unlisted",)


@pytest.mark.parametrize("law", [SKEWED, TAILED, ONE_RARE], ids=["skewed", "tailed", "one-rare"])
@pytest.mark.parametrize("n", [3, 20, 60, 100, 120, 1000, 100_000])
def test_pooled_cells_partition_the_support_and_each_expects_at_least_five(law, n):
    cells = pool_cells(law, n)
    flat = [x for cell in cells for x in cell]
    assert sorted(flat) == sorted(law.support) and len(flat) == len(set(flat))
    expected = [n * sum((law[x] for x in cell), Fraction(0)) for cell in cells]
    if len(cells) > 1:
        assert min(expected) >= 5, (n, expected)
    # an outcome expected >= 5 times on its own is never merged with another such outcome
    assert all(sum(n * law[x] >= 5 for x in cell) <= 1 for cell in cells)
    if law is ONE_RARE and n == 100:
        assert cells == [["a"], ["b", "c"]]
