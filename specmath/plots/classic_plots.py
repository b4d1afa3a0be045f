"""Figures for the article's classic samplers: the two-token world, rand5 -> rand7, the coin."""

from __future__ import annotations

from fractions import Fraction

import matplotlib.pyplot as plt

from specmath.classic import fair_coin, rand7
from specmath.exact import exact
from specmath.figures import figure
from specmath.speculative import two_token


@figure("two_token_paths.png")
def plot_two_token_paths():
    """Stacked bars: how each path of one step contributes to P(A) and P(B), next to p and q."""
    rows = two_token.path_table()
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    tokens = ["A", "B"]
    bottoms = {t: 0.0 for t in tokens}
    # one colour per path: (draft token, accepted?)
    colors = {("A", True): "#4C72B0", ("B", True): "#55A868", ("B", False): "#C44E52", ("A", False): "#DD8452"}
    for row in rows:
        out = row["output"]
        label = f"draft {row['draft']}, " + ("accepted" if row["accepted"] else f"rejected -> resample {row['resampled']}")
        h = float(row["probability"])
        ax.bar(tokens.index(out), h, bottom=bottoms[out], color=colors[(row["draft"], row["accepted"])],
               edgecolor="white", label=f"{label}: {row['probability']}")
        bottoms[out] += h
    for i, t in enumerate(tokens):
        ax.hlines(float(two_token.TARGET[t]), i - 0.45, i + 0.45, colors="black", linestyles="--",
                  label="target p(x)" if i == 0 else None)
        ax.text(i + 0.47, float(two_token.TARGET[t]), f"p({t}) = {two_token.TARGET[t]}", va="center", fontsize=8)
        ax.plot(i - 0.3, float(two_token.DRAFT[t]), "v", color="gray", label="draft q(x)" if i == 0 else None)
    ax.set_xticks([0, 1], tokens)
    ax.set_ylabel("probability")
    ax.set_title("Two-token world: the three paths add up to p exactly")
    ax.legend(fontsize=8, loc="upper right")
    ax.set_ylim(0, 1.2)
    return fig


@figure("rand7_levels.png")
def plot_rand7_levels():
    """Expected rand5 calls: basic rejection vs the article's recycling, with where outputs happen."""
    basic = exact(rand7.rand7_basic)
    article = exact(rand7.rand7_article)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.6))
    names = ["basic\n(reject 22..25)", "article\n(3 recycling levels)"]
    values = [basic.expected_cost("rand5"), article.expected_cost("rand5")]
    ax1.bar(names, [float(v) for v in values], color=["#8172B2", "#4C72B0"])
    for i, v in enumerate(values):
        ax1.text(i, float(v) + 0.03, f"{v} ~ {float(v):.4f}", ha="center", fontsize=9)
    ax1.set_ylabel("expected rand5 calls per rand7")
    ax1.set_ylim(0, 2.8)
    ax1.set_title("Recycling the rejected value saves calls")
    levels = ["level 1", "level 2", "level 3", "fallback"]
    probs = [article.expected_cost(k) for k in levels]
    ax2.bar(levels, [float(p) for p in probs], color="#55A868")
    ax2.set_yscale("log")
    ax2.set_ylim(1e-3, 3)
    for i, p in enumerate(probs):
        ax2.text(i, float(p) * 1.15, f"{p}", ha="center", fontsize=9)
    ax2.set_ylabel("P(output produced here)")
    ax2.set_title("Article sampler: where the output comes from")
    fig.tight_layout()
    return fig


@figure("von_neumann_flips.png")
def plot_von_neumann_flips():
    """Exact expected flips 1/(p(1-p)) of von Neumann's trick for rational p in (0, 1)."""
    ps = [Fraction(k, 40) for k in range(2, 39)]
    flips = [exact(fair_coin.von_neumann, p).expected_cost("flip") for p in ps]
    fig, ax = plt.subplots(figsize=(6, 3.6))
    ax.plot([float(p) for p in ps], [float(f) for f in flips], "o-", ms=3)
    ax.set_yscale("log")
    ax.set_xlabel("coin bias p")
    ax.set_ylabel("expected flips per fair bit")
    ax.set_title("Von Neumann's fair coin: E[flips] = 1/(p(1-p)), minimum 4 at p = 1/2")
    return fig
