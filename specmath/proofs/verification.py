"""A verification: the exact law a sampler induces, its target, and the verdict (TV == 0).

``specmath verify NAME`` prints ``Verification.report()`` and ``--json`` prints ``to_json()``.
The named verifications live in the track modules of ``specmath.proofs``.

A verification whose sampler (or program, or target) raises has no verdict: it is a
``VerificationError`` naming the exception, never "not lossless" (``specmath verify`` exits 2 for it,
1 for a law that differs from its target).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from specmath.laws import Law, difference_table, tv_distance

__all__ = ["Verification", "VerificationError", "verification_from", "fraction_text"]


@dataclass
class Verification:
    """The exact law a sampler induces, its target, and the verdict (lossless iff TV == 0)."""

    name: str
    description: str
    law: Law
    target: Law
    expected_cost: Fraction | None = None
    cost_label: str | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def tv(self) -> Fraction:
        """TV(law, target) = 1/2 sum_x |law(x) - target(x)|."""
        return tv_distance(self.law, self.target)

    @property
    def lossless(self) -> bool:
        """True iff the law equals the target exactly (Fraction ==, no tolerance)."""
        return self.law == self.target

    def to_json(self) -> dict:
        """{name, law, target, tv, lossless[, expected_cost]} with "num/den" strings."""
        out = {
            "name": self.name,
            "law": {str(x): fraction_text(w) for x, w in self.law.items()},
            "target": {str(x): fraction_text(w) for x, w in self.target.items()},
            "tv": fraction_text(self.tv),
            "lossless": self.lossless,
        }
        if self.expected_cost is not None:
            out["expected_cost"] = fraction_text(self.expected_cost)
            out["cost_label"] = self.cost_label
        if self.extras:
            out["extras"] = {k: _jsonable(v) for k, v in self.extras.items()}
        return out

    def report(self) -> str:
        """A human-readable table: outcome, law, target, difference; then TV and the verdict."""
        lines = [f"{self.name}: {self.description}"]
        rows = difference_table(self.law, self.target)
        width = max([len(str(r[0])) for r in rows] + [7])
        lines.append(f"  {'outcome':<{width}}  {'law':>14}  {'target':>14}  {'law - target':>14}")
        for x, a, t, d in rows[:40]:
            lines.append(f"  {str(x):<{width}}  {fraction_text(a):>14}  {fraction_text(t):>14}  {fraction_text(d):>14}")
        if len(rows) > 40:
            lines.append(f"  ... {len(rows) - 40} more outcomes")
        if self.expected_cost is not None:
            lines.append(f"  expected {self.cost_label}: {fraction_text(self.expected_cost)} ~ {float(self.expected_cost):.6f}")
        for key, value in self.extras.items():
            lines.append(f"  {key}: {_text(value)}")
        lines.append(f"  TV distance: {fraction_text(self.tv)}")
        lines.append(f"  verdict: {'LOSSLESS (law == target exactly)' if self.lossless else 'NOT LOSSLESS'}")
        return "\n".join(lines)


@dataclass(frozen=True)
class VerificationError:
    """A verification that raised: no law, no verdict; the exception it raised, named."""

    name: str
    exception: BaseException

    #: no verdict: neither lossless nor lossy
    lossless = None

    @property
    def error(self) -> str:
        """``ExceptionType: message``."""
        return f"{type(self.exception).__name__}: {self.exception}"

    def to_json(self) -> dict:
        """{name, error, lossless: null}."""
        return {"name": self.name, "error": self.error, "lossless": None}

    def report(self) -> str:
        """One line: ``name: ERROR ExceptionType: message (raised, so no verdict)``."""
        return f"{self.name}: ERROR {self.error} (the verification raised, so there is no verdict)"


def fraction_text(x: Fraction) -> str:
    """"num/den" (always with a denominator, so "1/1" for one)."""
    x = Fraction(x)
    return f"{x.numerator}/{x.denominator}"


def _text(v: Any) -> str:
    if isinstance(v, Fraction):
        return f"{fraction_text(v)} ~ {float(v):.6f}"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_text(w)}" for k, w in v.items()) + "}"
    return str(v)


def _jsonable(v: Any) -> Any:
    if isinstance(v, Fraction):
        return fraction_text(v)
    if isinstance(v, dict):
        return {str(k): _jsonable(w) for k, w in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(w) for w in v]
    return v


def verification_from(name: str, description: str, result, target: Law, cost_label: str | None = None, **extras) -> Verification:
    """Build a Verification from an ``ExactResult`` and its target law."""
    cost = result.expected_cost(cost_label) if cost_label else None
    return Verification(name, description, result.law, target, cost, cost_label, dict(extras))
