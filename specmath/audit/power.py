"""Goodness-of-fit tests of an audited sampler's rounds, with their power stated, and the looks schedule.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)); the *significance level* of a test is written ``level`` here so as
not to clash with alpha.

For one case the emitted tuples are counted and tested against the exact round law (``joint``) and
against its gamma + 1 per-position marginals (``position i``: the i-th emitted token, or END): the
per-position tests have few cells, so they are the most powerful against a wrong row at one
position; the joint test sees correlations between positions (one uniform shared by all positions).
Each is ``specmath.stats.g_test`` (cells pooled to expected count >= 5; any count on an outcome of
exact probability 0 is a certain failure, p-value 0). Position gamma is named ``position gamma
(bonus)``: a token there is always the bonus, drawn from p after all gamma drafts were accepted.

A rejecting test keeps its *worst cells*: the outcomes whose observed count is furthest from the
expected count n P(x) in standard deviations, (observed - expected) / sqrt(expected), an outcome
of probability 0 that was observed first; so a failure shows where the sampler's law is off.

Levels (Bonferroni): the whole audit may wrongly fail a correct sampler with probability at most
``family_level`` (``specmath.settings.AuditSettings``; 1e-6 in every profile): each of the T tests at
each of the L looks runs at level = (family_level - s) / (T L), s the float rounding slack set aside
(``specmath.audit.rounds.runner.test_level``). Power: ``specmath.stats.detectable_tv``
gives, for each test, the smallest TV distance eps such that every sampler whose law is at TV >= eps
from the exact law is rejected with probability >= ``power`` (0.99) at the final N (non-central
chi-square, worst case lambda = 4 N eps^2). Each test is a ``specmath.stats.GTest``; ``json_of`` is
its JSON in the audit report.

Sequential mode looks at N/16, N/8, N/4, N/2, N (``looks``) and stops a case at the first look
that rejects: a clear failure costs a sixteenth of the samples, a pass costs the full N.

Reference: Wald, "Sequential Analysis", 1947 (group sequential looks with alpha spent per look).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from specmath.laws import Law
from specmath.stats import GTest, detectable_tv, g_test
from specmath.validation import check_integer

__all__ = ["json_of", "looks", "run_tests", "worst_cells", "position_name", "END", "ExpectedLaws", "SEQUENTIAL_LOOKS"]

#: marker of "no token at this position" in the per-position laws
END = -1


@dataclass(frozen=True)
class ExpectedLaws:
    """The exact law of the emitted tuple and its per-position marginals (positions 0..gamma)."""

    joint: Law
    positions: tuple[Law, ...]


SEQUENTIAL_LOOKS = 5


def json_of(test: GTest) -> dict:
    """One test of a case as the audit report writes it: name, N, G, dof, p-value, level, detectable TV
    (null before the final look), impossible outcomes and worst cells (as reprs), and whether it rejects."""
    return {"name": test.name, "n": test.n, "statistic": test.statistic, "dof": test.dof, "p_value": test.p_value,
            "level": test.level, "detectable_tv": test.detectable_tv, "impossible": [repr(x) for x in test.impossible],
            "worst_cells": [{"outcome": repr(x), "observed": o, "expected": e} for x, o, e in test.worst_cells],
            "rejects": test.rejects}


def looks(n: int, sequential: bool) -> list[int]:
    """Sample sizes at which the tests run: [n], or n/16, n/8, n/4, n/2, n in sequential mode."""
    n = check_integer(n, "n (rounds per case)", min_value=1)
    if not sequential:
        return [n]
    sizes = [max(1, n >> (SEQUENTIAL_LOOKS - 1 - i)) for i in range(SEQUENTIAL_LOOKS)]
    return sorted(set(sizes))


def position_counts(counts: Counter, i: int) -> Counter:
    """Counts of the i-th emitted token (END when the tuple is shorter)."""
    out: Counter = Counter()
    for sequence, c in counts.items():
        out[sequence[i] if len(sequence) > i else END] += c
    return out


def worst_cells(observed: Counter, law, n: int, shown: int = 3) -> tuple:
    """The ``shown`` outcomes furthest from their expected count: (outcome, observed, expected = n P(x)),
    by |observed - expected| / sqrt(expected) (an observed outcome of probability 0 first)."""
    def distance(x) -> float:
        expected = n * float(law.prob(x))
        return math.inf if expected == 0 else abs(observed.get(x, 0) - expected) / math.sqrt(expected)

    outcomes = set(observed) | {x for x in law if law[x] > 0}
    worst = sorted(outcomes, key=lambda x: (-distance(x), repr(x)))[:shown]
    return tuple((x, int(observed.get(x, 0)), n * float(law.prob(x))) for x in worst)


def position_name(i: int, gamma: int) -> str:
    """"position i", and "position gamma (bonus)" for the position only a bonus token reaches."""
    return f"position {i} (bonus)" if i == gamma else f"position {i}"


def run_tests(expected: ExpectedLaws, counts: Counter, level: float, power: float, final: bool,
              cache: dict | None = None) -> list[GTest]:
    """G-tests of the joint law and each per-position marginal; detectable TV at ``power`` when ``final``.

    ``cache`` memoises detectable TV by (law, n, level, power): it depends on nothing else.
    """
    cache = {} if cache is None else cache
    n = sum(counts.values())
    laws = [("joint", expected.joint, counts)]
    gamma = len(expected.positions) - 1
    laws += [(position_name(i, gamma), law, position_counts(counts, i)) for i, law in enumerate(expected.positions)]
    results = []
    for name, law, observed in laws:
        gof = g_test(observed, law)
        eps = None
        if final:
            key = ("detectable", law, n, level, power)
            if key not in cache:
                cache[key] = detectable_tv(law, n, alpha=level, power=power)
            eps = cache[key]
        worst = worst_cells(observed, law, n) if gof.p_value < level else ()
        # the first few impossible outcomes are enough to name the bug
        results.append(gof.judged(name, level, power, eps, worst_cells=worst, impossible=gof.impossible[:5]))
    return results


def tests_per_case(gamma: int) -> int:
    """joint + gamma + 1 positions."""
    return gamma + 2
