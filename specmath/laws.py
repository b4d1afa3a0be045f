"""Finite probability laws with exact rational weights.

A law is a read-only mapping ``outcome -> Fraction`` whose weights are non-negative and sum to
exactly 1 (Norvig's "a distribution is just {outcome: weight}"), so ``dict(law)`` is its table.
Outcomes are any hashable values: short strings ("A", "B") in toy worlds, ints for real tokens.

Entries of weight 0 may be listed: they record the *vocabulary* a law is defined over (a target
law p over {A, B} with p(B) = 0 still knows that B exists). Equality of laws is equality as
measures: an outcome that is absent counts as weight 0, so ``Law({"A": 1}) == Law({"A": 1, "B": 0})``.

Floats are accepted only by converting them *exactly* with ``Fraction(x)``: 0.7 becomes
3152519739159347/4503599627370496, not 7/10. Pass strings ("0.7") or Fractions for decimal values.

Notation used throughout specmath: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)) (Leviathan et al., 2023).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from fractions import Fraction
from numbers import Rational
from typing import Any

__all__ = [
    "LawError",
    "Law",
    "to_fraction",
    "uniform",
    "point",
    "tv_distance",
    "difference_table",
    "check_same_vocabulary",
]


class LawError(ValueError):
    """A law (or a weight inside one) is invalid; the message names the offending input."""


def to_fraction(value: Any, *, what: str = "weight") -> Fraction:
    """Convert ``value`` to a Fraction exactly, rejecting NaN, infinities and non-numbers.

    ints, Fractions and other Rationals convert losslessly; a float converts to the binary
    fraction it really is (``Fraction(0.1) != Fraction(1, 10)``); a string such as "0.7" or
    "7/10" is parsed as the decimal/rational it spells.
    """
    if isinstance(value, bool):
        raise LawError(f"{what} {value!r} is a bool, not a number")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int) and type(value) is int:
        return Fraction(value)
    if hasattr(value, "dtype"):  # numpy scalars: exactly via Python int / float
        kind = getattr(value.dtype, "kind", "")
        if kind in "iu":
            return Fraction(int(value))
        if kind == "f":
            return to_fraction(float(value), what=what)
        if kind == "b":
            raise LawError(f"{what} {value!r} is a bool, not a number")
    if isinstance(value, Rational):
        return Fraction(int(value.numerator), int(value.denominator))
    if isinstance(value, float):
        if math.isnan(value):
            raise LawError(f"{what} is NaN")
        if math.isinf(value):
            raise LawError(f"{what} is infinite ({value})")
        return Fraction(value)
    if isinstance(value, str):
        try:
            return Fraction(value)
        except (ValueError, ZeroDivisionError) as exc:
            raise LawError(f"{what} {value!r} is not a rational number") from exc
    raise LawError(f"{what} {value!r} of type {type(value).__name__} is not a number")


class Law(Mapping):
    """A finite probability law: a validated, immutable mapping outcome -> Fraction.

    ``Law(table)`` requires the weights to sum to exactly 1; ``Law.from_weights(weights)``
    normalises non-negative weights w into w(x) / sum_y w(y).
    """

    __slots__ = ("_table", "_hash")

    def __init__(self, table: Mapping[Hashable, Any] | Iterable[tuple[Hashable, Any]], *, name: str = "law"):
        items = table.items() if isinstance(table, Mapping) else table
        converted: dict[Hashable, Fraction] = {}
        for outcome, weight in items:
            w = to_fraction(weight, what=f"{name}[{outcome!r}]")
            if w < 0:
                raise LawError(f"{name}[{outcome!r}] = {w} is negative")
            if outcome in converted:
                raise LawError(f"{name}: outcome {outcome!r} is listed twice")
            converted[outcome] = w
        if not converted:
            raise LawError(f"{name} is empty: a law needs at least one outcome")
        total = sum(converted.values(), Fraction(0))
        if total != 1:
            if total == 0:
                raise LawError(f"{name} has all-zero weights: no outcome is possible")
            raise LawError(f"{name} is not normalised: its weights sum to {total}, not 1")
        self._table = converted
        self._hash: int | None = None

    # -- construction --------------------------------------------------------------------------
    @classmethod
    def from_weights(cls, weights: Mapping[Hashable, Any], *, name: str = "weights") -> Law:
        """Normalise non-negative weights: law(x) = w(x) / sum_y w(y).

        Raises LawError for a negative, NaN or infinite weight, or when every weight is 0.
        """
        converted = {}
        for outcome, weight in weights.items():
            w = to_fraction(weight, what=f"{name}[{outcome!r}]")
            if w < 0:
                raise LawError(f"{name}[{outcome!r}] = {w} is negative")
            converted[outcome] = w
        if not converted:
            raise LawError(f"{name} is empty: a law needs at least one outcome")
        total = sum(converted.values(), Fraction(0))
        if total == 0:
            raise LawError(f"{name} has all-zero weights: there is nothing to normalise")
        return cls({x: w / total for x, w in converted.items()}, name=name)

    # -- Mapping protocol ---------------------------------------------------------------------
    def __getitem__(self, outcome: Hashable) -> Fraction:
        return self._table[outcome]

    def __iter__(self) -> Iterator[Hashable]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)

    def prob(self, outcome: Hashable) -> Fraction:
        """P(outcome), 0 for an outcome the law does not list."""
        return self._table.get(outcome, Fraction(0))

    def P(self, event: Callable[[Hashable], bool]) -> Fraction:
        """P(event) = sum of law(x) over the outcomes x where event(x) is true."""
        return sum((w for x, w in self._table.items() if event(x)), Fraction(0))

    @property
    def support(self) -> frozenset:
        """The outcomes of positive probability."""
        return frozenset(x for x, w in self._table.items() if w > 0)

    @property
    def vocabulary(self) -> frozenset:
        """Every listed outcome, zero-weight entries included."""
        return frozenset(self._table)

    # -- equality as measures -----------------------------------------------------------------
    def _positive_items(self) -> frozenset:
        return frozenset((x, w) for x, w in self._table.items() if w > 0)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Law):
            return self._positive_items() == other._positive_items()
        if isinstance(other, Mapping):
            try:
                return self == Law(other)
            except LawError:
                return False
        return NotImplemented

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self._positive_items())
        return self._hash

    def __repr__(self) -> str:
        body = ", ".join(f"{x!r}: {w}" for x, w in self._table.items())
        return f"Law({{{body}}})"

    # -- transformations ----------------------------------------------------------------------
    def map(self, f: Callable[[Hashable], Hashable]) -> Law:
        """Push-forward: the law of f(X) for X ~ self."""
        out: dict[Hashable, Fraction] = {}
        for x, w in self._table.items():
            y = f(x)
            out[y] = out.get(y, Fraction(0)) + w
        return Law(out)

    def condition(self, event: Callable[[Hashable], bool]) -> Law:
        """The law of X given event(X): law(x) / P(event) on the event."""
        mass = self.P(event)
        if mass == 0:
            raise LawError("cannot condition on an event of probability 0")
        return Law({x: w / mass for x, w in self._table.items() if event(x)})

    def expectation(self, f: Callable[[Hashable], Any] = lambda x: x) -> Fraction:
        """E[f(X)] = sum_x law(x) f(x), exactly."""
        return sum((w * Fraction(f(x)) for x, w in self._table.items()), Fraction(0))

    def floats(self) -> dict:
        """The table with float weights, for plotting only."""
        return {x: float(w) for x, w in self._table.items()}

    def sorted_outcomes(self) -> list:
        """Outcomes in a stable order (sorted when comparable, else insertion order)."""
        try:
            return sorted(self._table)
        except TypeError:
            return list(self._table)


def uniform(outcomes: Iterable[Hashable]) -> Law:
    """The uniform law on a finite non-empty set of outcomes: 1/n each."""
    outcomes = list(outcomes)
    if not outcomes:
        raise LawError("uniform law over an empty set of outcomes")
    n = len(outcomes)
    return Law({x: Fraction(1, n) for x in outcomes})


def point(outcome: Hashable) -> Law:
    """The one-hot (Dirac) law: outcome with probability 1."""
    return Law({outcome: 1})


def tv_distance(a: Mapping[Hashable, Any], b: Mapping[Hashable, Any]) -> Fraction:
    """Total-variation distance TV(a, b) = 1/2 * sum_x |a(x) - b(x)| (absent outcomes weigh 0)."""
    a_law = a if isinstance(a, Law) else Law(a, name="a")
    b_law = b if isinstance(b, Law) else Law(b, name="b")
    keys = set(a_law) | set(b_law)
    return sum((abs(a_law.prob(x) - b_law.prob(x)) for x in keys), Fraction(0)) / 2


def difference_table(actual: Mapping, target: Mapping) -> list[tuple[Hashable, Fraction, Fraction, Fraction]]:
    """Rows (outcome, actual(x), target(x), actual(x) - target(x)) for every outcome of either law."""
    a_law = actual if isinstance(actual, Law) else Law(actual, name="actual")
    t_law = target if isinstance(target, Law) else Law(target, name="target")
    keys = list(t_law) + [x for x in a_law if x not in t_law]
    try:
        keys = sorted(keys)
    except TypeError:
        pass
    return [(x, a_law.prob(x), t_law.prob(x), a_law.prob(x) - t_law.prob(x)) for x in keys]


def check_same_vocabulary(p: Law, q: Law, *, p_name: str = "p", q_name: str = "q") -> None:
    """Raise LawError unless p and q list the same outcomes (zero-weight entries count).

    Speculative sampling compares p(x) with q(x) token by token, so both must be defined over
    one vocabulary; a draft that silently lacks a token is a bug, not a zero.
    """
    pv, qv = p.vocabulary, q.vocabulary
    if pv != qv:
        only_p = sorted(map(repr, pv - qv))[:5]
        only_q = sorted(map(repr, qv - pv))[:5]
        raise LawError(
            f"{p_name} and {q_name} are over different vocabularies: "
            f"only in {p_name}: {', '.join(only_p) or '-'}; only in {q_name}: {', '.join(only_q) or '-'}"
        )
