"""Reservoir sampling, Algorithm R (Vitter 1985): k items uniformly from a stream of n.

Keep the first k items; for the i-th item (i = k+1..n) draw j uniform on 1..i and, if j <= k,
let item i replace slot j. By induction every item seen so far is in the reservoir with probability
k/i, and every k-subset of the first n items is equally likely: 1 / C(n, k).
"""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations
from math import comb

from specmath.laws import Law, as_law, uniform
from specmath.program import die
from specmath.validation import check_integer

__all__ = ["algorithm_r", "subset_target", "inclusion_probabilities", "check_reservoir_sizes"]


def check_reservoir_sizes(n: int, k: int) -> tuple[int, int]:
    """(n, k) as ints when 1 <= k <= n (the stream length and the reservoir size); InvalidArgument otherwise."""
    n = check_integer(n, "n (the stream length)", min_value=1)
    return n, check_integer(k, "k (the reservoir size, 1 <= k <= n)", min_value=1, max_value=n)


def algorithm_r(n: int, k: int):
    """Sampling program: the reservoir after streaming items 1..n, as a sorted tuple."""
    n, k = check_reservoir_sizes(n, k)
    reservoir = list(range(1, k + 1))
    for i in range(k + 1, n + 1):
        j = yield die(i, label="random index")
        if j <= k:  # keep item i with probability k / i, evicting a uniform slot
            reservoir[j - 1] = i
    return tuple(sorted(reservoir))


def subset_target(n: int, k: int) -> Law:
    """Every k-subset of 1..n with probability 1 / C(n, k)."""
    n, k = check_reservoir_sizes(n, k)
    return uniform(combinations(range(1, n + 1), k))


def inclusion_probabilities(law: Law, n: int) -> dict[int, Fraction]:
    """item -> P(item is in the sample), from a law over subsets (expected k / n each)."""
    law = as_law(law)
    return {i: law.P(lambda s, i=i: i in s) for i in range(1, n + 1)}


def expected_inclusion(n: int, k: int) -> Fraction:
    """k / n."""
    n, k = check_reservoir_sizes(n, k)
    return Fraction(k, n) if comb(n, k) else Fraction(0)
