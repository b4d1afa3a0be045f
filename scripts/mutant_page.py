"""The mutation table of docs/explanation/proofs.md, written from tests/mutants.toml and the recorded runs.

    python scripts/mutant_page.py            # write the table into the page (between its two markers)
    python scripts/mutant_page.py --check    # write nothing; exit 1 when the page differs from what it would write

A run is recorded by ``python scripts/mutants.py --json data/mutants/<name>.json --label '...'`` (the
outcome of every mutant, its seconds, the CPU time of all its runs, the machine, the load average at the start
and the end). The page shows each record's score and wall time, then one row per mutant of the table (its bug, its file, the test
that killed it and its seconds in the first record), then ``specmath verify --all`` against each mutant of
the exact side (its exit status and summary line). A mutant the first record does not hold is shown as not
measured, so the page never claims a run that did not happen. ``tests/test_mutant_table.py`` fails when the
committed page differs from what this script writes.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "explanation" / "proofs.md"
RECORDS = ROOT / "data" / "mutants"
BEGIN = "<!-- mutation table: written by scripts/mutant_page.py -->"
END = "<!-- end of mutation table -->"

_spec = importlib.util.spec_from_file_location("mutants_script", ROOT / "scripts" / "mutants.py")
mutants_script = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("mutants_script", mutants_script)  # its dataclasses look their module up
_spec.loader.exec_module(mutants_script)


def records(folder: Path = RECORDS) -> list[tuple[str, dict]]:
    """(name, record) of every recorded run, in name order (the first is the one whose seconds the rows show)."""
    return [(path.stem, json.loads(path.read_text())) for path in sorted(folder.glob("*.json"))]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _test_name(node: str) -> str:
    """``file::function`` of a pytest node id (its parameters left out)."""
    return node.split("[")[0]


def score_lines(runs: list[tuple[str, dict]]) -> list[str]:
    """One line per recorded run: the score, the wall time, the machine, the load, what ran beside it."""
    lines = []
    for name, r in runs:
        killed = sum(m["status"] == "killed" for m in r["mutants"])
        m = r["machine"]
        start, end = r["load_average"][0][0], r["load_average"][1][0]
        label = f", {r['label']}" if r.get("label") else ""
        lines.append(f"- `{name}`: **{killed} of {len(r['mutants'])} killed** in {r['seconds']:.0f} s "
                     f"({r['cpu_seconds']:.0f} CPU-seconds in all), {r['jobs']} at a "
                     f"time, on {m['cores']} cores of an {m['platform']} {m['cpu']}{label} (load average {start:.1f} "
                     f"at the start, {end:.1f} at the end), {m['date']}, commit {m['commit']}: `{r['command']}`")
    return lines


def mutant_rows(table: list, first: dict) -> list[str]:
    """The mutants table: one row per mutant, its outcome from ``first`` (a record)."""
    outcomes = {m["name"]: m for m in first["mutants"]}
    rows = ["| mutant | group | bug | file | killed by | s |", "|---|---|---|---|---|---|"]
    for mutant in table:
        o = outcomes.get(mutant.name)
        if o is None:
            by, seconds = "not measured", ""
        elif o["status"] == "killed":
            by, seconds = f"`{_test_name(o['killed_by'])}`", f"{o['seconds']:.1f}"
        else:
            by, seconds = f"**{o['status'].upper()}**: {o['detail']}", f"{o['seconds']:.1f}"
        rows.append(f"| `{mutant.name}` | {mutant.group} | {_cell(mutant.bug)} | `{mutant.file}` | {_cell(by)} | {seconds} |")
    return rows


def verify_rows(table: list, first: dict) -> list[str]:
    """``specmath verify --all`` against each mutant of the exact side: exit status and summary line."""
    outcomes = {m["name"]: m for m in first["mutants"]}
    rows = ["| mutant | exit | `specmath verify --all` says | s |", "|---|---|---|---|"]
    for mutant in (m for m in table if m.verify):
        o = outcomes.get(mutant.name)
        if o is None or o["verify_status"] is None:
            rows.append(f"| `{mutant.name}` | | not measured | |")
        else:
            rows.append(f"| `{mutant.name}` | {o['verify_status']} | {_cell(o['verify_line'])} | {o['verify_seconds']:.1f} |")
    return rows


def section(table: list | None = None, runs: list[tuple[str, dict]] | None = None) -> str:
    """The text between the page's markers."""
    table = mutants_script.load_table() if table is None else table
    runs = records() if runs is None else runs
    if not runs:
        return "\nNo run is recorded yet (data/mutants/ is empty).\n"
    first = runs[0][1]
    parts = ["", *score_lines(runs), "", f"Outcomes and seconds of `{runs[0][0]}` (a mutant's tests; verify apart):", "",
             *mutant_rows(table, first), "", "`specmath verify --all` against each mutant of the exact side (exit 0: "
             "every verification lossless, 1: one is NOT LOSSLESS, 2: one raised, an ERROR with no verdict):", "",
             *verify_rows(table, first), ""]
    return "\n".join(parts)


def page_text(text: str, body: str) -> str:
    """``text`` with what stands between the markers replaced by ``body``; ValueError without both markers."""
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise ValueError(f"{PAGE.name} needs the markers {BEGIN!r} and {END!r}, once each, in that order")
    head, rest = text.split(BEGIN)
    return head + BEGIN + body + END + rest.split(END, 1)[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when the page is out of date")
    args = parser.parse_args(argv)
    text = PAGE.read_text(encoding="utf-8")
    wanted = page_text(text, section())
    if args.check:
        if wanted != text:
            print(f"{PAGE.relative_to(ROOT)} is out of date: run python scripts/mutant_page.py")
            return 1
        return 0
    PAGE.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
