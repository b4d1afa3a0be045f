"""Figures beyond the article: the bug zoo's exact TV distances, block vs token-wise, multi-draft vs k.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)). Every number plotted is an exact Fraction converted for drawing.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt

from specmath.figures import figure
from specmath.plots.panels import finish_panels
from specmath.speculative.block import block_vs_tokenwise
from specmath.speculative.examples import PAPER_EXAMPLE
from specmath.speculative.multidraft import accepted_length_against_k
from specmath.speculative.sample_match import sampled_vs_tokenwise

__all__ = ["plot_bug_zoo_tv", "plot_block_vs_tokenwise", "plot_multidraft_k"]


def _pairs():
    from specmath.speculative.examples import WORD_DRAFT, WORD_TARGET

    return {
        "paper pair: p = {a: 1/3, b: 2/3}, q = {a: 2/3, b: 1/3}": PAPER_EXAMPLE,
        "word pair (context-dependent, 3 tokens)": (WORD_TARGET, WORD_DRAFT),
    }


@figure("bug_zoo_tv.png")
def plot_bug_zoo_tv():
    """log10 of each bug's exact TV from the target (0.5 down to 2^-126): some no sampling test can see."""
    from specmath.bugzoo import BUGS

    rows = sorted(((bug.tv(), name) for name, bug in BUGS.items()), reverse=True)
    fig, ax = plt.subplots(figsize=(8, 4.6))
    # log10 of a Fraction, exactly enough for drawing: log10(num) - log10(den)
    logs = [math.log10(tv.numerator) - math.log10(tv.denominator) for tv, _ in rows]
    ax.barh(range(len(rows)), [-v for v in logs], color="#C44E52")
    for i, (tv, _) in enumerate(rows):
        label = f"{tv}" if tv.denominator < 10**6 else f"~{float(tv):.3g}"
        ax.text(-logs[i] + 0.4, i, label, va="center", fontsize=8)
    ax.set_yticks(range(len(rows)), [name for _, name in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("-log10 TV(lossy law, target law)   (longer bar = subtler bug)")
    ax.axvline(-math.log10(0.05), color="gray", ls="--", lw=1)
    ax.annotate("TV = 0.05: a few thousand samples already see it", xy=(-math.log10(0.05), 1.5), xytext=(8, 1.5),
                fontsize=8, color="gray", va="center", arrowprops={"arrowstyle": "->", "color": "gray"})
    ax.set_xlim(0, 45)
    ax.set_title("Bug zoo: exact TV distance of each lossy variant on its smallest instance")
    fig.tight_layout()
    return fig


@figure("block_vs_tokenwise.png")
def plot_block_vs_tokenwise():
    """E[accepted draft tokens per round] against gamma: block >= token-wise >= sample-match."""
    gammas = [1, 2, 3, 4]
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.8), sharey=False)
    for ax, (title, (target, draft)) in zip(axes, _pairs().items(), strict=True):
        gs = gammas if "paper" in title else gammas[:3]
        rows = [block_vs_tokenwise(target, draft, (), g) | sampled_vs_tokenwise(target, draft, (), g) for g in gs]
        for key, style in (("block", "o-"), ("token-wise", "s-"), ("sample-match", "^--")):
            ax.plot(gs, [float(r[key]) for r in rows], style, label=key)
        if "paper" in title:
            ax.annotate("10/9 vs 11/9", (2, float(rows[1]["block"])), textcoords="offset points", xytext=(8, -18), fontsize=8)
        ax.set_xticks(gs)
        ax.set_title(title, fontsize=9)
    return finish_panels(fig, axes, xlabel="gamma (draft tokens per round)", ylabel="E[accepted draft tokens per round]",
                         title="Block verification accepts at least as much as token-wise (exact)")


@figure("multidraft_k.png")
def plot_multidraft_k():
    """E[accepted draft tokens per round] against the number k of independent drafts (recursive rejection)."""
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.8))
    for ax, (title, (target, draft)) in zip(axes, _pairs().items(), strict=True):
        ks = [1, 2, 3, 4] if "paper" in title else [1, 2, 3]
        for gamma, style in ((1, "o-"), (2, "s-")):
            values = accepted_length_against_k(target, draft, (), gamma, ks)
            ax.plot(ks, [float(values[k]) for k in ks], style, label=f"gamma = {gamma}")
        if "word" in title:
            # the root residual norm(max(0, p - q)) is all on z, which the draft never proposes
            ax.text(1.1, 1.15, "gamma = 1 is flat: q(z | ()) = 0,\nbut the root residual is all z", fontsize=8, color="gray")
        ax.set_xticks(ks)
        ax.set_title(title, fontsize=9)
    return finish_panels(fig, axes, xlabel="k (independent drafts)", ylabel="E[accepted draft tokens per round]",
                         title="Multi-draft: more drafts, more accepted tokens, same output law")
