"""Eager against compiled decoding, interleaved: the compile speedup, speculative over compiled plain, the roofline.

    python benchmarks/decode_speed.py [--pair bundled] [--dtype float32] [--repeats 3] [--busy 0]
                                      [--max-new-tokens 64] [--plain-only] [--json FILE]

Per repeat, prompt by prompt (the pair's own, seed 0 + i, the pair's eos): plain decoding eager, plain
compiled, speculative eager, speculative compiled (``DecodeOptions(compile=...)``, gamma 4, T = 1), then
the prompts' prefill on each cache (``cost_measure.prefill_seconds``: plain decoding's rate without it is its decode
rate, what the roofline bounds), a 1-token target pass on each cache, the copy loop (``roofline.memory_bandwidth``) and a sweep of batch-1
``F.linear`` over the target's own weight matrices (``roofline.linear_bandwidth``: how fast torch's kernels
stream them, the bound on any decoder built on those kernels) and the same products as the compiled one-token
pass computes them over a small model's float32 / float64 weights (``streamed_products``). So every ratio
is taken within one repeat, on the same machine state, and the result is each repeat's ratios, their
median and their range, with the load average before and after each repeat. The compile happens in an
untimed warm-up (every prompt once through each compiled decoder) and is reported as ``compile_s``.
``--busy N`` starts N CPU-bound processes (``while True: pass``) beside the measurement and stops them
after it (by their process ids), to show what a busy machine does to the ratios. ``--plain-only``
skips the speculative runs (SmolLM2's roofline check).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from statistics import median

import torch

from specmath.lm.bench_result import cpu_burners, load_average
from specmath.lm.cache import RowCache
from specmath.lm.cost_measure import prefill_seconds
from specmath.lm.decode_options import DecodeOptions
from specmath.lm.pairs import load_named_pair
from specmath.lm.plain_decode import plain_generate
from specmath.lm.roofline import Roofline, linear_bandwidth, linear_weights, memory_bandwidth, weight_bytes
from specmath.lm.speculative_decode import speculative_generate
from specmath.lm.static_cache import StaticRowCache

KINDS = ("plain_eager", "plain_compiled", "speculative_eager", "speculative_compiled")


def _spread(values: list[float]) -> dict:
    mid = median(values)
    return {"median": mid, "min": min(values), "max": max(values), "relative_range": (max(values) - min(values)) / mid}


@torch.inference_mode()
def one_token_pass(model: torch.nn.Module, cache_class, prompt: list[int], repeats: int = 20) -> float:
    """Median seconds of a cached 1-token pass after ``prompt`` (then rolled back), on ``cache_class``'s cache."""
    cache = cache_class(model, 1)
    cache.prefill([prompt[:-1]])
    base = cache.lengths[0]
    times = []
    for _ in range(repeats + 1):
        start = time.perf_counter()
        cache.feed([[prompt[-1]]])
        times.append(time.perf_counter() - start)
        cache.keep([base])
    return median(times[1:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pair", default="bundled")
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float64"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--busy", type=int, default=0, help="CPU-bound processes to run beside the measurement")
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--prompts", type=int, default=4)
    parser.add_argument("--plain-only", action="store_true")
    parser.add_argument("--json", default=None, help="write the result here too")
    args = parser.parse_args()
    pair = load_named_pair(args.pair, dtype=getattr(torch, args.dtype))
    prompts = pair.prompts[: args.prompts]
    kinds = KINDS[:2] if args.plain_only else KINDS
    base = DecodeOptions(gamma=4, eos_token_id=pair.eos_token_id, vocab_size=pair.vocab_size)

    def decode(kind: str, i: int, tokens: int):
        options = base.replace(seed=i, compile=kind.endswith("compiled"))
        if kind.startswith("plain"):
            return plain_generate(pair.target, [prompts[i]], tokens, options)
        return speculative_generate(pair.target, pair.draft, [prompts[i]], tokens, options)

    linears = linear_weights(pair.target)
    start = time.perf_counter()
    for kind in kinds:  # warm-up: kernels, and with compile every graph the runs meet
        if kind.endswith("compiled"):
            for i in range(len(prompts)):
                decode(kind, i, args.max_new_tokens)
    compile_s = time.perf_counter() - start
    with cpu_burners(args.busy):
        repeats = []
        for _ in range(args.repeats):
            load_before = load_average()
            seconds, tokens = dict.fromkeys(kinds, 0.0), dict.fromkeys(kinds, 0)
            for i in range(len(prompts)):
                for kind in kinds:
                    t0 = time.perf_counter()
                    out = decode(kind, i, args.max_new_tokens)
                    seconds[kind] += time.perf_counter() - t0
                    tokens[kind] += len(out.tokens[0])
            # plain decoding's tokens over its time less its prompts' prefill (all but each prompt's last token)
            prefill = {mode: prefill_seconds(prompts, target=pair.target, options=base.replace(compile=mode == "compiled"))
                       for mode in ("eager", "compiled")}
            t1 = {"eager": one_token_pass(pair.target, RowCache, prompts[0]),
                  "compiled": one_token_pass(pair.target, lambda m, b: StaticRowCache(m, b, compiled=True), prompts[0])}
            rate = {kind: tokens[kind] / seconds[kind] for kind in kinds}
            decode_rate = {mode: tokens[f"plain_{mode}"] / (seconds[f"plain_{mode}"] - prefill[mode])
                           for mode in ("eager", "compiled")}
            repeat = {"tokens_per_s": rate, "new_tokens": tokens, "one_token_pass_s": t1, "prefill_s": prefill,
                      "plain_decode_tokens_per_s": decode_rate,
                      "bandwidth_GB_per_s": memory_bandwidth() / 1e9, "linear_GB_per_s": linear_bandwidth(linears) / 1e9,
                      "streamed_GB_per_s": linear_bandwidth(linears, streamed=True) / 1e9,
                      "load_average": [load_before, load_average()],
                      "compiled_over_eager_plain": rate["plain_compiled"] / rate["plain_eager"]}
            if not args.plain_only:
                repeat["compiled_over_eager_speculative"] = rate["speculative_compiled"] / rate["speculative_eager"]
                repeat["speculative_over_plain_compiled"] = rate["speculative_compiled"] / rate["plain_compiled"]
                repeat["speculative_over_plain_eager"] = rate["speculative_eager"] / rate["plain_eager"]
            repeats.append(repeat)
            print(json.dumps(repeat), flush=True)
    ratios = [k for k in repeats[0] if "_over_" in k]
    bandwidth = median(r["bandwidth_GB_per_s"] for r in repeats) * 1e9
    floor_pass_s = weight_bytes(pair.target) / bandwidth
    linear_rate = median(r["linear_GB_per_s"] for r in repeats) * 1e9
    streamed_rate = median(r["streamed_GB_per_s"] for r in repeats) * 1e9
    result = {
        "pair": pair.name, "dtype": args.dtype, "threads": torch.get_num_threads(), "busy_processes": args.busy,
        "prompts": len(prompts), "max_new_tokens": args.max_new_tokens, "gamma": 4, "compile_s": compile_s,
        "cpu_count": os.cpu_count(), "torch": torch.__version__, "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "command": "python " + " ".join(sys.argv),
        "repeats": repeats, **{k: _spread([r[k] for r in repeats]) for k in ratios},
        "tokens_per_s": {kind: median(r["tokens_per_s"][kind] for r in repeats) for kind in kinds},
        "one_token_pass_s": {k: median(r["one_token_pass_s"][k] for r in repeats) for k in ("eager", "compiled")},
        "roofline": {kind: Roofline(weight_bytes(pair.target), bandwidth,
                                    median(r["tokens_per_s"][kind] for r in repeats)).to_json()
                     for kind in ("plain_eager", "plain_compiled")},
        # plain decoding without its prompts' prefill, the rate the floor bounds
        "decode_roofline": {mode: Roofline(weight_bytes(pair.target), bandwidth,
                                           median(r["plain_decode_tokens_per_s"][mode] for r in repeats)).to_json()
                            for mode in ("eager", "compiled")},
        # the 1-token pass against the floor W / B, its prompt's prefill and the sampling left out
        "pass_fraction": {k: floor_pass_s / median(r["one_token_pass_s"][k] for r in repeats) for k in ("eager", "compiled")},
        # the matrix products alone: bytes/s of F.linear over the target's matrices, over the copy loop's B
        "linear_sweep": {"weight_bytes": sum(w.numel() * w.element_size() for w in linears),
                         "GB_per_s": linear_rate / 1e9, "over_copy_loop": linear_rate / bandwidth},
        # the same products as the compiled one-token pass computes them (``streamed_products``)
        "streamed_sweep": {"GB_per_s": streamed_rate / 1e9, "over_copy_loop": streamed_rate / bandwidth},
    }
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
