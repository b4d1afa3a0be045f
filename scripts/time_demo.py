"""Time ``make demo`` as ``time make demo`` does, and write the record the course states its duration from.

    python scripts/time_demo.py                 # runs `make demo`, writes specmath/course/demo_timing.json
    python scripts/time_demo.py -- make demo PY=/path/to/python   # another command line for the same job

The wall clock runs from outside the command (the interpreter's start and make's own check included), so
it is the figure a student's ``time make demo`` prints. The load average (``os.getloadavg``, what ``uptime``
prints) is read just before and just after: on a machine shared with other work the figure is that of a
busy machine, and the record says so. The record (``specmath.course.durations.DemoTiming``) also keeps each
notebook's seconds from ``_build/timings.json``, the machine, the date and the commit; the README,
the Makefile, notebook 00 and the docs state its figure (``tests/course/test_durations.py``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from specmath.course.durations import DEMO_TIMING, demo_timing  # noqa: E402


def _output(*argv: str) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, check=True, cwd=ROOT).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def machine() -> str:
    """'a 2-core x86_64 CPU (<model name from /proc/cpuinfo>)'."""
    model = "model not known"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        model = next((line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines()
                      if line.startswith("model name")), model)
    return f"a {os.cpu_count()}-core {platform.machine()} CPU ({model})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", nargs="*", default=["make", "demo"], help="the command line (default: make demo)")
    parser.add_argument("--out", type=Path, default=DEMO_TIMING, help=f"the record to write (default: {DEMO_TIMING})")
    args = parser.parse_args(argv)
    load_start = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run(args.command, cwd=ROOT)
    seconds = time.perf_counter() - start
    load_end = os.getloadavg()[0]
    if done.returncode != 0:
        print(f"error: {' '.join(args.command)} exited with status {done.returncode}; nothing written", file=sys.stderr)
        return 1
    timings = json.loads((ROOT / "_build" / "timings.json").read_text(encoding="utf-8"))
    record = {"command": "make demo", "seconds": round(seconds, 1),
              "notebook_seconds": {stem: round(nb["seconds"], 1) for stem, nb in sorted(timings["notebooks"].items())},
              "machine": machine(), "cpu_count": os.cpu_count(), "load_average_at_start": round(load_start, 2),
              "load_average_at_end": round(load_end, 2), "date": datetime.date.today().isoformat(),
              "commit": _output("git", "rev-parse", "HEAD"), "python": platform.python_version()}
    args.out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {demo_timing(args.out).sentence()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
