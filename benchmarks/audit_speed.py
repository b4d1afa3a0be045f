"""Seconds per ``assert_sampler_lossless`` at the default n, one round per call against batched.

    PYTHONPATH=. python benchmarks/audit_speed.py [--n 20000] [--json PATH]

(the run of 2026-11-30 is benchmarks/results/cpu_2026-11-30_audit_speed.json)

Four samplers, each the correct round (so each audit passes), each audited at n rounds per case
on the whole battery (14 cases):

* numpy, one round per call: ``specmath.speculative.reference_round.reference_sample_round``;
* numpy, batched: ``specmath.speculative.reference_rounds.reference_sample_rounds`` (every round of a case in one call);
* torch, one round per call: ``specmath.audit.rounds.builtin_adapters.specmath_torch_round`` (``accept_reject`` on a batch of one);
* torch, batched: ``specmath.audit.rounds.builtin_adapters.specmath_torch_rounds`` (``accept_reject`` on the whole batch).

Each runs in a fresh process with one torch thread (``OMP_NUM_THREADS=1``, as ``make test`` runs),
timed twice there: *cold*, the first audit of the process, which also computes each case's exact round
law and the power of its tests (what one pytest run with one audit pays), and *warm*, a second audit
of the same sampler. Goals: batched, cold, under 5 s (numpy) and 10 s (torch) on a 2-core machine.
The machine may be shared: the load average before and after each run is printed and saved, and
the ratios (one round / batched) are measured in the same run. Prints a table; ``--json`` saves it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

#: (row name, generator kind, batched, "module:function")
SAMPLERS = [
    ("numpy, one round per call", "numpy", False, "specmath.speculative.reference_round:reference_sample_round"),
    ("numpy, batched", "numpy", True, "specmath.speculative.reference_rounds:reference_sample_rounds"),
    ("torch, one round per call", "torch", False, "specmath.audit.rounds.builtin_adapters:specmath_torch_round"),
    ("torch, batched", "torch", True, "specmath.audit.rounds.builtin_adapters:specmath_torch_rounds"),
]
GOALS = {"numpy, batched": 5.0, "torch, batched": 10.0}

_CHILD = """
import importlib, json, sys, time
kind, batched, spec, n = sys.argv[1], sys.argv[2] == "1", sys.argv[3], int(sys.argv[4])
module, _, name = spec.partition(":")
sampler = getattr(importlib.import_module(module), name)
if kind == "torch":
    import torch  # imported before the clock starts, as a torch user's test file has
from specmath.testing import assert_sampler_lossless
out = {}
for run in ("cold", "warm"):
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    report = assert_sampler_lossless(sampler, generator=kind, n=n, batched=batched)
    out[run] = {"wall_s": time.perf_counter() - start_wall, "cpu_s": time.process_time() - start_cpu}
out["passed"] = report.passed
out["cases"] = len(report.cases)
print(json.dumps(out))
"""


def measure(kind: str, batched: bool, spec: str, n: int) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": os.getcwd()}
    load_before = os.getloadavg()
    done = subprocess.run([sys.executable, "-c", _CHILD, kind, "1" if batched else "0", spec, str(n)],
                          capture_output=True, text=True, env=env, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return {**result, "load_before": load_before, "load_after": os.getloadavg()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000, help="rounds per case (default 20000, the default of the API)")
    parser.add_argument("--json", metavar="PATH", help="write the measurements as JSON to PATH")
    args = parser.parse_args(argv)
    rows = []
    for name, kind, batched, spec in SAMPLERS:
        result = measure(kind, batched, spec, args.n)
        rows.append({"sampler": name, "function": spec, "generator": kind, "batched": batched, **result})
        print(f"{name:28s} cold {result['cold']['wall_s']:7.1f} s  warm {result['warm']['wall_s']:7.1f} s  "
              f"(CPU {result['cold']['cpu_s']:.1f} s / {result['warm']['cpu_s']:.1f} s; load {result['load_before'][0]:.1f} "
              f"-> {result['load_after'][0]:.1f}; passed {result['passed']})", flush=True)
    by_name = {r["sampler"]: r for r in rows}
    for lib in ("numpy", "torch"):
        one, batch = by_name[f"{lib}, one round per call"], by_name[f"{lib}, batched"]
        ratio = one["cold"]["wall_s"] / batch["cold"]["wall_s"]
        goal = GOALS[f"{lib}, batched"]
        verdict = "met" if batch["cold"]["wall_s"] < goal else "NOT met"
        print(f"{lib}: batched is {ratio:.0f}x faster than one round per call; goal batched < {goal:g} s: {verdict}")
    if args.json:
        record = {"command": "benchmarks/audit_speed.py " + " ".join(argv if argv is not None else sys.argv[1:]),
                  "n": args.n, "cpus": os.cpu_count(), "machine": platform.machine(), "python": platform.python_version(),
                  "date": time.strftime("%Y-%m-%d %H:%M:%S"), "goals_s": GOALS, "rows": rows}
        with open(args.json, "w") as f:
            json.dump(record, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
