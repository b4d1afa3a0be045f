"""The vocabulary of a sampling program: requests for randomness and ways to end an attempt.

A sampling algorithm is written once, as a Python *generator function*. It asks for randomness by
yielding a request and receives the answer back from ``yield``; it ends by returning its outcome::

    def rand7_basic():
        a = yield die(5, label="rand5")
        b = yield die(5, label="rand5")
        val = 5 * (a - 1) + b          # uniform on 1..25
        if val <= 21:
            return (val - 1) % 7 + 1
        return RESTART                 # reject 22..25 and start over

Two interpreters run the same source (``specmath.exact`` and ``specmath.sampled``), each a handler
that answers requests for the one loop that drives a program (``specmath.driver``):

* ``exact(program)`` explores every branch with Fraction weights and returns the outcome law;
* ``sample(program, rng=...)`` answers each request from a seeded numpy Generator.

Unbounded loops are never written as ``while True`` around randomness: an attempt returns
``RESTART`` (run the current program call again from scratch) or ``Recur(fn, *args)`` (continue
with another program call, carrying state in its arguments). The exact interpreter turns these into
an absorbing Markov chain over program calls and solves it over the rationals.

Every request is counted as one unit of cost under its ``label`` (e.g. "rand5" calls, "flip"s,
"target" forward passes); ``Tick(label)`` adds cost without randomness.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from specmath.laws import Law, as_law, uniform
from specmath.validation import check_fraction, check_integer

__all__ = [
    "Draw",
    "Coin",
    "Tick",
    "Recur",
    "RESTART",
    "die",
    "coin",
    "draw",
    "tick",
]


@dataclass(frozen=True)
class Draw:
    """Request one outcome drawn from a finite law (any Mapping, see ``as_law``). The answer is the outcome."""

    law: Law
    label: str = "draw"

    def __post_init__(self) -> None:
        object.__setattr__(self, "law", as_law(self.law, name=f"law of {self.label!r}"))


@dataclass(frozen=True)
class Coin:
    """Request a biased coin: answers True with probability ``p``, else False.

    ``p`` is a Fraction in [0, 1] for exact work; a sympy expression is allowed too, for the
    symbolic interpreter (``exact_symbolic``).
    """

    p: Any
    label: str = "coin"


@dataclass(frozen=True)
class Tick:
    """Add ``amount`` to the cost counter ``label``; consumes no randomness. Answers None."""

    label: str
    amount: int = 1


@dataclass(frozen=True)
class Recur:
    """End this attempt and continue with the program call ``fn(*args)``.

    The arguments are the state carried forward (e.g. the leftover uniform value of a recycling
    sampler); they must be hashable, so the exact interpreter can recognise a state it has seen.
    """

    fn: Callable
    args: tuple = field(default=())

    def __init__(self, fn: Callable, *args: Hashable) -> None:
        object.__setattr__(self, "fn", fn)
        object.__setattr__(self, "args", tuple(args))


class _Restart:
    """Sentinel: end this attempt and run the *current* program call again from scratch."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "RESTART"

    def __reduce__(self):
        return (_Restart, ())


RESTART = _Restart()


def die(n: int, *, label: str = "die") -> Draw:
    """A fair n-sided die answering 1..n (the article's rand5 is ``die(5)``)."""
    return Draw(_die_law(check_integer(n, "a die's number of sides", min_value=1)), label=label)


_DIE_CACHE: dict[int, Law] = {}


def _die_law(n: int) -> Law:
    law = _DIE_CACHE.get(n)
    if law is None:
        law = _DIE_CACHE[n] = uniform(range(1, n + 1))
    return law


def coin(p: Any, *, label: str = "coin") -> Coin:
    """A p-coin (True with probability p). Numbers are converted exactly and checked to lie in [0, 1]."""
    if _is_symbolic(p):
        return Coin(p, label=label)
    return Coin(check_fraction(p, f"coin probability ({label})", min_value=0, max_value=1), label=label)


def draw(law: Law, *, label: str = "draw") -> Draw:
    """Draw one outcome from ``law``."""
    return Draw(law, label=label)


def tick(label: str, amount: int = 1) -> Tick:
    """Count ``amount`` units of the cost ``label`` without drawing anything."""
    return Tick(label, amount)


def _is_symbolic(x: Any) -> bool:
    return type(x).__module__.startswith("sympy")
