"""Samples per second of vLLM (CPU) for what an audit asks: the first 2 (or 3) tokens of many samples of one prompt.

Notation: gamma = draft tokens per round, n = samples per request, M = new tokens per sample.

    .venv-vllm/bin/python engines/vllm/bench_throughput.py --model DIR [--method ngram|draft|none] [--draft DIR]
        [--gamma 4] [--dtype float32] [--max-num-seqs 256] [--runs "500x2,500x3"] [--fix expand,empty-top-k]
        [--block-size 32] [--prompt-lengths 15,33]

Each run is one ``SamplingParams(n=n, max_tokens=M, seed=S, ignore_eos=True)`` request at T = 1 on the prompt
"the cat sat on the mat. the cat sat on the mat. the" (prompt lookup drafts there; ``--prompt-lengths``: the last L
tokens of that text repeated, each run at each length), timed around
``LLM.generate`` (wall and CPU time: the engine core runs in this process, so its CPU time per sample is the
figure a loaded machine disturbs least); printed as one JSON line per run with the spec-decode counters over
it and the load average.
What each choice exercises: M = 2 verifies one drafted row per sample (x2) besides the prefill (x1 is not drafted
where the prompt has no full KV block; where the prefix cache holds all its tokens but the last, vLLM drafts x1
too); M = 3 with gamma = 1 reaches the bonus token whenever that draft is accepted; every verify step
runs gamma + 1 positions of every sequence, so gamma sets the cost of a step and max_num_seqs the batch. Prefix
caching shares only a prompt's full KV blocks (``--block-size`` tokens) among a request's n children, so each child
computes the tokens after the last full block again: a 15-token prompt 15 of them at block size 32, a 33-token
prompt one.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

PROMPT = [1195, 2644, 2643, 335, 260, 1171, 30, 260, 2644, 2643, 335, 260, 1171, 30, 260]
NAMES = ("vllm:spec_decode_num_drafts", "vllm:spec_decode_num_draft_tokens", "vllm:spec_decode_num_accepted_tokens")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--method", choices=("ngram", "draft", "none"), default="ngram")
    parser.add_argument("--draft")
    parser.add_argument("--gamma", type=int, default=4)
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--max-num-seqs", type=int, default=256)
    parser.add_argument("--runs", default="500x2,500x3", help="comma-separated n x M")
    parser.add_argument("--fix", default="", help="the engine's in-process patches (specmath_vllm_engine.py)")
    parser.add_argument("--block-size", type=int, default=None, help="KV block size (default: the backend's own)")
    parser.add_argument("--prompt-lengths", default="15", help="comma-separated prompt lengths in tokens")
    args = parser.parse_args()
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"  # the patches reach the engine core only in-process
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from specmath_vllm_engine import Hooks
    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt

    Hooks([f for f in args.fix.split(",") if f])
    spec = None
    if args.method == "ngram":
        spec = {"method": "ngram", "num_speculative_tokens": args.gamma, "prompt_lookup_max": 3, "prompt_lookup_min": 1}
    elif args.method == "draft":
        spec = {"method": "draft_model", "model": args.draft, "num_speculative_tokens": args.gamma}
    start = time.perf_counter()
    llm = LLM(model=args.model, dtype=args.dtype, enforce_eager=True, gpu_memory_utilization=0.15,
              max_num_seqs=args.max_num_seqs, max_model_len=1024, disable_log_stats=False,
              enable_chunked_prefill=False, speculative_config=spec,
              **({"block_size": args.block_size} if args.block_size else {}))
    lengths = [int(x) for x in args.prompt_lengths.split(",")]
    load = time.perf_counter() - start
    runs = [(run, length) for run in args.runs.split(",") for length in lengths]
    for i, (run, length) in enumerate(runs):
        n, max_tokens = (int(x) for x in run.split("x"))
        prompt = (PROMPT * (length // len(PROMPT) + 1))[-length:]
        before = {m.name: m.value for m in llm.get_metrics() if m.name in NAMES}
        cpu_start, start = time.process_time(), time.perf_counter()
        llm.generate(TokensPrompt(prompt_token_ids=prompt),
                     SamplingParams(n=n, max_tokens=max_tokens, seed=1000 * i, ignore_eos=True), use_tqdm=False)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
        after = {m.name: m.value for m in llm.get_metrics() if m.name in NAMES}
        counts = {k.split("num_")[1]: after.get(k, 0) - before.get(k, 0) for k in NAMES}
        print("BENCH " + json.dumps({"method": args.method, "gamma": args.gamma if spec else 0, "dtype": args.dtype,
                                     "max_num_seqs": args.max_num_seqs, "fix": args.fix, "n": n, "M": max_tokens,
                                     "prompt_tokens": length, "block_size": args.block_size,
                                     "seconds": round(seconds, 1), "samples_per_s": round(n / seconds, 1),
                                     # CPU seconds of this process (the engine core runs in it): less
                                     # sensitive than wall time to a shared machine's load
                                     "cpu_s": round(cpu, 1), "cpu_ms_per_sample": round(1000 * cpu / n, 1),
                                     "load_s": round(load, 1), **counts,
                                     "loadavg": os.getloadavg()[0]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
