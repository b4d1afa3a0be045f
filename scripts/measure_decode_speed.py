"""The eager-against-compiled measurement, quiet and beside CPU-bound processes, written where the docs read it.

    .venv/bin/python scripts/measure_decode_speed.py [--out DIR] [--busy 2] [--only RUN ...]

Runs, each on 1 torch thread (``OMP_NUM_THREADS=1``), first on the machine as it is and then again beside
``--busy`` CPU-bound processes (``while True: pass``, started before the run and killed after it):

* ``speed-bundled-float32``: ``benchmarks/decode_speed.py`` on the bundled pair (plain and speculative, eager and
  compiled, interleaved; the 1-token pass; the copy loop);
* ``speed-smollm2-bfloat16`` and ``speed-smollm2-float32``: the same for SmolLM2-135M, plain decoding only (its
  roofline in each dtype);
* ``cli-bench-bundled-eager`` and ``cli-bench-bundled-compiled``: ``specmath bench --no-compile`` and
  ``--compile``, the cost model against the interleaved measurement; the same with ``-cpu-clock``, timed by the
  process's CPU time (``--clock cpu``), which beside CPU-bound processes counts the bench's own work only.

The busy runs carry the suffix ``-busy<N>``. Each run's JSON is written to ``DIR/<run>.json`` with ``run``,
``ok``, ``command`` and ``busy_processes`` added, and ``DIR/environment.json`` records the machine, the versions
and the commit measured. DIR defaults to ``data/measurements/cpu_<date>_decode_speed``;
``scripts/measurement_tables.py`` renders the page from it.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from run_record import machine_record  # noqa: E402  (scripts/run_record.py)

from specmath.lm.bench_result import cpu_burners  # noqa: E402

# runs of a few hundred tokens, long enough that one time slice lost to a process beside them moves a ratio little
BENCH = ["--pair", "bundled", "--no-hf", "--prompts", "4", "--max-new-tokens", "64", "--gamma", "4", "--repeats", "5",
         "--threads", "1", "--json"]
#: run name -> the command (argv after the interpreter) whose standard output or --json file is the record
RUNS = {
    "speed-bundled-float32": ["benchmarks/decode_speed.py", "--pair", "bundled", "--prompts", "4",
                              "--max-new-tokens", "64", "--repeats", "3"],
    "speed-smollm2-bfloat16": ["benchmarks/decode_speed.py", "--pair", "smollm2:lookup", "--dtype", "bfloat16",
                               "--plain-only", "--prompts", "1", "--max-new-tokens", "64", "--repeats", "3"],
    "speed-smollm2-float32": ["benchmarks/decode_speed.py", "--pair", "smollm2:lookup", "--dtype", "float32",
                              "--plain-only", "--prompts", "1", "--max-new-tokens", "64", "--repeats", "3"],
    "cli-bench-bundled-eager": ["-m", "specmath", "bench", "--no-compile", *BENCH],
    "cli-bench-bundled-compiled": ["-m", "specmath", "bench", "--compile", *BENCH],
    "cli-bench-bundled-eager-cpu-clock": ["-m", "specmath", "bench", "--no-compile", *BENCH, "--clock", "cpu"],
    "cli-bench-bundled-compiled-cpu-clock": ["-m", "specmath", "bench", "--compile", *BENCH, "--clock", "cpu"],
}


def run_one(name: str, argv: list[str], busy: int, out: Path) -> dict:
    """One run, beside ``busy`` CPU-bound processes; its record (``ok`` False with the error's tail on a failure)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    result_file = out / f".{name}.partial.json"
    command = [sys.executable, *argv]
    if argv[0].endswith("decode_speed.py"):
        command += ["--json", str(result_file)]
    with cpu_burners(busy):
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    shown = "OMP_NUM_THREADS=1 " + (" ".join(["specmath", *argv[2:]]) if argv[:2] == ["-m", "specmath"]
                                    else " ".join(["python", *argv]))
    record = {"run": name, "ok": done.returncode == 0, "command": shown, "busy_processes": busy}
    if done.returncode != 0:
        return {**record, "error": (done.stderr or done.stdout)[-2000:]}
    if result_file.is_file():
        data = json.loads(result_file.read_text())
        result_file.unlink()
    else:
        data = json.loads(done.stdout)
        data = data[0] if isinstance(data, list) else data  # specmath bench --json: one record per pair
    for key in ("command", "busy_processes"):  # the record's own: the command as run here, the burners started here
        data.pop(key, None)
    return {**record, **data}


def cpu_device() -> str:
    """The CPU in words, as the measurement pages name it: cores, architecture, model and the vector units the
    kernels may use (AVX2 or AVX-512, with or without AMX)."""
    try:
        flags = next(line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags")).split()
    except (OSError, StopIteration):
        flags = []
    units = [name for name, flag in (("AVX2", "avx2"), ("AVX-512", "avx512f"), ("AMX", "amx_tile")) if flag in flags]
    record = machine_record()
    return f"{record['cpu_count']}-core {record['machine']} {record['processor']} ({', '.join(units) or 'no AVX2'})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None, help="default: data/measurements/cpu_<date>_decode_speed")
    parser.add_argument("--busy", type=int, default=2, help="CPU-bound processes beside the second pass (0: none)")
    parser.add_argument("--only", nargs="+", choices=sorted(RUNS), default=None)
    args = parser.parse_args()
    if args.busy < 0:
        parser.error(f"--busy must be 0 or more, got {args.busy}")
    out = Path(args.out) if args.out else ROOT / "data" / "measurements" / f"cpu_{datetime.date.today()}_decode_speed"
    out.mkdir(parents=True, exist_ok=True)
    env = machine_record(device=cpu_device(), cuda=None, driver=None, cpu_threads=1, command="scripts/measure_decode_speed.py " + " ".join(sys.argv[1:]))
    (out / "environment.json").write_text(json.dumps(env, indent=1) + "\n")
    names = args.only or list(RUNS)
    passes = [0] + ([args.busy] if args.busy else [])
    for busy in passes:
        for name in names:
            run_name = name if busy == 0 else f"{name}-busy{busy}"
            start = time.perf_counter()
            record = run_one(run_name, RUNS[name], busy, out)
            (out / f"{run_name}.json").write_text(json.dumps(record, indent=1) + "\n")
            print(f"{run_name}: {'ok' if record['ok'] else 'FAILED'} in {time.perf_counter() - start:.0f} s", flush=True)
            if not record["ok"]:
                print(record["error"], file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
