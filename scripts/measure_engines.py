"""The options table of the GGUF engines, measured and written where the docs read it.

    .venv/bin/python scripts/measure_engines.py [--tv 0.05] [--n N] [--pathwise 50] [--engines NAME ...]
                                                [--rows ROW ...] [--out DIR]

Runs ``specmath audit-generate --options-table`` (every option row x the four GGUF engines built by
``make engines``, on the SmolLM2 GGUF, with each row's control and, on the T=1 rows, the pathwise check over
50 seeds; each row at the N where both its tests detect a TV of ``--tv`` with probability 0.99, or at ``--n``)
and writes ``DIR/engines-smollm2.json`` (one record per engine x row) and ``DIR/environment.json``
(machine, load, versions, commit), after each row (a run cut short keeps the rows it finished; with
``--append`` the records already in DIR are kept, each engine x row run again replaced where it stood, and
the run's commit, engines and rows added to the environment's ``reruns``). DIR defaults to
``data/measurements/cpu_<machine>_<date>``. The docs render their tables from these files
(``specmath.audit.engines.table``).

``--hf`` instead audits Hugging Face's engines under the options they take beyond temperature, top-k and
top-p (min-p, the repetition penalty) on the bundled pair, N = 1000, and writes ``DIR/engines-hf-bundled.json``
(their controls are the engines' own: HF's biased verification, specmath's lookup with the residual from p).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from run_record import machine_record, tool_output  # noqa: E402  (scripts/run_record.py)

from specmath.audit.engines.registry import GGUF_PARALLEL, engines_dir, engines_for  # noqa: E402
from specmath.audit.engines.table_runs import TARGET_TV, run_on_pair, run_options_table  # noqa: E402
from specmath.audit.engines.target import load_target  # noqa: E402


def environment() -> dict:
    return machine_record(node=tool_output("node", "--version"),
                          node_llama_cpp=json.loads((engines_dir() / "node" / "package.json").read_text())["dependencies"],
                          gxx=tool_output("g++", "--version").splitlines()[0], threads_per_engine=1,
                          calls_side_by_side=GGUF_PARALLEL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", nargs="*", default=list(engines_for("gguf")))
    parser.add_argument("--tv", type=float, default=TARGET_TV, help="the TV each row detects with probability 0.99")
    parser.add_argument("--n", type=int, default=None, help="generate calls per sampler in every row instead")
    parser.add_argument("--rows", nargs="*", default=None, help="these option rows only")
    parser.add_argument("--append", action="store_true", help="keep the other engines' records already in DIR")
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
    n = {e: args.n for e in args.engines} if args.n else None
    start = time.perf_counter()
    target = load_target("smollm2")
    records = []
    if args.append and (out / "engines-smollm2.json").is_file():
        records = json.loads((out / "engines-smollm2.json").read_text())
        if (out / "environment.json").is_file():
            rerun = {"commit": env["commit"], "engines": args.engines, "rows": args.rows, "date": env["date"],
                     "processor": env["processor"], "load_average_at_start": env["load_average_at_start"]}
            env = json.loads((out / "environment.json").read_text())
            env.setdefault("reruns", []).append(rerun)
            start -= env.get("seconds", 0.0)

    def write(record: dict) -> None:  # after each row: a run cut short keeps the rows it finished
        key = (record["engine"], record["row"])
        at = next((i for i, r in enumerate(records) if (r["engine"], r["row"]) == key), None)
        if at is None:
            records.append(record)
        else:
            records[at] = record
        env["seconds"] = time.perf_counter() - start
        env["load_average_at_end"] = os.getloadavg()
        (out / "engines-smollm2.json").write_text(json.dumps(records, indent=1) + "\n")
        (out / "environment.json").write_text(json.dumps(env, indent=1) + "\n")

    for engine in args.engines:
        run_options_table([engine], target, n=n, rows=args.rows, pathwise_seeds=args.pathwise, target_tv=args.tv,
                          progress=lambda line: print(line, flush=True), on_record=write)
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
