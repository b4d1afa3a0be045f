"""Goodness of fit between samples and an exact law, with the power of the test stated.

This is the only place where the project's exact laws meet statistics: a sampler (the sampled
interpreter, a torch decoder, a third-party engine) produces counts, and we ask whether they are
consistent with the exact law, and how large a deviation the test would have caught.

* ``g_test``: the likelihood-ratio statistic G = 2 sum_x O(x) ln(O(x) / E(x)), E(x) = n law(x),
  with cells of expected count < ``min_expected`` pooled (so the chi-square approximation holds),
  and p-value = P(chi2_{dof} >= G), dof = cells - 1. A count on an outcome of probability 0 is a
  certain failure (p-value 0).
* ``detectable_tv``: the power statement. Under an alternative r at total-variation distance eps
  from p, G is approximately non-central chi-square with dof degrees of freedom and
  non-centrality lambda = n sum_x (r(x) - p(x))^2 / p(x). Over all r with TV(r, p) = eps,
  lambda >= 4 n eps^2 (split the +eps and -eps masses as d ∝ p on two sets; 1/P(S) + 1/P(S^c) >= 4),
  so the test at level ``alpha`` detects *every* alternative at TV >= eps with probability >= ``power``
  once P(ncx2(dof, 4 n eps^2) > chi2_{dof}^{-1}(1 - alpha)) >= power. We return that eps (asymptotic).
* ``tv_confidence_bound``: with probability >= confidence, TV(true law, target) <= TV(empirical,
  target) + 1/2 sqrt((k - 1)/n) + sqrt(ln(1/delta) / (2 n)) (expected multinomial TV deviation plus
  McDiarmid's bound: one sample moves the empirical TV by at most 1/n).

``GTest`` is the one record of a G-test's result, wherever it runs: ``g_test`` fills the statistic,
and ``GTest.judged`` adds what an audit decides with it (its name, the level it is judged at, the power
and the TV detected at it, the cells furthest off, the measured shift). The round and tree audits keep
it as it is (``specmath.audit.power``); the engine audit adds the sampler's role
(``specmath.audit.engines.checks.Check``), the histograms of real models the TV bound and the counts
(``specmath.lm.histogram.HistogramCheck``). The default level and power are the audit's
(``specmath.settings``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass

from scipy import stats as sps
from scipy.optimize import brentq

from specmath.laws import Law, LawError, as_law
from specmath.settings import CI

__all__ = ["GTest", "g_test", "detectable_tv", "tv_confidence_bound", "empirical_tv", "pool_cells"]


@dataclass(frozen=True)
class GTest:
    """A G-test of N counts against an exact law; once ``judged``, its level and the TV it detects at a power."""

    n: int  # samples counted
    statistic: float  # G = 2 sum O ln(O / E) over the pooled cells (inf when an impossible outcome was observed)
    dof: int  # pooled cells - 1
    p_value: float  # P(chi2_dof >= G); 0 when an impossible outcome was observed
    cells: int = 0  # cells after pooling to expected counts >= min_expected
    pooled_outcomes: int = 0  # outcomes merged into pooled cells
    impossible: tuple = ()  # observed outcomes of exact probability 0
    name: str = ""  # which law was tested: "joint", "position 0", "first token", ...
    level: float | None = None  # the test rejects when p_value < level (None: not judged)
    power: float | None = None  # detectable_tv is detected with at least this probability
    detectable_tv: float | None = None  # smallest TV the test at ``level`` detects w.p. ``power`` (None: not computed)
    worst_cells: tuple = ()  # (outcome, observed, expected = n P(outcome)) furthest from expected, worst first
    measured_tv: float | None = None  # 1/2 sum |count / N - law| over the cells: the shift as measured (noise included)

    @property
    def rejects(self) -> bool:
        """p_value < level; a test not judged at a level has no verdict (ValueError)."""
        if self.level is None:
            raise ValueError(f"the G-test {self.name or 'of these counts'} has no level: judge it first (GTest.judged)")
        return self.p_value < self.level

    @property
    def passed(self) -> bool:
        """Not ``rejects``."""
        return not self.rejects

    def __repr__(self) -> str:
        # what is set: GTest(n=20000, statistic=4.98..., dof=6, p_value=0.546..., cells=7), the rest once judged
        shown = [f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self)
                 if f.name in ("n", "statistic", "dof", "p_value") or getattr(self, f.name) != f.default]
        return f"{type(self).__name__}({', '.join(shown)})"

    def judged(self, name: str, level: float, power: float | None = None, detectable_tv: float | None = None,
               **more) -> GTest:
        """This test named, at ``level``, with the TV it detects at ``power``; ``more``: worst_cells, measured_tv, impossible."""
        return dataclasses.replace(self, name=name, level=level, power=power, detectable_tv=detectable_tv, **more)


def pool_cells(law: Law, n: int, min_expected: float = 5.0) -> list[list[Hashable]]:
    """Group the support of ``law`` into cells of expected count n * P(cell) >= min_expected.

    Outcomes are taken from most to least likely; the small ones are merged into one cell, which is
    folded into the last big cell if it is still too small.
    """
    support = sorted((x for x in law if law[x] > 0), key=lambda x: -law[x])
    big = [[x] for x in support if n * law[x] >= min_expected]
    small = [x for x in support if n * law[x] < min_expected]
    if small:
        if n * float(sum(law[x] for x in small)) >= min_expected or not big:
            big.append(small)
        else:
            big[-1] = big[-1] + small
    return big


def g_test(counts: Mapping[Hashable, int], law: Law, min_expected: float = 5.0) -> GTest:
    """G-test of ``counts`` (outcome -> count) against the exact ``law``, cells pooled to min_expected."""
    law = as_law(law)
    n = int(sum(counts.values()))
    if n <= 0:
        raise LawError("g_test needs at least one sample")
    for x, c in counts.items():
        if c < 0:
            raise LawError(f"count of {x!r} is negative ({c})")
    impossible = tuple(x for x, c in counts.items() if c > 0 and law.prob(x) == 0)
    cells = pool_cells(law, n, min_expected)
    dof = len(cells) - 1
    if impossible:
        return GTest(n, math.inf, max(dof, 1), 0.0, len(cells), 0, impossible)
    if dof == 0:
        # one cell: every sample must be in it, which holds (no impossible outcome): nothing to test
        return GTest(n, 0.0, 0, 1.0, 1, sum(len(c) for c in cells if len(c) > 1))
    g = 0.0
    for cell in cells:
        observed = sum(counts.get(x, 0) for x in cell)
        expected = n * float(sum(law[x] for x in cell))
        if observed > 0:
            g += 2.0 * observed * math.log(observed / expected)
    g = max(g, 0.0)
    return GTest(n, g, dof, float(sps.chi2.sf(g, dof)), len(cells), sum(len(c) for c in cells if len(c) > 1))


def detectable_tv(law: Law, n: int, alpha: float = CI.family_level, power: float = CI.power,
                  min_expected: float = 5.0) -> float:
    """Smallest TV distance eps such that the G-test at level ``alpha`` with ``n`` samples rejects
    every alternative at TV >= eps with probability >= ``power`` (non-central chi-square
    approximation, worst case lambda = 4 n eps^2). Returns inf when the law has a single cell.
    The defaults are the audit's (``specmath.settings.CI``)."""
    law = as_law(law)
    dof = len(pool_cells(law, n, min_expected)) - 1
    if dof <= 0:
        return math.inf
    critical = sps.chi2.isf(alpha, dof)
    # find lambda with P(ncx2(dof, lambda) > critical) = power: bracket it by doubling, then Brent's
    # method on the monotone function (relative tolerance 1e-12, a dozen evaluations)
    lo, hi = 0.0, 1.0
    while sps.ncx2.sf(critical, dof, hi) < power:
        lo, hi = hi, hi * 2.0
    lam = brentq(lambda x: sps.ncx2.sf(critical, dof, x) - power, lo, hi, xtol=1e-14, rtol=1e-12)
    return math.sqrt(lam / (4.0 * n))


def empirical_tv(counts: Mapping[Hashable, int], law: Law) -> float:
    """TV(empirical law of the counts, law) as a float."""
    law = as_law(law)
    n = sum(counts.values())
    keys = set(counts) | set(law)
    return 0.5 * sum(abs(counts.get(x, 0) / n - float(law.prob(x))) for x in keys)


def tv_confidence_bound(counts: Mapping[Hashable, int], law: Law, confidence: float = 0.99) -> tuple[float, float]:
    """(TV(empirical, law), upper bound on TV(sampler's true law, law) holding with ``confidence``)."""
    law = as_law(law)
    n = sum(counts.values())
    k = len(set(counts) | {x for x in law if law[x] > 0})
    delta = 1.0 - confidence
    slack = 0.5 * math.sqrt(max(k - 1, 0) / n) + math.sqrt(math.log(1.0 / delta) / (2.0 * n))
    tv = empirical_tv(counts, law)
    return tv, min(1.0, tv + slack)
