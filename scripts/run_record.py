"""Internal: what every measurement script records about the machine it ran on, and how it runs a tool.

``machine_record(**extra)``: the machine (architecture, processor, cores, the load average at the start), Python,
torch and transformers, the commit measured and the date, with ``extra`` (an engine's version, the command)
added; ``cpu_summary()``: the CPU's family and model and the vector units a CPU benchmark's kernels depend on;
``tool_output(*argv)``: a tool's standard output, or "unknown" where it is missing or fails (a record
says what it could not learn instead of stopping the measurement).
"""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def tool_output(*argv: str) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, check=True, cwd=ROOT).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def machine_record(**extra) -> dict:
    import torch
    import transformers

    return {"machine": platform.machine(),
            "processor": tool_output("sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"),
            "cpu_count": os.cpu_count(), "load_average_at_start": os.getloadavg(), "python": platform.python_version(),
            "torch": torch.__version__, "transformers": transformers.__version__,
            "commit": tool_output("git", "rev-parse", "HEAD"), "date": datetime.date.today().isoformat(), **extra}


def cpu_summary() -> str:
    """"CPU family: N Model: N" and which of AVX-512, its bfloat16 instructions and AMX the CPU has (from ``lscpu``):
    what decides which matrix-product kernels a CPU benchmark measured."""
    units = "avx512f|avx512_bf16|amx_tile"
    found = tool_output("sh", "-c", f"lscpu | grep -E '^(CPU family|Model|Flags)' | grep -o -E '^[^:]*: *[0-9]+|{units}'")
    return " ".join(found.split())
