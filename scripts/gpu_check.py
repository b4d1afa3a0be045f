"""GPU check: the histogram test and the timing, end to end, on CUDA (CPU when CUDA is absent).

    python scripts/gpu_check.py [--out gpu_check.json] [--n 20000] [--pairs bundled smollm2 TARGET,DRAFT]

Writes one JSON file with the device, the histogram checks (G statistic, p-value, TV with its 99%
bound, the power: the smallest TV detected at level 1e-6 with probability 0.99) for the lossless
rule and the lossy negative control, and ``specmath bench``'s numbers for each pair (measured
speedup, the measured-cost prediction, k(gamma), c). Designed to
finish in under 5 minutes on one GPU; on a CPU use a smaller --n.
Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p, q).
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import torch

from specmath.choices import GAMMA_AUTO, MEASURED_DTYPES
from specmath.lm.bench import bench_pair
from specmath.lm.histogram import lossless_report
from specmath.lm.pairs import TEXT_PROMPTS, load_named_pair
from specmath.lm.warps import Sampling


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="gpu_check.json")
    parser.add_argument("--n", type=int, default=None, help="samples per histogram (default 20000 on CUDA, 4000 on CPU)")
    parser.add_argument("--pairs", nargs="*", default=None,
                        help="default: bundled and smollm2 on CUDA, bundled on CPU (a 135M model's histogram is slow there)")
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--dtype", default="float32", choices=MEASURED_DTYPES)
    parser.add_argument("--gamma", type=lambda v: v if v == GAMMA_AUTO else int(v), default=4, help="draft tokens per round or 'auto'")
    args = parser.parse_args()
    cuda = torch.cuda.is_available()
    device = "cuda" if cuda else "cpu"
    dtype = getattr(torch, args.dtype)
    n = args.n or (20000 if cuda else 4000)
    pairs = args.pairs or (["bundled", "smollm2"] if cuda else ["bundled"])
    start = time.perf_counter()
    report = {"device": torch.cuda.get_device_name(0) if cuda else platform.processor() or "cpu",
              "torch": torch.__version__, "dtype": args.dtype, "n": n, "histograms": {}, "bench": []}
    for name in pairs:
        pair = load_named_pair(name, dtype=dtype, device=device)
        if name == "bundled":
            prompt = pair.tokenizer(TEXT_PROMPTS[2], add_special_tokens=False)["input_ids"]
        else:
            prompt = pair.prompts[0]
        checks = lossless_report(pair.target, pair.draft, prompt, n=n, gamma=4, sampling=Sampling(top_k=20),
                                 batch_size=min(n, 5000), vocab_size=pair.vocab_size)
        report["histograms"][name] = {k: v.to_json() for k, v in checks.items()}
        print(name, json.dumps(report["histograms"][name], indent=1), flush=True)
        report["bench"].append(bench_pair(pair, max_new_tokens=args.max_new_tokens, gamma=args.gamma).to_json())
        print(json.dumps(report["bench"][-1], indent=1), flush=True)
    report["seconds"] = time.perf_counter() - start
    with open(args.out, "w") as f:
        json.dump(report, f, indent=2)
    print(f"wrote {args.out} in {report['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
