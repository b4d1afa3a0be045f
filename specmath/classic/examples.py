"""Example laws for the classic samplers' proofs and figures.

Rejection sampling draws x ~ q, accepts with probability p(x) / (M q(x)) and otherwise starts over;
it outputs p whenever p <= M q. The example target has a zero (``e``) and the proposal is uniform.
"""

from __future__ import annotations

from fractions import Fraction

from specmath.laws import Law, uniform

__all__ = ["REJECTION_TARGET", "REJECTION_PROPOSAL"]

#: target p of the rejection example (the same p as the five-token speculative-step example)
REJECTION_TARGET = Law({"a": Fraction(1, 2), "b": Fraction(1, 4), "c": Fraction(1, 8), "d": Fraction(1, 8), "e": 0}, name="p")
#: uniform proposal q over the same five outcomes
REJECTION_PROPOSAL = Law(dict(uniform("abcde")), name="q")
