"""Figures for the entropy limit: rand7's calls per output by method, and coin extractors' rates."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np

from specmath.classic.rand7 import rand7_article, rand7_basic
from specmath.entropy.extractors import elias_rate, peres_rate, von_neumann_rate
from specmath.entropy.rand_recycling import rand7_recycling
from specmath.entropy.recycling_stream import RecyclingStream, long_run_calls_per_output, numpy_rolls
from specmath.exact import exact
from specmath.figures import figure

#: state bounds whose long-run cost is solved exactly, and those measured (seeded) on the figure
EXACT_BOUNDS = (7, 16, 49)
MEASURED_BOUNDS = (2**8, 2**12, 2**16, 2**32)
MEASURED_OUTPUTS, MEASURED_SEED = 100_000, 2025


@figure("rand7_calls_by_method.png")
def plot_rand7_calls_by_method():
    """Expected rand5 calls per rand7: one output at a time (exact) and the stream by state size."""
    limit = math.log(7, 5)
    one_at_a_time = [
        ("basic\nrejection", exact(rand7_basic).expected_cost("rand5")),
        ("article\n(3 levels)", exact(rand7_article).expected_cost("rand5")),
        ("unbounded\nrecycling", exact(rand7_recycling).expected_cost("rand5")),
    ]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.9), gridspec_kw={"width_ratios": [1, 1.4]})
    ax1.bar([n for n, _ in one_at_a_time], [float(v) for _, v in one_at_a_time], color=["#8172B2", "#4C72B0", "#55A868"])
    for i, (_, v) in enumerate(one_at_a_time):
        ax1.text(i, float(v) + 0.04, f"{v}\n~ {float(v):.4f}", ha="center", fontsize=8)
    ax1.axhline(limit, color="black", ls="--", lw=1)
    ax1.text(1, limit / 2, f"entropy limit\n(dashed)\n{limit:.4f}", ha="center", fontsize=8, color="white")
    ax1.set_ylim(0, 2.9)
    ax1.set_ylabel("rand5 calls per rand7")
    ax1.set_title("One output at a time (exact)")
    exact_costs = [float(long_run_calls_per_output(5, 7, b)) for b in EXACT_BOUNDS]
    measured = []
    for b in MEASURED_BOUNDS:
        stream = RecyclingStream(5, 7, b, numpy_rolls(5, np.random.default_rng(MEASURED_SEED)))
        stream.take(MEASURED_OUTPUTS)
        measured.append(stream.calls / MEASURED_OUTPUTS)
    ax2.plot(EXACT_BOUNDS, exact_costs, "o-", color="#4C72B0", label="stream, exact long-run cost")
    ax2.plot(MEASURED_BOUNDS, measured, "s--", mfc="white", color="#4C72B0", label=f"stream, measured ({MEASURED_OUTPUTS:,} outputs)")
    ax2.axhline(limit, color="black", ls="--", lw=1, label="log_5 7")
    ax2.set_xscale("log", base=2)
    ax2.set_ylim(1.18, 1.6)
    ax2.set_xlabel("state size bound (the leftover is refilled up to this size)")
    ax2.set_ylabel("rand5 calls per rand7")
    ax2.set_title("Recycling stream (best one at a time: 1115/504 ~ 2.21)")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    return fig


@figure("coin_rates.png")
def plot_coin_rates():
    """Bits per flip of a p-coin: von Neumann, Peres at several depths, Elias blocks, against H(p)."""
    ps = np.linspace(0.005, 0.995, 199)
    fig, ax = plt.subplots(figsize=(8.5, 4.2))
    entropy = -(ps * np.log2(ps) + (1 - ps) * np.log2(1 - ps))
    ax.plot(ps, entropy, color="black", lw=2, label="H(p): the limit")
    for depth, color in ((8, "#C44E52"), (4, "#DD8452"), (2, "#CCB974")):
        ax.plot(ps, [peres_rate(float(p), depth) for p in ps], color=color, label=f"Peres, depth {depth} (n -> oo)")
    for n, style in ((64, "-."), (8, ":")):
        ax.plot(ps, [elias_rate(float(p), n) for p in ps], ls=style, color="#55A868", label=f"Elias, blocks of n = {n}")
    ax.plot(ps, [von_neumann_rate(float(p)) for p in ps], color="#4C72B0", label="von Neumann: p (1 - p)")
    ax.axvline(0.3, color="gray", lw=0.8, ls="--")
    ax.set_xlabel("coin bias p = P(heads)")
    ax.set_ylabel("fair bits per flip")
    ax.set_title("How close extractors come to the entropy H(p)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.text(0.31, 0.02, "p = 0.3", fontsize=8, color="gray")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig
