"""Finite probability laws with exact rational weights.

A law is a read-only mapping ``outcome -> Fraction`` whose weights are non-negative and sum to
exactly 1 (Norvig's "a distribution is just {outcome: weight}"), so ``dict(law)`` is its table.
Outcomes are any hashable values: short strings ("A", "B") in toy worlds, ints for real tokens.

Entries of weight 0 may be listed: they record the *vocabulary* a law is defined over (a target
law p over {A, B} with p(B) = 0 still knows that B exists). Equality of laws is equality as
measures: an outcome that is absent counts as weight 0, so ``Law({"A": 1}) == Law({"A": 1, "B": 0})``.

Plain Python in, exact answers out. Any Mapping outcome -> number is a law wherever a law is
expected (``as_law`` is the one coercion every public entry point calls). A *number* is read as the
number it prints as, whatever type carries it:

* ints, Fractions, other Rationals and ``Decimal`` exactly (``Decimal("0.7")`` is 7/10);
* a string such as "0.7" or "7/10" as the decimal or ratio it spells;
* a float *scalar*, as the shortest decimal that round-trips in its own precision: a Python float
  (``Fraction(repr(x))``, so 0.7 -> 7/10, not the double 3152519739159347/4503599627370496 that
  the literal rounds to), a numpy float scalar (``np.float64(0.7)`` and ``np.float32(0.7)`` are both
  7/10) and a 0-d torch tensor (read through numpy; bfloat16 through float32).

So ``Law({"A": 0.7, "B": 0.3})``, ``Law({"A": np.float64(0.7), "B": np.float64(0.3)})`` and
``Law(dict(enumerate(np.array([0.7, 0.3]))))`` are the same law 7/10, 3/10: a scalar is a weight a
person wrote, or picked out of an array to write a table, and means the decimal it shows.
A *probability vector* is different: a 1-D numpy array or torch tensor handed where a law is
expected comes out of float arithmetic (a softmax) and almost never sums to exactly 1, so its
entries are converted exactly, as the binary fractions they are, and the vector is renormalised.
Weights must sum to exactly 1; when they do not (0.1 + 0.2 read as decimals is fine, 1/3 + 2/3 as
printed floats is 0.9999999999999999) the error names the sum and the two fixes: exact weights
(strings or Fractions), or normalising first with ``Law.from_weights(weights)``.

Notation used throughout specmath: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)) (Leviathan et al., 2023).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from decimal import Decimal
from fractions import Fraction
from numbers import Rational
from typing import Any

__all__ = [
    "LawError",
    "Law",
    "as_law",
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
    """Convert a number to the Fraction it prints as, rejecting NaN, infinities, bools and non-numbers.

    * ints, Fractions, other Rationals and ``Decimal`` convert exactly;
    * a Python float is read as the decimal it prints as: ``Fraction(repr(x))``, so 0.7 -> 7/10
      (what a person typing 0.7 means; the double itself is 0.7 - 2^-54 / 5 or so);
    * a numpy float scalar likewise, as the shortest decimal that round-trips in its own precision
      (``str(x)``: ``np.float32(0.7)`` -> 7/10), and a 0-d torch tensor through numpy; numpy and
      torch integers exactly;
    * a string such as "0.7" or "7/10" is parsed as the decimal/rational it spells.

    Probability *vectors* are read exactly (binary) instead: see ``as_law``.
    """
    if isinstance(value, bool):
        raise LawError(f"{what} {value!r} is a bool, not a number")
    if isinstance(value, Fraction):
        return value
    if type(value) is int:
        return Fraction(value)
    if hasattr(value, "dtype"):  # numpy / torch scalars (np.float64 is also a float: test it first)
        return _array_scalar_to_fraction(value, what)
    if isinstance(value, Rational):
        return Fraction(int(value.numerator), int(value.denominator))
    if isinstance(value, float):
        _check_finite(value, what)
        # the shortest decimal that round-trips to this double: 0.7 -> "0.7" -> 7/10
        return Fraction(repr(value))
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise LawError(f"{what} is {value!r}, not a finite number")
        return Fraction(value)
    if isinstance(value, str):
        try:
            return Fraction(value)
        except (ValueError, ZeroDivisionError) as exc:
            raise LawError(f"{what} {value!r} is not a rational number") from exc
    raise LawError(f"{what} {value!r} of type {type(value).__name__} is not a number")


def _check_finite(value: float, what: str) -> None:
    if math.isnan(value):
        raise LawError(f"{what} is NaN")
    if math.isinf(value):
        raise LawError(f"{what} is infinite ({value})")


def _array_scalar_to_fraction(value: Any, what: str) -> Fraction:
    """A numpy or torch scalar: integers exactly, floats as the shortest decimal of their precision."""
    if getattr(value, "ndim", 0) != 0:
        raise LawError(f"{what} is an array of shape {tuple(value.shape)}, not a number")
    if getattr(value.dtype, "kind", None) is None:  # torch: dtype has no .kind; read it through numpy
        value = _torch_scalar_as_numpy(value, what)
    kind = value.dtype.kind
    if kind in "iu":
        return Fraction(int(value))
    if kind == "f":
        _check_finite(float(value), what)
        # numpy prints the shortest decimal that round-trips in the scalar's own precision
        return Fraction(str(value))
    if kind == "b":
        raise LawError(f"{what} {value!r} is a bool, not a number")
    raise LawError(f"{what} {value!r} of dtype {value.dtype} is not a real number")


def _torch_scalar_as_numpy(value: Any, what: str) -> Any:
    """A 0-d torch tensor as the numpy scalar of its dtype (bfloat16, which numpy lacks, as float32)."""
    if str(value.dtype) == "torch.bool":
        raise LawError(f"{what} {value!r} is a bool, not a number")
    host = value.detach().cpu()
    if str(host.dtype) == "torch.bfloat16":
        host = host.float()
    try:
        return host.numpy()[()]
    except TypeError as exc:  # complex and other dtypes numpy cannot hold as a real scalar
        raise LawError(f"{what} {value!r} of dtype {value.dtype} is not a real number") from exc


def _vector_to_law(value: Any, name: str) -> Law:
    """A 1-D numpy array or torch tensor: the law of the indices 0..V-1, each entry exactly (binary), renormalised."""
    host = value.detach().cpu() if hasattr(value, "detach") else value
    entries = host.tolist()  # Python ints, or floats holding each entry exactly (float16/32/64 and bfloat16)
    weights = {}
    for i, entry in enumerate(entries):
        if isinstance(entry, bool) or not isinstance(entry, (int, float)):
            raise LawError(f"{name}[{i}] = {entry!r} is not a real number (a probability vector holds ints or floats)")
        if isinstance(entry, float):
            _check_finite(entry, f"{name}[{i}]")
        weights[i] = Fraction(entry)
    return Law(weights, name=name, normalise=True)


class Law(Mapping):
    """A finite probability law: a validated, immutable mapping outcome -> Fraction.

    ``Law(table)`` requires the weights to sum to exactly 1, ``Law(table, normalise=True)`` (or
    ``Law.from_weights(weights)``) normalises non-negative weights w into w(x) / sum_y w(y).

    Weights go through ``to_fraction``: a number is read as the number it prints as
    (``Law({"A": 0.7, "B": 0.3})`` is exactly 7/10, 3/10, and so is the same table of numpy float
    scalars or Decimals). A table that does not sum to 1 raises a LawError naming the sum and the fixes.
    """

    __slots__ = ("_table", "_hash", "_derived")

    def __init__(self, table: Mapping[Hashable, Any] | Iterable[tuple[Hashable, Any]], *, name: str = "law",
                 normalise: bool = False):
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
        if total == 0:
            raise LawError(f"{name} has all-zero weights: no outcome is possible")
        if total != 1 and normalise:
            converted = {x: w / total for x, w in converted.items()}
        elif total != 1:
            raise LawError(
                f"{name} is not normalised: its weights sum to {total} (about {float(total):.17g}), not 1. "
                "Either give exact weights that sum to 1 (strings such as '1/3' or Fractions), "
                "or normalise them first: Law.from_weights(weights) divides every weight by their sum"
            )
        self._table = converted
        self._hash: int | None = None
        self._derived: dict[str, Any] | None = None

    # -- construction --------------------------------------------------------------------------
    @classmethod
    def from_weights(cls, weights: Mapping[Hashable, Any], *, name: str = "weights") -> Law:
        """Normalise non-negative weights: law(x) = w(x) / sum_y w(y) (``Law(weights, normalise=True)``).

        Raises LawError for a negative, NaN or infinite weight, or when every weight is 0.
        """
        return cls(weights, name=name, normalise=True)

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

    # -- what the interpreters derive from a law, kept with it --------------------------------
    def derived(self, key: str, build: Callable[[Law], Any]) -> Any:
        """``build(self)``, computed the first time ``key`` is asked for and kept with this law.

        The interpreters answer many requests from one law (a die's law is shared by every roll):
        the exact interpreter keeps its positive branches here, the sampled one its cumulative float
        weights. A Law is immutable, so a derived value never goes stale, and it is freed with the law.
        """
        if self._derived is None:
            self._derived = {}
        if key not in self._derived:
            self._derived[key] = build(self)
        return self._derived[key]

    def __reduce__(self):
        # only the table travels: the hash (string hashes differ between processes) and derived
        # values are recomputed where the law is unpickled or copied
        return (_law_from_valid_table, (self._table,))

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


def _law_from_valid_table(table: dict[Hashable, Fraction]) -> Law:
    """A Law around a table that was validated when it was first built (unpickling, copying)."""
    law = Law.__new__(Law)
    law._table, law._hash, law._derived = dict(table), None, None
    return law


def as_law(value: Any, *, name: str = "law", normalise: bool = False) -> Law:
    """The one coercion behind every public function that takes a law.

    * a ``Law`` is returned as it is;
    * any Mapping outcome -> number becomes ``Law(value, name=name, normalise=normalise)``
      (each number read as it prints, see ``to_fraction``);
    * a one-dimensional numpy array or torch tensor of probabilities is the law of the indices
      0..V-1, each entry converted exactly (binary) and the vector renormalised: w(i) / sum_j w(j),
      because float probabilities almost never sum to exactly 1.

    Anything else raises a LawError naming its type.
    """
    if isinstance(value, Law):
        return value
    if isinstance(value, Mapping):
        return Law(value, name=name, normalise=normalise)
    shape = getattr(value, "shape", None)
    if shape is not None and hasattr(value, "dtype"):
        if len(shape) != 1:
            raise LawError(f"{name}: a probability vector must be one-dimensional, got shape {tuple(shape)}")
        return _vector_to_law(value, name)
    raise LawError(
        f"{name} must be a Mapping outcome -> probability (a dict, a Law) or a 1-D probability vector, "
        f"got {type(value).__name__}"
    )


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
    a_law, b_law = as_law(a, name="a"), as_law(b, name="b")
    keys = set(a_law) | set(b_law)
    return sum((abs(a_law.prob(x) - b_law.prob(x)) for x in keys), Fraction(0)) / 2


def difference_table(actual: Mapping, target: Mapping) -> list[tuple[Hashable, Fraction, Fraction, Fraction]]:
    """Rows (outcome, actual(x), target(x), actual(x) - target(x)) for every outcome of either law."""
    a_law, t_law = as_law(actual, name="actual"), as_law(target, name="target")
    keys = list(t_law) + [x for x in a_law if x not in t_law]
    try:
        keys = sorted(keys)
    except TypeError:
        pass
    return [(x, a_law.prob(x), t_law.prob(x), a_law.prob(x) - t_law.prob(x)) for x in keys]


def check_same_vocabulary(p: Mapping, q: Mapping, *, p_name: str = "p", q_name: str = "q") -> None:
    """Raise LawError unless p and q list the same outcomes (zero-weight entries count).

    Speculative sampling compares p(x) with q(x) token by token, so both must be defined over
    one vocabulary; a draft that silently lacks a token is a bug, not a zero.
    """
    pv, qv = as_law(p, name=p_name).vocabulary, as_law(q, name=q_name).vocabulary
    if pv != qv:
        only_p = sorted(map(repr, pv - qv))[:5]
        only_q = sorted(map(repr, qv - pv))[:5]
        raise LawError(
            f"{p_name} and {q_name} are over different vocabularies: "
            f"only in {p_name}: {', '.join(only_p) or '-'}; only in {q_name}: {', '.join(only_q) or '-'}"
        )
