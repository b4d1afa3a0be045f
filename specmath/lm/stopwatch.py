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
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import TypeVar

import torch

__all__ = ["Stopwatch", "device_of"]

T = TypeVar("T")


def device_of(model: torch.nn.Module) -> torch.device:
    """The device a model's parameters live on (where its work runs, so where the clock must wait)."""
    return next(model.parameters()).device


class Stopwatch:
    """Seconds by part: ``lap(part)`` adds the time since the previous reading to ``seconds[part]``.

    ``enabled=False`` makes every call free and every lap 0 (the decoder's unprofiled runs).
    """

    def __init__(self, device: torch.device | str | None = None, parts: Iterable[str] = (), enabled: bool = True) -> None:
        self.cuda = device is not None and torch.device(device).type == "cuda"
        self.enabled = enabled
        self.seconds: dict[str, float] = dict.fromkeys(parts, 0.0)
        self._last = self._now() if enabled else 0.0

    def _now(self) -> float:
        if self.cuda:
            torch.cuda.synchronize()  # the device's queued work belongs to the lap that queued it
        return time.perf_counter()

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
