"""Which products a frozen CPU pass should run: the library's, Inductor's templates, or Inductor's timed choice.

    python benchmarks/frozen_products.py [--pair smollm2] [--dtype bfloat16 float32] [--repeats 2] [--json FILE]

A compiled CPU pass over bfloat16 weights, or over a large model's float32 ones, freezes the weights into its graph
(``compiled_steps.freezes``); its matrix products then read weights laid out once for them. Three choices of
products, each an Inductor configuration under freezing:

* "library": ATen's products, which for frozen weights are oneDNN's over weights it packed once;
* "templates": Inductor's own C++ matrix-product templates only;
* "autotuned": both, each product's kernel chosen by timing it while the graph compiles. Inductor times a product
  alone, called again and again, so its weight sits in the CPU's caches; a decoding pass reads each weight once,
  from memory. The timing can therefore choose the kernel that is fastest on cached weights and slower in a pass.

Each (dtype, choice) is a process of its own (a frozen graph is compiled in every process: Inductor's graph cache
does not keep it), 1 torch thread; the processes run in turn, every choice once per repeat, so a change of machine
speed hits all alike. A process times its warm-up (the compile), then the target's cached one-token pass (the pass
plain decoding runs, ``StaticRowCache.feed_block`` and the rollback) ``CALLS`` times, ``RUNS`` times over, and
prints the median of the runs' means beside the copy loop's bandwidth and the floor W / B it sets.
``compiled_steps.FROZEN_PRODUCTS`` records the choice this measured, by dtype.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from run_record import cpu_summary, machine_record  # noqa: E402  (scripts/run_record.py)

CHOICES = ("library", "templates", "autotuned")
#: Inductor's configuration for "templates" (the other two are ``compiled_steps.CPU_FREEZING``'s)
TEMPLATES_ONLY = {"freezing": True, "max_autotune": True, "max_autotune_gemm_backends": "CPP"}
#: one-token passes in each timed run, and timed runs
CALLS, RUNS = 20, 5
#: tokens in the cache before the timed passes (an edit prompt and half of 64 new tokens, about)
CONTEXT = 60


def child(pair_name: str, dtype_name: str, choice: str) -> dict:
    """One process's timings of the frozen one-token pass with ``choice``'s products."""
    import torch

    from specmath.lm import compiled_steps
    from specmath.lm.pairs import load_named_target
    from specmath.lm.roofline import memory_bandwidth, weight_bytes
    from specmath.lm.static_cache import StaticRowCache, lean_of

    torch.set_num_threads(1)
    dtype = getattr(torch, dtype_name)
    compiled_steps.CPU_FREEZING["templates"] = TEMPLATES_ONLY
    compiled_steps.FROZEN_PRODUCTS[dtype] = choice  # read by freezes() when the cache is built
    target, _ = load_named_target(pair_name, dtype)
    cache = StaticRowCache(target, 1, compiled=True)
    if cache.frozen != choice:
        raise SystemExit(f"{pair_name} in {dtype_name} is not compiled frozen (compiled_steps.freezes)")
    cache.prefill([[5] * CONTEXT])
    token = torch.tensor([[7]])

    def step() -> None:
        cache.feed_block(token)
        cache.keep([CONTEXT])

    start = time.perf_counter()
    for _ in range(3):
        step()
    warm_up = time.perf_counter() - start
    runs = []
    for _ in range(RUNS):
        start = time.perf_counter()
        for _ in range(CALLS):
            step()
        runs.append((time.perf_counter() - start) / CALLS)
    bandwidth = memory_bandwidth("cpu")
    weights = weight_bytes(lean_of(target))
    pass_ms = 1e3 * median(runs)
    floor_ms = 1e3 * weights / bandwidth
    return {"dtype": dtype_name, "products": choice, "warm_up_s": round(warm_up, 1), "pass_ms": round(pass_ms, 2),
            "pass_ms_runs": [round(1e3 * r, 2) for r in runs], "weight_bytes": weights,
            "copy_gb_s": round(bandwidth / 1e9, 1), "floor_ms": round(floor_ms, 2),
            "share_of_floor_speed": round(floor_ms / pass_ms, 2)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pair", default="smollm2")
    parser.add_argument("--dtype", nargs="+", default=["bfloat16", "float32"], choices=("bfloat16", "float16", "float32"))
    parser.add_argument("--products", nargs="+", default=list(CHOICES), choices=CHOICES)
    parser.add_argument("--repeats", type=int, default=2, help="processes of each (dtype, choice)")
    parser.add_argument("--json", metavar="FILE", default=None)
    parser.add_argument("--child", nargs=2, metavar=("DTYPE", "CHOICE"), default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats takes an int >= 1")
    if args.child:
        print(json.dumps(child(args.pair, *args.child)))
        return 0
    runs: list[dict] = []
    for repeat in range(args.repeats):
        for dtype in args.dtype:
            for choice in args.products:
                out = subprocess.run([sys.executable, __file__, "--pair", args.pair, "--child", dtype, choice],
                                     capture_output=True, text=True)
                if out.returncode != 0:
                    print(out.stderr, file=sys.stderr)
                    return out.returncode
                run = json.loads(out.stdout.strip().splitlines()[-1]) | {"repeat": repeat}
                runs.append(run)
                print(json.dumps(run), flush=True)
    print(f"pair {args.pair}, 1 thread, frozen one-token pass (ms; share of the floor's speed; compile s), per repeat:")
    for dtype in args.dtype:
        for choice in args.products:
            mine = [r for r in runs if r["dtype"] == dtype and r["products"] == choice]
            print(f"  {dtype:<9s} {choice:<10s} " + "   ".join(
                f"{r['pass_ms']:6.2f} ms {r['share_of_floor_speed']:.0%} {r['warm_up_s']:5.1f} s" for r in mine))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"pair": args.pair, "threads": 1, "context": CONTEXT, "runs": runs,
                       "environment": machine_record(cpu=cpu_summary(),
                                                     command="python " + " ".join(sys.argv))}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
