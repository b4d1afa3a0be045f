"""Writes the generated tables of the engine pages from the committed measurement.

    .venv/bin/python scripts/engine_pages.py [--check]

Reads ``data/measurements/<DIR>/engines-smollm2.json`` and ``environment.json`` (written by
``scripts/measure_engines.py``) and rewrites, between their ``<!-- engine-table:NAME -->`` and
``<!-- /engine-table:NAME -->`` markers, the tables of ``docs/how-to/audit-engines-beyond-python.md`` and
``docs/measurements/engines-<date>.md``: the options table (engine x option x {engine, control}: N, power,
verdict, seconds), the per-engine summary and the environment. ``--check`` exits 1 if a page differs from what
it would write (tests/audit/engines/test_engine_pages.py runs it).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from generated_blocks import write_or_check  # noqa: E402  (scripts/generated_blocks.py)

from specmath.audit.engines.table import engine_summary, options_table  # noqa: E402

MEASUREMENT = ROOT / "data" / "measurements" / "cpu_x86_64_2026-11-30"
PAGES = [ROOT / "docs" / "how-to" / "audit-engines-beyond-python.md", ROOT / "docs" / "measurements" / "engines-2026-11-30.md"]


def blocks(records: list[dict], env: dict) -> dict[str, str]:
    """The generated blocks, by marker name."""
    load = env["load_average_at_start"]
    environment = (f"- **Machine**: {env['processor'].strip()} ({env['machine']}), {env['cpu_count']} cores shared with "
                   f"other jobs (load average {load[0]:.1f} at the start, {env['load_average_at_end'][0]:.1f} at the end), "
                   f"one thread per engine.\n"
                   f"- **Versions**: Python {env['python']}, torch {env['torch']}, transformers {env['transformers']}, "
                   f"node {env['node']}, node-llama-cpp {env['node_llama_cpp']['node-llama-cpp']} "
                   f"(llama.cpp b1-0ad4a86, its prebuilt CPU libraries), {env['gxx']}.\n"
                   f"- **Commit**: `{env['commit']}`; **date** {env['date']}; the whole table took "
                   f"{env['seconds'] / 60:.0f} minutes.")
    return {"table": options_table(records), "summary": engine_summary(records), "environment": environment}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a page is not what it would be written as")
    args = parser.parse_args()
    records = json.loads((MEASUREMENT / "engines-smollm2.json").read_text())
    env = json.loads((MEASUREMENT / "environment.json").read_text())
    generated = blocks(records, env)
    return write_or_check(PAGES, "engine-table", generated, "scripts/engine_pages.py", args.check)


if __name__ == "__main__":
    sys.exit(main())
