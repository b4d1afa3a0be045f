"""The program driver: the loop that runs a sampling program, written once for every interpreter.

A sampling program (``specmath.program``) is a generator that yields requests and returns how its
attempt ended. Driving one attempt is the same loop whatever the program means to the caller::

    request = gen.send(None)
    repeat:
        Tick(label, k)  ->  costs[label] += k;  send None back          (no randomness)
        Draw / Coin     ->  costs[label] += 1;  send handler.answer(request) back
    return end          ->  an outcome, RESTART or Recur(fn, *args)

An interpreter differs from another only in *how it answers a request*: that is its handler, a
small class with one method ``answer(request)`` (in the manner of NumPyro's ``Messenger`` with its
``process_message``, or Pyro's poutine: the runner written once, each handler a few lines):

* ``specmath.exact.ReplayHandler`` answers with prescribed branch indices and, at the first request
  past them, stops the attempt with that request's branches (Pyro's ``queue`` enumeration: every
  path explored depth-first by replay);
* ``specmath.sampled.GeneratorHandler`` answers from a seeded numpy Generator;
* ``specmath.entropy.recycling_stream`` answers die requests with given faces.

``run`` follows an attempt's end until an outcome: RESTART runs the same call again, Recur runs
the call it names. That is how one path is followed (sampling, replaying given rolls); the exact
interpreter instead collects the ends of every attempt of every call it reaches into an absorbing
Markov chain (``specmath.exact``, ``specmath.absorbing_chain``).
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from typing import Any, Protocol

from specmath.program import RESTART, Coin, Draw, Recur, Tick

__all__ = ["NotExactError", "Handler", "Call", "run_attempt", "run"]


class NotExactError(ValueError):
    """The program's run cannot be completed: it may not halt with probability 1, or exceeds the limits."""


class Handler(Protocol):
    """What an interpreter supplies: the answer to one request for randomness."""

    def answer(self, request: Draw | Coin) -> Any:
        """The outcome of the die, coin or draw ``request`` (a Draw's outcome, or True/False for a Coin)."""


@dataclass(frozen=True)
class Call:
    """A program call ``fn(*args, **kwargs)``, hashable (kwargs as sorted pairs).

    The exact interpreter uses calls as the states of its chain: a RESTART returns to the same call,
    and ``Recur(fn, *args)`` reaches ``Call(fn, args)``, equal to any earlier call with equal arguments.
    """

    fn: Callable
    args: tuple = ()
    kwargs: tuple = ()  # ((name, value), ...), sorted by name

    @classmethod
    def of(cls, fn: Callable, args: tuple = (), kwargs: dict | None = None) -> Call:
        return cls(fn, tuple(args), tuple(sorted(kwargs.items())) if kwargs else ())

    @property
    def name(self) -> str:
        return getattr(self.fn, "__name__", repr(self.fn))

    def start(self):
        """A fresh generator of this call: one attempt, from the beginning."""
        gen = self.fn(*self.args, **dict(self.kwargs)) if self.kwargs else self.fn(*self.args)
        if not hasattr(gen, "send"):
            raise TypeError(f"{self.name!r} is not a generator function (it must yield requests)")
        return gen

    def after(self, end: Any) -> Call | None:
        """The call that continues an attempt ended by ``end``: this one for RESTART, the named one
        for a Recur, None for an outcome."""
        if end is RESTART:
            return self
        if isinstance(end, Recur):
            return Call(end.fn, end.args)
        return None


def run_attempt(call: Call, handler: Handler, costs: MutableMapping[str, Any]) -> Any:
    """Drive one attempt of ``call``: answer its requests with ``handler``, add what it spends to
    ``costs`` (one per request, ``amount`` per Tick, under their labels); return how it ended.

    An exception from the handler ends the attempt and propagates (the generator is closed).
    """
    gen = call.start()
    try:
        answer = None
        while True:
            try:
                request = gen.send(answer)
            except StopIteration as stop:
                return stop.value
            if isinstance(request, Tick):
                costs[request.label] = costs.get(request.label, 0) + request.amount
                answer = None
            elif isinstance(request, (Draw, Coin)):
                costs[request.label] = costs.get(request.label, 0) + 1
                answer = handler.answer(request)
            else:
                raise TypeError(f"{call.name!r} yielded {request!r}; yield die/coin/draw/tick requests only")
    finally:
        gen.close()


def run(call: Call, handler: Handler, costs: MutableMapping[str, Any], *, max_attempts: int = 1_000_000) -> Any:
    """The outcome of ``call``, following RESTART and Recur (``Call.after``) from attempt to attempt.

    ``max_attempts`` turns a program that never returns into a NotExactError instead of a hang.
    """
    for _ in range(max_attempts):
        end = run_attempt(call, handler, costs)
        following = call.after(end)
        if following is None:
            return end
        call = following
    raise NotExactError(f"no outcome after {max_attempts} attempts: the program may never return")
