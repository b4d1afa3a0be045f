"""``specmath bench [--pair bundled|smollm2|TARGET,DRAFT] [--json]``: plain vs speculative vs HF assisted tokens/s.

One run, same models, prompts and seed: tokens/s of plain decoding, specmath's speculative decoding
and Hugging Face ``generate(assistant_model=...)`` (or ``prompt_lookup_num_tokens``); alpha, mean
tokens per round, cost ratio c, and the predicted speedup (1 - alpha^(gamma+1)) / ((1 - alpha)(gamma c + 1))
next to the measured one. Imports torch only when run.
"""

from __future__ import annotations

import argparse
import json


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pair", action="append", help="bundled, smollm2[:int8|lookup|skipK] or TARGET,DRAFT (repeatable; default: bundled and smollm2)")
    parser.add_argument("--gamma", type=int, default=None, help="draft tokens per round (default: 4)")
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--prompts", type=int, default=4, help="how many of the pair's prompts to time")
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--top-k", type=int, default=None)
    parser.add_argument("--top-p", type=float, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default=None, help="cpu or cuda (default: cuda if available)")
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--no-hf", action="store_true", help="skip HF assisted generation")
    parser.add_argument("--json", action="store_true", help="print one JSON list instead of a table")


DEFAULT_GAMMA = {"bundled": 4, "smollm2": 4}


def _table(r: dict) -> str:
    rate = r["tokens_per_s"]
    lines = [
        f"pair {r['pair']} on {r['device']} ({r['dtype']}, {r['threads']} threads), gamma={r['gamma']}, "
        f"{r['prompts']} prompts x {r['max_new_tokens']} tokens, T={r['sampling']['temperature']}",
        f"  tokens/s   plain {rate['plain']:.1f}   speculative {rate['speculative']:.1f}   HF assisted {rate['hf_assisted']:.1f}",
        f"  alpha {r['alpha']:.3f}   tokens/round {r['mean_tokens_per_round']:.2f} (model {r['predicted_tokens_per_round']:.2f})"
        f"   c {r['cost_ratio_c']:.3f}   target forward {r['gamma'] + 1} vs 1 tokens: x{r['target_forward_s']['ratio']:.2f}",
        f"  speedup   measured {r['measured_speedup_vs_plain']:.2f}x   predicted {r['predicted_speedup']:.2f}x"
        + (f"   vs HF assisted {r['speedup_vs_hf_assisted']:.2f}x" if r["speedup_vs_hf_assisted"] else ""),
    ]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    import torch

    from specmath.lm.pairs import load_named_pair
    from specmath.lm.timing import bench_pair
    from specmath.lm.warps import Sampling

    if args.threads:
        torch.set_num_threads(args.threads)
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    dtype = getattr(torch, args.dtype)
    sampling = Sampling(args.temperature, args.top_k, args.top_p)
    results = []
    for name in args.pair or ["bundled", "smollm2"]:
        pair = load_named_pair(name, dtype=dtype, device=device)
        gamma = args.gamma or DEFAULT_GAMMA.get(name.partition(":")[0], 4)
        results.append(bench_pair(name, pair.target, pair.draft, pair.prompts[: args.prompts], args.max_new_tokens, gamma,
                                  sampling, args.seed, pair.vocab_size, hf=not args.no_hf, progress=not args.json))
        if not args.json:
            print(_table(results[-1]), flush=True)
    if args.json:
        print(json.dumps(results, indent=2))
    return 0
