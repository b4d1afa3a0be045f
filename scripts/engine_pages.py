"""Writes the generated tables of the engine pages from the committed measurement.

    .venv/bin/python scripts/engine_pages.py [--check]

Reads each measurement's ``data/measurements/<DIR>/engines-smollm2.json`` and ``environment.json`` (written by
``scripts/measure_engines.py``; ``MEASUREMENTS``) and rewrites, between their ``<!-- engine-table:NAME -->`` and
``<!-- /engine-table:NAME -->`` markers, the tables of ``docs/how-to/audit-engines-beyond-python.md`` and
``docs/measurements/engines-<date>.md`` (each measurement its own page): the options table (engine x option x
{engine, control}: N, power, verdict, seconds), the per-engine summary and the environment. The how-to shows each
engine's newest table at full power (``HOW_TO``: the records of those measurements together). ``--check`` exits
1 if a page differs from what it would write (tests/audit/engines/test_engine_pages.py runs it).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from generated_blocks import write_or_check  # noqa: E402  (scripts/generated_blocks.py)

from specmath.audit.engines.table import engine_summary, options_table  # noqa: E402
from specmath.tables import markdown_table  # noqa: E402

_DATA, _DOCS = ROOT / "data" / "measurements", ROOT / "docs"
#: each measurement and the pages its tables are written into
MEASUREMENTS = (
    (_DATA / "cpu_x86_64_2026-11-30", [_DOCS / "measurements" / "engines-2026-11-30.md"]),
    (_DATA / "cpu_x86_64_2026-12-01", [_DOCS / "measurements" / "engines-2026-12-01.md"]),
    (_DATA / "cpu_x86_64_2026-12-02", [_DOCS / "measurements" / "engines-2026-12-02.md"]),
)
#: the how-to and the measurements whose records it shows together: each engine's newest table at a detectable
#: TV of 0.05 (llama.cpp's and node-llama-cpp's lookups of 2026-12-01, their draft-model loops of 2026-12-02)
HOW_TO = (_DOCS / "how-to" / "audit-engines-beyond-python.md",
          (_DATA / "cpu_x86_64_2026-12-01", _DATA / "cpu_x86_64_2026-12-02"))
#: benchmarks/gguf_engine_throughput.py's results, by the measurement page they are shown on
THROUGHPUT = {_DATA / "cpu_x86_64_2026-12-01": ROOT / "benchmarks" / "results" / "cpu_2026-12-01_gguf_throughput.json"}


def throughput_table(results: list[dict]) -> str:
    """Samples per second of each engine one call at a time and side by side: medians of the repeats."""
    header = ["engine", "1 at a time, samples/s", "side by side, samples/s", "calls side by side", "ratio (range)",
              "s per 1000 samples, side by side", "load average"]
    rows = [[r["engine"], f"{r['one_at_a_time']:.1f}", f"{r['side_by_side']:.1f}", str(r["batch"]),
             f"{r['ratio']:.2f}x ({r['ratio_range'][0]:.2f}-{r['ratio_range'][1]:.2f})",
             f"{1000 / r['side_by_side']:.0f}",
             f"{min(x['load_before'] for x in r['runs']):.1f}-{max(x['load_after'] for x in r['runs']):.1f}"]
            for r in results]
    return markdown_table(header, rows)


def _side_by_side(env: dict) -> str:
    calls = env.get("calls_side_by_side")
    return "" if calls is None else (f" process, {calls} calls side by side in each, a row's control in a second "
                                     "process beside the engine's")


def _commit_date(commit: str) -> str:
    """The day ``commit`` was made (a rerun ran at it, on that day or later), or "" outside a git checkout."""
    try:
        shown = subprocess.run(["git", "-C", str(ROOT), "show", "-s", "--format=%cs", commit], capture_output=True,
                               text=True, check=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    return f" (committed {shown.stdout.strip()})"


def _rerun_where(rerun: dict, env: dict) -> str:
    """When and on what a rerun ran: its date and processor where it recorded them (else its commit's date)."""
    when = f" on {rerun['date']}" if "date" in rerun else _commit_date(rerun["commit"])
    other = rerun.get("processor", env["processor"]).strip() != env["processor"].strip()
    return when + (f", on {rerun['processor'].strip()}" if other else "")


def _reruns(env: dict) -> str:
    return "".join(f" Rerun at `{r['commit'][:7]}`{_rerun_where(r, env)} (`--append`): {', '.join(r['engines'])}, "
                   f"rows {', '.join(r['rows'] or ['all'])}." for r in env.get("reruns", []))


def blocks(records: list[dict], env: dict) -> dict[str, str]:
    """The generated blocks, by marker name."""
    load = env["load_average_at_start"]
    environment = (f"- **Machine**: {env['processor'].strip()} ({env['machine']}), {env['cpu_count']} cores shared with "
                   f"other jobs (load average {load[0]:.1f} at the start, {env['load_average_at_end'][0]:.1f} at the end), "
                   f"one thread per engine{_side_by_side(env)}.\n"
                   f"- **Versions**: Python {env['python']}, torch {env['torch']}, transformers {env['transformers']}, "
                   f"node {env['node']}, node-llama-cpp {env['node_llama_cpp']['node-llama-cpp']} "
                   f"(llama.cpp b1-0ad4a86, its prebuilt CPU libraries), {env['gxx']}.\n"
                   f"- **Commit**: `{env['commit']}`; **date** {env['date']}; the whole table took "
                   f"{env['seconds'] / 60:.0f} minutes.{_reruns(env)}")
    return {"table": options_table(records), "summary": engine_summary(records), "environment": environment}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a page is not what it would be written as")
    args = parser.parse_args()
    status = 0
    for folder, pages in MEASUREMENTS:
        records = json.loads((folder / "engines-smollm2.json").read_text())
        env = json.loads((folder / "environment.json").read_text())
        generated = blocks(records, env)
        if folder in THROUGHPUT:
            generated["throughput"] = throughput_table(json.loads(THROUGHPUT[folder].read_text()))
        status |= write_or_check(pages, "engine-table", generated, "scripts/engine_pages.py", args.check)
    page, folders = HOW_TO
    records = [r for folder in folders for r in json.loads((folder / "engines-smollm2.json").read_text())]
    shown = {"table": options_table(records), "summary": engine_summary(records)}
    status |= write_or_check([page], "engine-table", shown, "scripts/engine_pages.py", args.check)
    return status


if __name__ == "__main__":
    sys.exit(main())
