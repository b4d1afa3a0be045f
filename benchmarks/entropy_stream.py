"""Calls per rand7 of the recycling stream against its state size, over 10^6 outputs.

Run: .venv/bin/python benchmarks/entropy_stream.py [--outputs 1000000] [--seed 2025]

For each state size bound: the exact long-run calls per output (solved over the chain of state
sizes; small bounds only, it grows costly), the measured calls per output over N outputs of
``RecyclingStream`` (the integer path checked draw for draw against the proved program), and the
gap to the entropy limit log_5 7 = 1.20906. The one-output-at-a-time samplers' exact costs are
printed first for comparison. The measured numbers are random (seeded); for the small bounds they
agree with the exact long-run values to about 2e-4, the sampling noise at 10^6 outputs.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from specmath.classic.rand7 import rand7_article, rand7_basic
from specmath.entropy.rand_recycling import rand7_recycling
from specmath.entropy.recycling_stream import RecyclingStream, long_run_calls_per_output, numpy_rolls
from specmath.exact import exact

#: state size bounds measured, and those small enough for the exact long-run value
BOUNDS = [7, 16, 49, 2**8, 2**12, 2**16, 2**32, 2**62]
EXACT_BOUNDS = {7, 16, 49}


def measure(bound: int, outputs: int, seed: int) -> tuple[float, float]:
    """(calls per output over ``outputs`` outputs, seconds) for one state size bound."""
    stream = RecyclingStream(5, 7, bound, numpy_rolls(5, np.random.default_rng(seed)))
    start = time.perf_counter()
    for _ in range(outputs):
        next(stream)
    return stream.calls / outputs, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outputs", type=int, default=10**6)
    parser.add_argument("--seed", type=int, default=2025)
    args = parser.parse_args()
    limit = math.log(7, 5)
    print(f"entropy limit log_5 7 = {limit:.6f}; goal <= {limit * 1.001:.4f} (within 0.1%)")
    for name, program in (("basic", rand7_basic), ("article", rand7_article), ("recycling", rand7_recycling)):
        cost = exact(program).expected_cost("rand5")
        print(f"one output at a time, {name:<9}: {cost} = {float(cost):.6f} calls per rand7 (exact)")
    print(f"\n{'state bound':>22} {'exact long-run':>15} {'measured':>10} {'gap to limit':>13} {'seconds':>8}")
    for bound in BOUNDS:
        exact_text = f"{float(long_run_calls_per_output(5, 7, bound)):.6f}" if bound in EXACT_BOUNDS else "-"
        calls, seconds = measure(bound, args.outputs, args.seed)
        print(f"{bound:>22} {exact_text:>15} {calls:>10.6f} {100 * (calls / limit - 1):>12.4f}% {seconds:>8.2f}")
    print(f"\n({args.outputs} outputs per row, seed {args.seed}; timings are noisy on a shared machine)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
