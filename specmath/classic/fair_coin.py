"""Von Neumann's fair coin from a biased one.

Flip the p-coin twice: HT -> heads, TH -> tails, HH or TT -> start over. P(HT) = p(1 - p) =
P(TH), so the two kept outcomes are equally likely whatever p is. An attempt succeeds with
probability 2p(1 - p), so E[flips] = 2 / (2p(1 - p)) = 1 / (p(1 - p)).
The same program runs exactly (Fraction p), symbolically (sympy p) and sampled.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from specmath.laws import uniform
from specmath.program import RESTART, coin
from specmath.validation import check_fraction

__all__ = ["von_neumann", "fair_coin_law", "expected_flips", "check_bias"]


def check_bias(p: Any) -> Any:
    """p as an exact Fraction strictly inside (0, 1) (a sympy expression is passed through)."""
    if type(p).__module__.startswith("sympy"):
        return p
    return check_fraction(p, "von Neumann's coin bias p", min_value=0, max_value=1, open_min=True, open_max=True)


def von_neumann(p: Any):
    """Sampling program: a fair "H"/"T" from flips of a p-coin (True = heads)."""
    first = yield coin(check_bias(p), label="flip")
    second = yield coin(check_bias(p), label="flip")
    if first and not second:
        return "H"
    if second and not first:
        return "T"
    return RESTART


def fair_coin_law():
    """The target: {"H": 1/2, "T": 1/2}."""
    return uniform(["H", "T"])


def expected_flips(p: Any) -> Fraction:
    """Closed form 1 / (p (1 - p))."""
    p = check_bias(p)
    return 1 / (p * (1 - p))
