"""Figures of token trees: accepted tokens at equal drafted nodes, TV by rule and children, typical acceptance's TV.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)). Every number plotted is an exact Fraction converted for drawing; all
three figures use the tree track's example pair (``specmath.speculative.tree_examples``).
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import matplotlib.pyplot as plt
import numpy as np

from specmath.figures import figure
from specmath.speculative.tree import CHILDREN, accepted_per_round, tv_by_verifier_and_children
from specmath.speculative.tree_examples import EQUAL_NODE_SHAPES, TREE_DRAFT, TREE_TARGET

__all__ = ["ACCEPTED_SERIES", "TYPICAL_EPSILONS", "TYPICAL_DELTAS", "plot_tree_accepted", "plot_tree_rule_tv",
           "plot_typical_acceptance_tv"]

#: (label, children, verifier) of each bar series in ``plot_tree_accepted``
ACCEPTED_SERIES = (
    ("i.i.d. children, SpecInfer", "iid", "specinfer"),
    ("without replacement, RSD", "without-replacement", "without-replacement"),
    ("top-k children, target-only (SGLang)", "top-k", "target-only"),
)
#: the grid of ``plot_typical_acceptance_tv`` (Medusa's defaults 9/100 and 3/10 among them)
TYPICAL_EPSILONS = (Fraction(0), Fraction(9, 100), Fraction(1, 5), Fraction(3, 10), Fraction(2, 5), Fraction(3, 5))
TYPICAL_DELTAS = (Fraction(1, 10), Fraction(3, 10), Fraction(3, 5), Fraction(1), Fraction(3, 2), Fraction(3))


@figure("tree_accepted.png")
def plot_tree_accepted():
    """E[accepted draft tokens per round] of a chain and trees that all draft 6 tokens, per way of drawing children."""
    fig, ax = plt.subplots(figsize=(9, 4.2))
    width = 0.8 / len(ACCEPTED_SERIES)
    labels = ["x".join(map(str, shape.branching)) + f"\n(depth {shape.depth})" for shape in EQUAL_NODE_SHAPES]
    for i, (label, children, verifier) in enumerate(ACCEPTED_SERIES):
        shapes = [replace(shape, children=children) for shape in EQUAL_NODE_SHAPES]
        accepted = accepted_per_round(TREE_TARGET, TREE_DRAFT, (), shapes, verifier)
        ax.bar(np.arange(len(shapes)) + (i - 1) * width, [float(accepted[s]) for s in shapes], width, label=label)
    ax.set_xticks(np.arange(len(EQUAL_NODE_SHAPES)), labels)
    ax.set_xlabel("tree shape: children per level (every shape drafts 6 tokens for the target to score)")
    ax.set_ylabel("E[accepted draft tokens per round]")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8)
    ax.set_title("Equal drafted nodes: a sampled chain accepts most here; with top-k drafts wide trees win (exact)", fontsize=10)
    fig.tight_layout()
    return fig


def rule_tv_table() -> tuple[list[str], dict]:
    """The rows (verifier names) and the exact TV table of ``plot_tree_rule_tv`` (None: the rule refuses)."""
    from specmath.bugzoo.tree_bugs import sibling_rule_without_residual
    from specmath.speculative.tree_registry import TREE_VERIFIERS

    verifiers = dict(TREE_VERIFIERS)
    verifiers["siblings, no residual (TensorRT-LLM)"] = sibling_rule_without_residual
    return list(verifiers), tv_by_verifier_and_children(TREE_TARGET, TREE_DRAFT, (), (2, 2), 3, verifiers)


@figure("tree_rule_tv.png")
def plot_tree_rule_tv():
    """TV from p of 3 generated tokens, 2 x 2 trees: each rule is exact only with the children it assumes."""
    rows, table = rule_tv_table()
    values = np.array([[np.nan if table[r, c] is None else float(table[r, c]) for c in CHILDREN] for r in rows])
    fig, ax = plt.subplots(figsize=(9, 4))
    ax.imshow(np.nan_to_num(values, nan=0.0), cmap="Reds", vmin=0, vmax=0.6, aspect="auto")
    for i, r in enumerate(rows):
        for j, c in enumerate(CHILDREN):
            tv = table[r, c]
            if tv is None:
                text = "refuses\n(repeated children)"
            elif tv == 0:
                text = "0 exactly"
            else:
                text = (f"{tv}\n" if tv.denominator < 10**4 else "") + f"~{float(tv):.3f}"
            ax.text(j, i, text, ha="center", va="center", fontsize=8)
    ax.set_xticks(range(len(CHILDREN)), [f"{c}\nchildren" for c in CHILDREN])
    ax.set_yticks(range(len(rows)), rows, fontsize=8)
    ax.set_title("TV(generated law, p) over 3 tokens with 2 x 2 trees (exact)", fontsize=10)
    fig.tight_layout()
    return fig


@figure("typical_acceptance_tv.png")
def plot_typical_acceptance_tv():
    """Exact TV from p of 3 tokens under typical acceptance over (epsilon, delta): a sampled chain and Medusa.

    The chain's closing token is sampled from p; vLLM V0's sampler emitted argmax p after a rejection
    (``TypicalAcceptance.argmax_correction``), which differs where the threshold rejects a draft token.
    """
    from specmath.bugzoo.typical_acceptance import typical_tv_grid
    from specmath.speculative.tree import TreeShape

    panels = (("sampled 2-token chain, then y ~ p (vLLM V0's rule, its correction sampled)", TreeShape((1, 1), "iid"), False),
              ("Medusa (fast=True): greedy first token, 2 x 2 top-k tree", TreeShape((2, 2), "top-k"), True))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.3))
    for ax, (title, shape, greedy) in zip(axes, panels, strict=True):
        grid = typical_tv_grid(TREE_TARGET, TREE_DRAFT, (), shape, 3, TYPICAL_EPSILONS, TYPICAL_DELTAS, greedy_first=greedy)
        values = np.array([[float(grid[e, d]) for d in TYPICAL_DELTAS] for e in TYPICAL_EPSILONS])
        ax.imshow(values, cmap="Reds", vmin=0, vmax=1, aspect="auto")
        for i, e in enumerate(TYPICAL_EPSILONS):
            for j, d in enumerate(TYPICAL_DELTAS):
                value = float(grid[e, d])
                ax.text(j, i, f"{value:.3f}", ha="center", va="center", fontsize=8, color="white" if value > 0.6 else "black")
        ax.set_xticks(range(len(TYPICAL_DELTAS)), [str(d) for d in TYPICAL_DELTAS])
        ax.set_yticks(range(len(TYPICAL_EPSILONS)), [str(e) for e in TYPICAL_EPSILONS])
        ax.set_xlabel("delta (posterior_alpha)")
        ax.set_title(title, fontsize=9)
    axes[0].set_ylabel("epsilon (posterior_threshold)")
    fig.suptitle("Typical acceptance p(x) > min(epsilon, delta exp(-H)): exact TV from p over 3 tokens", fontsize=10)
    fig.tight_layout()
    return fig
