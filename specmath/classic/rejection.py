"""Generic rejection sampling with an envelope M * q >= p.

Propose x ~ q, accept with probability p(x) / (M q(x)), otherwise start over. One attempt returns x
with probability q(x) * p(x) / (M q(x)) = p(x) / M, so it accepts with probability 1/M and the
output law is (p(x)/M) / (1/M) = p(x). Speculative sampling replaces "start over" with one draw from
the residual law, which is why it never wastes a target forward pass.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from specmath.laws import Law, LawError, as_law, check_same_vocabulary
from specmath.program import RESTART, coin, draw
from specmath.validation import check_fraction

__all__ = ["rejection_sampler", "check_envelope", "smallest_envelope"]


def check_envelope(p: Law, q: Law, M: Any) -> Fraction:
    """M as a Fraction, after checking M * q(x) >= p(x) for every x (else LawError naming x)."""
    p, q = as_law(p, name="p"), as_law(q, name="q")
    check_same_vocabulary(p, q)
    fm = check_fraction(M, "envelope M", min_value=0, open_min=True)
    for x in p:
        if fm * q[x] < p[x]:
            raise LawError(f"envelope M = {fm} does not cover p at {x!r}: M * q = {fm * q[x]} < p = {p[x]}")
    return fm


def smallest_envelope(p: Law, q: Law) -> Fraction:
    """M* = max_x p(x) / q(x), the tightest envelope (LawError if q(x) = 0 < p(x))."""
    p, q = as_law(p, name="p"), as_law(q, name="q")
    check_same_vocabulary(p, q)
    worst = Fraction(0)
    for x in p:
        if p[x] > 0 and q[x] == 0:
            raise LawError(f"no envelope exists: q({x!r}) = 0 but p({x!r}) = {p[x]}")
        if p[x] > 0:
            worst = max(worst, p[x] / q[x])
    return worst


def rejection_sampler(p: Law, q: Law, M: Any):
    """Sampling program: x ~ q, accept with p(x) / (M q(x)), else RESTART."""
    m = check_envelope(p, q, M)
    x = yield draw(q, label="proposal")
    accepted = yield coin(p[x] / (m * q[x]), label="accept")
    return x if accepted else RESTART
