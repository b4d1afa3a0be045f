"""The options table of the GGUF engines, measured and written where the docs read it.

    .venv/bin/python scripts/measure_engines.py [--n-scale 1.0] [--pathwise 50] [--engines NAME ...] [--out DIR]

Runs ``specmath audit-generate --options-table`` (every option row x the four GGUF engines built by
``make engines``, on the SmolLM2 GGUF, with each row's control and, on the T=1 rows, the pathwise check over
50 seeds) and writes ``DIR/engines-smollm2.json`` (one record per engine x row) and ``DIR/environment.json``
(machine, load, versions, commit). DIR defaults to ``data/measurements/cpu_<machine>_<date>``. The docs
render their tables from these files (``specmath.audit.engines.table``).

``--hf`` instead audits Hugging Face's engines under the options they take beyond temperature, top-k and
top-p (min-p, the repetition penalty) on the bundled pair, N = 1000, and writes ``DIR/engines-hf-bundled.json``
(their controls are the engines' own: HF's biased verification, specmath's lookup with the residual from p).
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

from specmath.audit.engines.registry import engines_dir, engines_for  # noqa: E402
from specmath.audit.engines.table_runs import run_on_pair, run_options_table  # noqa: E402
from specmath.audit.engines.target import load_target  # noqa: E402
from specmath.commands.audit_generate_command import OPTIONS_TABLE_DEFAULT_N, OPTIONS_TABLE_N  # noqa: E402


def _run(*argv: str) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, check=True, cwd=ROOT).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def environment() -> dict:
    import torch
    import transformers

    return {"machine": platform.machine(), "processor": _run("sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"),
            "cpu_count": os.cpu_count(), "load_average_at_start": os.getloadavg(), "python": platform.python_version(),
            "torch": torch.__version__, "transformers": transformers.__version__, "node": _run("node", "--version"),
            "node_llama_cpp": json.loads((engines_dir() / "node" / "package.json").read_text())["dependencies"],
            "gxx": _run("g++", "--version").splitlines()[0], "commit": _run("git", "rev-parse", "HEAD"),
            "date": datetime.date.today().isoformat(), "threads_per_engine": 1}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", nargs="*", default=list(engines_for("gguf")))
    parser.add_argument("--n-scale", type=float, default=1.0, help="multiply every engine's N")
    parser.add_argument("--pathwise", type=int, default=50, help="seeds of the pathwise check on the T=1 rows")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--hf", action="store_true", help="Hugging Face's engines under min-p and repetition instead")
    args = parser.parse_args()
    env = environment()
    out = args.out or ROOT / "data" / "measurements" / f"cpu_{env['machine']}_{env['date']}"
    out.mkdir(parents=True, exist_ok=True)
    if args.hf:
        measure_hf(out, env)
        return
    n = {e: max(1, round(OPTIONS_TABLE_N.get(e, OPTIONS_TABLE_DEFAULT_N) * args.n_scale)) for e in args.engines}
    start = time.perf_counter()
    target = load_target("smollm2")
    records = []
    for engine in args.engines:  # written after each engine: a run cut short keeps the engines it finished
        records += run_options_table([engine], target, n=n, pathwise_seeds=args.pathwise,
                                     progress=lambda line: print(line, flush=True))
        env["seconds"] = time.perf_counter() - start
        env["load_average_at_end"] = os.getloadavg()
        (out / "engines-smollm2.json").write_text(json.dumps(records, indent=1) + "\n")
        (out / "environment.json").write_text(json.dumps(env, indent=1) + "\n")
    print(f"wrote {out}/engines-smollm2.json ({len(records)} records) in {env['seconds']:.0f} s")


def measure_hf(out: Path, env: dict) -> None:
    from specmath.sampling_options import SamplingOptions

    rows = {"min-p 0.1": SamplingOptions(1.0, min_p=0.1), "repetition 1.3": SamplingOptions(1.0, repetition_penalty=1.3)}
    records = []
    for engine in ("hf-assisted", "hf-lookup"):
        for name, options in rows.items():
            audit = run_on_pair(engine, "bundled", options, n=1000, seed=0)
            records.append({**audit.to_json(), "row": name, "options": options.to_json(),
                            "options_label": options.label()})
            print(f"{engine:12s} {name:16s} {audit.verdict}  engine {audit.seconds:.0f} s, control "
                  f"{audit.control_seconds:.0f} s", flush=True)
    (out / "engines-hf-bundled.json").write_text(json.dumps({"environment": env, "records": records}, indent=1) + "\n")


if __name__ == "__main__":
    main()
