"""Example laws for the entropy-track proofs.

Notation: p = target law, q = draft law.
"""

from __future__ import annotations

from fractions import Fraction

from specmath.laws import Law

__all__ = ["RESIDUAL_P", "RESIDUAL_Q", "A_RES_WEIGHTS", "A_RES_K"]

#: the non-degenerate residual example: norm(max(0, p - q)) = {a: 16/21, c: 5/21}
RESIDUAL_P = Law({"a": Fraction(1, 2), "b": Fraction(1, 4), "c": Fraction(1, 8), "d": Fraction(1, 8)}, name="p")
RESIDUAL_Q = Law({"a": Fraction(1, 10), "b": Fraction(1, 2), "c": 0, "d": Fraction(2, 5)}, name="q")
#: A-Res example weights and reservoir size
A_RES_WEIGHTS, A_RES_K = {"a": 1, "b": 2, "c": 3}, 2
