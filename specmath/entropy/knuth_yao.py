"""Knuth-Yao: sample any rational law from a fair a-sided die (a = 2: a fair coin), optimally.

The discrete distribution generating (DDG) tree of a law p over outcomes x_1..x_n in base a has,
at depth k, one leaf labelled x_i for every a-ary digit of p(x_i) in position k:
p(x_i) = sum_k digit_k(p(x_i)) a^(-k). Walking down the tree with one die roll per level reaches a
leaf labelled x_i with probability exactly p(x_i).

The walk needs no tree in memory. Keep d, the index of the current internal node among the
I_k internal nodes of depth k, and the fractional parts f_i = {a^k p(x_i)} (so I_k = sum_i f_i).
One roll r in 0..a-1 makes d' = a d + r, uniform on the a I_k children; the first
L = sum_i floor(a f_i) children are leaves (floor(a f_i) of them labelled x_i), the rest are the
I_(k+1) = a I_k - L internal nodes of depth k+1. So d is a *uniform leftover*, recycled level
after level: the same idea as rand7's recycling (``specmath.entropy.rand_recycling``), for any law.

Cost (Knuth & Yao 1976). P(T > k) = I_k / a^k, so E[T] = sum_(k>=0) sum_i {a^k p_i} / a^k.
Every DDG tree for p has P(T > k) >= that (the leaves of depth <= k labelled x_i carry a multiple
of a^(-k) not above p_i), so this tree is optimal, and for a coin (a = 2)
H(p) <= E[T] < H(p) + 2 bits. The fractional parts are eventually periodic (p is rational), so the
walk is a finite Markov chain: the exact interpreter solves it, and ``optimal_expected_draws``
sums the series exactly by finding the period.

References: D. Knuth, A. Yao, "The complexity of nonuniform random number generation" (1976);
F. Saad et al., "The Fast Loaded Dice Roller" (AISTATS 2020), section 2.
"""

from __future__ import annotations

import math
from fractions import Fraction
from math import floor

from specmath.laws import Law, as_law
from specmath.program import Recur, die
from specmath.validation import check_integer, check_real

__all__ = ["knuth_yao", "knuth_yao_step", "optimal_expected_draws", "entropy", "check_base", "die_label"]


def check_base(a: int) -> int:
    """The die size a as an int >= 2 (a = 2 is a coin); InvalidArgument otherwise."""
    return check_integer(a, "Knuth-Yao's die size a (a = 2 is a coin)", min_value=2)


def die_label(a: int) -> str:
    """The cost label of one draw: "flip" for a coin, "rand5" for a 5-sided die, ..."""
    return "flip" if a == 2 else f"rand{a}"


def knuth_yao(law: Law, a: int = 2, label: str | None = None):
    """Sampling program: one outcome of ``law`` from fair a-sided dice, by the DDG-tree walk.

    Exact law == ``law``; expected draws = ``optimal_expected_draws(law, a)``. An outcome of
    probability 1 is returned with no draw at all (its tree is a single leaf).
    """
    law = as_law(law)
    a = check_base(a)
    label = label or die_label(a)
    support = [(x, w) for x, w in law.items() if w > 0]
    if len(support) == 1:
        return support[0][0]
    outcomes = tuple(x for x, _ in support)
    fracs = tuple(w for _, w in support)  # depth 0: f_i = p_i, I_0 = 1 internal node (the root)
    return (yield from knuth_yao_step(outcomes, a, fracs, 0, label))


def knuth_yao_step(outcomes: tuple, a: int, fracs: tuple, d: int, label: str):
    """One level of the walk: d is uniform on 0..I-1, I = sum(fracs) internal nodes."""
    r = yield die(a, label=label)
    # a d + r is uniform on the a I children of the current level
    d = a * d + (r - 1)
    next_fracs = []
    for x, f in zip(outcomes, fracs, strict=True):
        # floor(a f_i) = the next a-ary digit of p_i = leaves labelled x_i at this depth
        digit = floor(a * f)
        if d < digit:
            return x
        d -= digit
        next_fracs.append(a * f - digit)
    return Recur(knuth_yao_step, outcomes, a, tuple(next_fracs), d, label)


def optimal_expected_draws(law: Law, a: int = 2) -> Fraction:
    """E[T] = sum_(k>=0) sum_i {a^k p_i} / a^k, the least expected draws of any DDG tree for p.

    Summed exactly: the vector of fractional parts is eventually periodic with some pre-period mu
    and period lam, so E = S_pre + S_cycle / (1 - a^(-lam)).
    """
    law = as_law(law)
    a = check_base(a)
    fracs = tuple(w - floor(w) for w in law.values() if w > 0)
    seen: dict[tuple, int] = {}
    terms: list[Fraction] = []  # terms[k] = I_k / a^k = P(T > k)
    scale = Fraction(1)
    k = 0
    while fracs not in seen:
        seen[fracs] = k
        terms.append(sum(fracs, Fraction(0)) * scale)
        fracs = tuple(a * f - floor(a * f) for f in fracs)
        scale /= a
        k += 1
    mu = seen[fracs]
    lam = k - mu
    cycle = sum(terms[mu:], Fraction(0))
    return sum(terms[:mu], Fraction(0)) + cycle / (1 - Fraction(1, a**lam))


def entropy(law: Law, base: float = 2) -> float:
    """H(p) = -sum_x p(x) log_base p(x) (a float: the entropy of a rational law is irrational)."""
    base = check_real(base, "the entropy's logarithm base", min_value=1, open_min=True)
    return 0.0 - math.fsum(float(w) * math.log(float(w), base) for w in as_law(law).values() if w > 0)
