"""How long each command-line mistake takes to be reported: every row of ``tests/test_cli_mistakes.py``, once.

    python scripts/cli_mistakes_timing.py [--json PATH]

Runs each mistaken command line as a user would (``python -m specmath ...``, in a folder holding the
files the rows name) under ``/usr/bin/time`` and prints a Markdown table: the command line, its exit
status, the wall seconds and the first line it printed on stderr; the load average before and after
says how busy the machine was. The test checks what is printed; this script only measures, since a
test never asserts wall-clock time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import test_cli_mistakes as table  # noqa: E402  (the rows, written once, in the test)

from specmath.tables import markdown_table  # noqa: E402


def measure(args: list[str], folder: Path) -> dict:
    """One run of ``specmath ARGS`` in ``folder``: exit status, wall seconds (``/usr/bin/time -f %e``), stderr."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    out = subprocess.run(["/usr/bin/time", "-f", "%e", sys.executable, "-m", "specmath", *args], cwd=folder, env=env,
                         capture_output=True, text=True)
    *printed, seconds = out.stderr.strip().splitlines()
    printed = [line for line in printed if not line.startswith("Command exited with non-zero status")]  # time's own line
    return {"args": args, "exit": out.returncode, "seconds": float(seconds), "stderr": printed,
            "traceback": any("Traceback" in line for line in printed)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="PATH", help="also write the rows, the machine and the load averages as JSON")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="cli_mistakes_"))
    for name, text in table.FILES.items():
        (folder / name).write_text(text)
    for name, data in table.BINARY_FILES.items():
        (folder / name).write_bytes(data)
    load_before = os.getloadavg()
    rows = [measure(list(row), folder) for row, _ in table.MISTAKES]
    load_after = os.getloadavg()
    print(f"{len(rows)} mistakes on {platform.machine()}, {os.cpu_count()} cores; load average before "
          f"{load_before[0]:.2f}, after {load_after[0]:.2f}")
    # a pipe in the first stderr line is written "/": the line stays one cell, readable in the terminal too
    print(markdown_table(["command line", "exit", "s", "stderr"], [
        [f"`specmath {' '.join(r['args'])}`", r["exit"], f"{r['seconds']:.2f}",
         (r["stderr"] or [""])[0].replace("|", "/")[:140] + (" (TRACEBACK)" if r["traceback"] else "")] for r in rows]))
    seconds = sorted(r["seconds"] for r in rows)
    print(f"\nexit 2: {sum(r['exit'] == 2 for r in rows)} of {len(rows)}; one line: {sum(len(r['stderr']) == 1 for r in rows)}; "
          f"tracebacks: {sum(r['traceback'] for r in rows)}; seconds median {seconds[len(seconds) // 2]:.2f}, max {seconds[-1]:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": platform.machine(), "cores": os.cpu_count(),
                                               "load_before": load_before, "load_after": load_after, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
