"""Inductor's C++ wrapper against its Python wrapper on the CPU: compile time and the decoders' compiled calls.

    python benchmarks/compile_wrapper.py [--pair bundled] [--repeats 3] [--gamma 4] [--calls 32] [--json FILE]

``compiled_steps`` compiles the static-cache passes, the draft's steps and the round's work with Inductor's C++
wrapper (``CPU_OPTIONS``): the graph's kernels are called from generated C++, not from a generated Python function.
This measures what that buys and costs. Each measurement is a process of its own (Dynamo and Inductor keep state
per process), 1 torch thread, each wrapper with its own Inductor cache folder, new and empty: the first repeat
compiles cold, the later ones find the cache warm. The processes alternate (C++, Python, C++, Python, ...), so
a change of machine speed hits both alike. Each process times its warm-up (the calls that compile), then
``--calls`` rounds (``cost_measure.TimedCalls``: draft, verification, the round's work, rollback) and as many plain
steps back to back, twenty times over, and prints the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from run_record import cpu_summary, machine_record  # noqa: E402  (scripts/run_record.py)

WRAPPERS = ("cpp", "python")
#: warm-up calls of each kind before the timed ones (they compile every graph the timed calls run)
WARM_UP = 50
#: runs of ``--calls`` rounds, then ``--calls`` plain steps, that are timed
RUNS = 20


def child(pair_name: str, gamma: int, calls: int, wrapper: str) -> dict:
    """One process's timings, in ms (warm-up in s), with the given wrapper."""
    import torch

    from specmath.lm import compiled_steps
    from specmath.lm.cost_measure import TimedCalls, workload_context
    from specmath.lm.decode_options import DecodeOptions
    from specmath.lm.drafts import draft_for
    from specmath.lm.pairs import load_named_pair
    from specmath.lm.static_cache import cache_class_for

    torch.set_num_threads(1)
    compiled_steps.CPU_OPTIONS["cpp_wrapper"] = wrapper == "cpp"  # read when the first graph is compiled
    pair = load_named_pair(pair_name)
    options = DecodeOptions(gamma=gamma, compile=True).replace(eos_token_id=pair.eos_token_id,
                                                              vocab_size=pair.vocab_size)
    timed = TimedCalls(pair.target, draft_for(pair.draft, options), pair.prompts[0], options,
                       context=workload_context(pair.prompts, 64), cache_class=cache_class_for(options))
    start = time.perf_counter()
    for _ in range(WARM_UP):
        timed.round(gamma)
        timed.plain_step()
    warm_up = time.perf_counter() - start
    rounds, steps = [], []
    for _ in range(RUNS):
        rounds += [timed.round(gamma) for _ in range(calls)]
        steps += [timed.plain_step() for _ in range(calls)]

    def ms(values) -> float:
        return round(1e3 * median(values), 3)

    draft, verify, extra, rollback = zip(*rounds, strict=True)
    return {"wrapper": wrapper, "warm_up_s": round(warm_up, 1), "round_ms": ms(map(sum, rounds)),
            "draft_ms": ms(draft), "verify_ms": ms(verify), "round_work_ms": ms(extra), "plain_step_ms": ms(map(sum, steps))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pair", default="bundled")
    parser.add_argument("--repeats", type=int, default=3, help="processes of each wrapper (the first compiles cold)")
    parser.add_argument("--gamma", type=int, default=4)
    parser.add_argument("--calls", type=int, default=32, help="rounds, and plain steps, back to back in each run")
    parser.add_argument("--json", metavar="FILE", default=None)
    parser.add_argument("--child", choices=WRAPPERS, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.repeats < 2 or args.gamma < 1 or args.calls < 1:
        parser.error("--repeats takes an int >= 2 (one cold, the rest warm), --gamma and --calls an int >= 1")
    if args.child:
        print(json.dumps(child(args.pair, args.gamma, args.calls, args.child)))
        return 0
    runs: list[dict] = []
    with tempfile.TemporaryDirectory() as caches:
        for repeat in range(args.repeats):
            for wrapper in WRAPPERS:
                env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=os.path.join(caches, wrapper))
                out = subprocess.run([sys.executable, __file__, "--child", wrapper, "--pair", args.pair, "--gamma",
                                      str(args.gamma), "--calls", str(args.calls)],
                                     env=env, capture_output=True, text=True, check=True)
                run = json.loads(out.stdout.strip().splitlines()[-1]) | {"repeat": repeat, "cache": "cold" if repeat == 0 else "warm"}
                runs.append(run)
                print(json.dumps(run), flush=True)
    keys = ("warm_up_s", "round_ms", "draft_ms", "verify_ms", "round_work_ms", "plain_step_ms")
    # repeat r's Python-wrapper figure over its C++ one: the two ran one after the other
    ratios = {key: [round(p[key] / c[key], 2) for c, p in zip(runs[0::2], runs[1::2], strict=True)] for key in keys}
    print(f"pair {args.pair}, gamma {args.gamma}, 1 thread: Python wrapper over C++ wrapper, per repeat (> 1: C++ faster)")
    for key in keys:
        print(f"  {key:<14s} " + "  ".join(f"{r:5.2f}" for r in ratios[key])
              + f"   C++ {' '.join(str(c[key]) for c in runs[0::2])}   Python {' '.join(str(p[key]) for p in runs[1::2])}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"pair": args.pair, "gamma": args.gamma, "threads": 1, "python_over_cpp": ratios, "runs": runs,
                       "environment": machine_record(cpu=cpu_summary(),
                                                     command="python " + " ".join(sys.argv))}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
