"""Internal: One stopwatch for every timing of ``specmath.lm``: seconds summed by part, the device synchronised.

A GPU runs kernels asynchronously: ``time.perf_counter()`` after a launch measures the launch, not
the work. So every reading first waits for the device (``torch.cuda.synchronize``); on a CPU the work
is done when the call returns and nothing waits. The decoder's profile (seconds per part of a round),
the cost measurements (a pass, a rollback, a draft proposal) and the bench's timed runs all read
this one clock.

    watch = Stopwatch(device)
    cache.feed(tokens)
    verify = watch.lap("verify")     # seconds since the watch started or since the last lap
    cache.keep(kept)
    watch.lap("rollback")
    watch.seconds["verify"]          # laps of one part add up

Its clock is the wall's (``time.perf_counter``) unless a ``timed_by("cpu")`` block around the watch's making
says otherwise: ``time.process_time``, the seconds this process ran on a CPU. Why: beside other CPU-bound
processes, a run's wall time is its work plus whatever share of a core the scheduler withheld from it, which
changes from one run to the next, while the CPU time of a process running one torch thread counts its own work
only: on a 2-core AMD EPYC beside two CPU-bound processes, the bench's five interleaved repeats of the bundled pair,
eager, measured speculative over plain decoding at 1.96-2.60 by the wall and 2.15-2.18 by CPU time
(``docs/measurements/cpu_2026-12-07_epyc-zen5_decode_speed.md``). It is the wrong clock for several threads (it adds
up every thread's time, waiting ones included) and for a GPU (the work is not this process's CPU time).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import torch

from specmath.choices import BENCH_CLOCKS

__all__ = ["Stopwatch", "device_of", "CLOCKS", "timed_by"]

T = TypeVar("T")

#: what a stopwatch can read: the wall's time, or this process's CPU time
CLOCKS = dict(zip(BENCH_CLOCKS, (time.perf_counter, time.process_time), strict=True))
_clock = ["wall"]  # the clock of the stopwatches made now: ``timed_by`` sets it


def _check(clock: str) -> str:
    """``clock`` if it is one of ``CLOCKS``; ValueError naming them otherwise."""
    if clock not in CLOCKS:
        raise ValueError(f"clock {clock!r}: one of {', '.join(CLOCKS)}")
    return clock


@contextmanager
def timed_by(clock: str) -> Iterator[None]:
    """Every ``Stopwatch`` made inside the block (without a clock of its own) reads ``clock``, one of ``CLOCKS``."""
    _check(clock)
    _clock.append(clock)
    try:
        yield
    finally:
        _clock.pop()


def device_of(model: torch.nn.Module) -> torch.device:
    """The device a model's parameters live on (where its work runs, so where the clock must wait)."""
    return next(model.parameters()).device


class Stopwatch:
    """Seconds by part: ``lap(part)`` adds the time since the previous reading to ``seconds[part]``.

    ``enabled=False`` makes every call free and every lap 0 (the decoder's unprofiled runs). ``clock``: one of
    ``CLOCKS`` (None: the clock of the ``timed_by`` block it is made in, the wall's outside any).
    """

    def __init__(self, device: torch.device | str | None = None, parts: Iterable[str] = (), enabled: bool = True,
                 clock: str | None = None) -> None:
        self.cuda = device is not None and torch.device(device).type == "cuda"
        self.clock = _clock[-1] if clock is None else _check(clock)
        self._read = CLOCKS[self.clock]
        self.enabled = enabled
        self.seconds: dict[str, float] = dict.fromkeys(parts, 0.0)
        self._last = self._now() if enabled else 0.0

    def _now(self) -> float:
        if self.cuda:
            torch.cuda.synchronize()  # the device's queued work belongs to the lap that queued it
        return self._read()

    def restart(self) -> None:
        """Start the next lap now (the time since the last reading counts nowhere)."""
        if self.enabled:
            self._last = self._now()

    def lap(self, part: str) -> float:
        """Seconds since the last reading, added to ``seconds[part]``; 0 when disabled."""
        if not self.enabled:
            return 0.0
        now = self._now()
        elapsed, self._last = now - self._last, now
        self.seconds[part] = self.seconds.get(part, 0.0) + elapsed
        return elapsed

    def time(self, part: str, work: Callable[[], T]) -> T:
        """Run ``work()`` as one lap of ``part`` and return its result."""
        self.restart()
        result = work()
        self.lap(part)
        return result

    @property
    def total(self) -> float:
        return sum(self.seconds.values())
