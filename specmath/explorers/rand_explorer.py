"""rand_a -> rand_b explorer: pick a method and the die sizes, get the exact law and expected calls.

Methods (all sampling programs of the exact core, solved exactly, loops included):

* ``basic``      rejection: k rolls (a^k >= b), keep values below m = b floor(a^k / b);
                 E[calls] = k a^k / m (50/21 for 5 -> 7);
* ``article``    the seed article's three recycling levels, then ``basic`` (needs a < b);
                 5816/2625 for 5 -> 7;
* ``recycling``  carry every leftover forever; E[calls] = sum_(k>=0) (a^k mod b) / a^k,
                 the Knuth-Yao optimum for one output at a time (1115/504 for 5 -> 7).

Every method's law equals uniform(1..b) exactly (``RandView.uniform``).

References: the seed article (rand5 -> rand7); D. Knuth, A. Yao, "The complexity of nonuniform
random number generation" (1976).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from specmath.classic.rand7 import check_die_sizes, rand_article, rand_basic, uniform_target
from specmath.entropy.rand_recycling import knuth_yao_bound, rand_recycling
from specmath.exact import exact
from specmath.laws import Law
from specmath.validation import check_choice

__all__ = ["METHODS", "RandView", "rand_view", "format_rand"]

METHODS = ("basic", "article", "recycling")


@dataclass(frozen=True)
class RandView:
    """The exact behaviour of one rand_a -> rand_b method."""

    method: str
    a: int
    b: int
    law: Law  # the exact output law
    uniform: bool  # law == uniform(1..b), as Fractions
    expected_calls: Fraction  # E[number of a-sided die rolls] per output
    optimum: Fraction  # Knuth-Yao: sum_(k>=0) (a^k mod b) / a^k, no one-at-a-time sampler does better
    restart_probability: Fraction  # probability that one attempt starts over


def rand_view(method: str = "basic", a: int = 5, b: int = 7) -> RandView:
    """Exact law and E[calls] of ``method`` in METHODS turning an a-sided die into uniform(1..b).

    ValueError for an unknown method, a < 2 or b < 2, and for ``article`` with a >= b.
    """
    a, b = check_die_sizes(a, b)
    check_choice(method, "rand_a -> rand_b method", METHODS)
    if method == "basic":
        result = exact(rand_basic, a, b, "die")
    elif method == "article":
        result = exact(rand_article, a, b, 3, "die")
    else:  # recycling
        result = exact(rand_recycling, a, b, 0, 1, "die")
    return RandView(
        method=method,
        a=a,
        b=b,
        law=result.law,
        uniform=result.law == uniform_target(b),
        expected_calls=result.expected_cost("die"),
        optimum=knuth_yao_bound(a, b),
        restart_probability=result.attempt_restart_probability,
    )


def format_rand(view: RandView) -> str:
    """A plain-text report: the law's distinct values, uniformity, E[calls] against the optimum."""
    values = sorted(set(view.law.values()))
    return "\n".join(
        [
            f"rand{view.a} -> rand{view.b}, method {view.method!r}",
            f"law: every value in 1..{view.b} has probability {', '.join(map(str, values))}; uniform exactly: {view.uniform}",
            f"E[calls] = {view.expected_calls} ≈ {float(view.expected_calls):.4f}"
            f"   (Knuth-Yao optimum {view.optimum} ≈ {float(view.optimum):.4f})",
            f"P(the first attempt ends without an output) = {view.restart_probability}",
        ]
    )
