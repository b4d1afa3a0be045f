"""Samples per second of the GGUF engines: one call at a time against GGUF_PARALLEL side by side, interleaved.

    .venv/bin/python benchmarks/gguf_engine_throughput.py [--engines NAME ...] [--n 128] [--repeats 3]
                                                          [--json FILE]

An audit's sample is one generate call of two new tokens on one prompt (the T=1 row's prompt: "the cat sat on
the mat. " twice, then "the"), speculative, at T = 1. Each engine of ``make engines`` is started twice from its
registry command, once with its batch size (llama.cpp's ``-np``, node-llama-cpp's ``--parallel``) set to 1 and
once as the registry runs it (``GGUF_PARALLEL``), and the two are timed in turn, A B A B ..., ``--n`` calls a
request, after one untimed request each. Per repeat the ratio of the two rates; the result is the median ratio
and its range, with the load average before and after. Both engines run one thread, on a machine that may have
other work: the ratio is what one run on it measured, not a constant.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from statistics import median

from specmath.audit.engines.jsonl import JsonLinesEngine
from specmath.audit.engines.registry import ENGINES, GGUF_PARALLEL, engines_for
from specmath.lm.bench_result import load_average
from specmath.lm.models import locate_smollm2_gguf
from specmath.sampling_options import SamplingOptions

#: "the cat sat on the mat. the cat sat on the mat. the" in SmolLM2's vocabulary: a lookup drafts at it
PROMPT = [1195, 2644, 2643, 335, 260, 1171, 30, 260, 2644, 2643, 335, 260, 1171, 30, 260]


def engine_with_batch(name: str, batch: int) -> JsonLinesEngine:
    """The registry's engine ``name`` on the SmolLM2 GGUF, its calls side by side set to ``batch``."""
    return JsonLinesEngine(ENGINES[name].command_line(locate_smollm2_gguf(), side_by_side=batch), name=name)


def samples_per_second(engine: JsonLinesEngine, n: int, seed: int) -> float:
    start = time.perf_counter()
    engine.generate(PROMPT, n, seed, 2, SamplingOptions(1.0))
    return n / (time.perf_counter() - start)


def measure(name: str, n: int, repeats: int) -> dict:
    with engine_with_batch(name, 1) as alone, engine_with_batch(name, GGUF_PARALLEL) as batched:
        for engine in (alone, batched):
            samples_per_second(engine, min(n, 2 * GGUF_PARALLEL), 10**6)  # untimed: the prompt, the caches
        runs = []
        for r in range(repeats):
            before = load_average()
            one = samples_per_second(alone, n, r * n)
            side = samples_per_second(batched, n, r * n)
            runs.append({"one_at_a_time": one, "side_by_side": side, "ratio": side / one,
                         "load_before": before, "load_after": load_average()})
    ratios = [r["ratio"] for r in runs]
    return {"engine": name, "batch": GGUF_PARALLEL, "n": n, "runs": runs,
            "one_at_a_time": median(r["one_at_a_time"] for r in runs),
            "side_by_side": median(r["side_by_side"] for r in runs),
            "ratio": median(ratios), "ratio_range": [min(ratios), max(ratios)]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", nargs="*", default=list(engines_for("gguf")))
    parser.add_argument("--n", type=int, default=128, help="calls per timed request")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=str, default=None, help="also write the results here")
    args = parser.parse_args()
    if args.n < 1 or args.repeats < 1:
        parser.error("--n and --repeats must be at least 1")
    for name in args.engines:
        if name not in engines_for("gguf"):
            parser.error(f"--engines: {name!r} is not a GGUF engine; use {', '.join(engines_for('gguf'))}")
        if ENGINES[name].unavailable():
            parser.error(f"{name}: {ENGINES[name].unavailable()}")
    results = []
    print(f"{'engine':24s} {'1 at a time':>12s} {f'{GGUF_PARALLEL} beside':>10s} {'ratio':>6s}  range       "
          "(samples/s, 2 tokens each)")
    for name in args.engines:
        result = measure(name, args.n, args.repeats)
        results.append(result)
        low, high = result["ratio_range"]
        print(f"{name:24s} {result['one_at_a_time']:12.1f} {result['side_by_side']:10.1f} {result['ratio']:5.2f}x  "
              f"{low:.2f}-{high:.2f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
