"""How long ``make demo`` takes: measured once, stated from here wherever the course says it.

``scripts/time_demo.py`` runs ``make demo`` from outside and times it as ``time make demo`` does (wall
clock, the interpreter's start included), notes the load average before and after (on a machine shared
with other work the figure is that machine's, then), and writes ``demo_timing.json`` beside this file:
the seconds, the seconds of each notebook (``_build/timings.json``), the machine, the load, the date and
the commit. ``demo_timing()`` reads it. Notebook 00 prints its sentence; the README's quick-start table,
the Makefile and ``docs/how-to/present-the-course.md`` state the same figure, and
``tests/course/test_durations.py`` fails when one of them says another.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DEMO_TIMING", "DemoTiming", "demo_timing"]

#: the record ``scripts/time_demo.py`` writes
DEMO_TIMING = Path(__file__).resolve().parent / "demo_timing.json"


@dataclass(frozen=True)
class DemoTiming:
    """One timed run of ``make demo`` (the JSON fields of the same names)."""

    command: str
    seconds: float  # wall clock, from outside
    notebook_seconds: dict[str, float]  # each notebook's execution, two running at a time
    machine: str  # "a 2-core x86_64 CPU (Intel(R) Xeon(R) Processor)"
    cpu_count: int
    load_average_at_start: float  # the 1-minute load average, as ``uptime`` prints it
    load_average_at_end: float
    date: str
    commit: str

    @property
    def figure(self) -> str:
        """The duration as every page states it: whole seconds."""
        return f"{round(self.seconds)} s"

    @property
    def loaded(self) -> bool:
        """Whether other work kept the CPUs busy (a load average above half the cores at either end)."""
        return max(self.load_average_at_start, self.load_average_at_end) > self.cpu_count / 2

    def machine_line(self) -> str:
        """The machine, its load and the date: '<machine>, load average 0.4 -> 2.1 (quiet), 2026-12-01'."""
        load = f"load average {self.load_average_at_start:.1f} at the start, {self.load_average_at_end:.1f} at the end"
        busy = "shared with other work" if self.loaded else "quiet"
        return f"{self.machine}, {load} ({busy}), {self.date}, commit {self.commit[:7]}"

    def sentence(self) -> str:
        """One sentence for a reader: the figure, the notebooks, the machine."""
        slowest = max(self.notebook_seconds, key=self.notebook_seconds.get)
        return (f"`{self.command}` took {self.figure} ({len(self.notebook_seconds)} notebooks, two at a time; the slowest, "
                f"{slowest[:2]}, {self.notebook_seconds[slowest]:.0f} s) on {self.machine_line()}")


def demo_timing(path: str | Path = DEMO_TIMING) -> DemoTiming:
    """The committed record of ``make demo``'s duration."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return DemoTiming(**{name: data[name] for name in DemoTiming.__dataclass_fields__})
