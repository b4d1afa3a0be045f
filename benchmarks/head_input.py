"""The output layer over the last position of a prompt: a sliced 3-d input against the same row as a 2-d matrix.

    python benchmarks/head_input.py [--pair smollm2] [--dtype bfloat16 float32] [--prompt 61] [--repeats 5]

After a prefill of n tokens, the logits of its last position are ``head(h[:, -1:])`` for the hidden states h
(B, n, H). That slice keeps h's stride n H on its first dimension, and torch's CPU ``F.linear`` takes such a
3-d input through a batched product that copies the weight first; ``lean_llama.last_logits`` applies the head to
the same rows as a (B, H) matrix. This times both over a model's own output layer, 1 torch thread, the two forms
alternating within each repeat, and prints the median of each and their ratio.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from run_record import cpu_summary, machine_record  # noqa: E402  (scripts/run_record.py)


def time_call(call, calls: int = 5) -> float:
    """Seconds of one call, the mean of ``calls`` after one untimed call."""
    call()
    start = time.perf_counter()
    for _ in range(calls):
        call()
    return (time.perf_counter() - start) / calls


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pair", default="smollm2")
    parser.add_argument("--dtype", nargs="+", default=["bfloat16", "float32"], choices=("bfloat16", "float16", "float32"))
    parser.add_argument("--prompt", type=int, default=61, help="n, the prefilled tokens whose last position is kept")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", metavar="FILE", default=None)
    args = parser.parse_args(argv)
    if args.prompt < 2 or args.repeats < 1:
        parser.error("--prompt takes an int >= 2, --repeats an int >= 1")
    import torch

    from specmath.lm.lean_llama import last_logits
    from specmath.lm.pairs import load_named_target
    from specmath.lm.static_cache import lean_of

    torch.set_num_threads(1)
    results = []
    for dtype_name in args.dtype:
        dtype = getattr(torch, dtype_name)
        target, _ = load_named_target(args.pair, dtype)
        head = lean_of(target).lm_head
        h = torch.randn(1, args.prompt, head.in_features, generator=torch.Generator().manual_seed(0)).to(dtype)
        sliced, matrix = [], []
        with torch.inference_mode():
            torch.testing.assert_close(head(h[:, -1:]), last_logits(head, h, 1))  # the same product, two layouts
            for _ in range(args.repeats):
                sliced.append(time_call(lambda head=head, h=h: head(h[:, -1:])))
                matrix.append(time_call(lambda head=head, h=h: last_logits(head, h, 1)))
        row = {"dtype": dtype_name, "head": list(head.weight.shape), "prompt": args.prompt,
               "sliced_ms": round(1e3 * median(sliced), 2), "matrix_ms": round(1e3 * median(matrix), 2),
               "sliced_over_matrix": round(median(sliced) / median(matrix), 1)}
        results.append(row)
        print(f"{args.pair} {dtype_name} head {tuple(head.weight.shape)}, last of {args.prompt} positions: "
              f"head(h[:, -1:]) {row['sliced_ms']} ms, last_logits {row['matrix_ms']} ms "
              f"({row['sliced_over_matrix']}x)", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"pair": args.pair, "threads": 1, "results": results,
                       "environment": machine_record(cpu=cpu_summary(), command="python " + " ".join(sys.argv))}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
