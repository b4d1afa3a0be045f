"""Figures for multi-token rounds: speedup against gamma, tokens per round, the law of a round's length.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)), c = draft pass cost / target pass cost.
Curves come from ``specmath.theory`` (Leviathan et al. 2023, Eq. 1 and Theorem 3.8); markers and
bars from the exact round law of toy pairs (``specmath.speculative``).
"""

from __future__ import annotations

from fractions import Fraction

import matplotlib.pyplot as plt

from specmath.figures import figure
from specmath.laws import Law
from specmath.plots.panels import finish_panels
from specmath.speculative import expected_round_tokens, round_law
from specmath.speculative.toy_lm import ToyLM
from specmath.theory import expected_tokens_per_round, optimal_gamma, speedup

#: alpha values and cost ratios c drawn in ``speedup_vs_gamma.png``
SPEEDUP_ALPHAS = (Fraction(6, 10), Fraction(7, 10), Fraction(8, 10), Fraction(9, 10))
SPEEDUP_COSTS = (Fraction(1, 20), Fraction(1, 5))


def constant_alpha_pair(alpha: Fraction) -> tuple[ToyLM, ToyLM]:
    """A context-free toy pair with acceptance alpha: p = {A: alpha, B: 1 - alpha}, q = one-hot A."""
    p = Law({"A": alpha, "B": 1 - alpha})
    q = Law({"A": 1, "B": 0})
    return ToyLM(lambda ctx: p, ("A", "B"), name=f"p(alpha={alpha})"), ToyLM(lambda ctx: q, ("A", "B"), name="q = A")


@figure("speedup_vs_gamma.png")
def plot_speedup_vs_gamma(max_gamma: int = 16):
    """Speedup (1 - alpha^(gamma+1)) / ((1 - alpha)(gamma c + 1)) against gamma; the optimal gamma marked."""
    fig, axes = plt.subplots(1, len(SPEEDUP_COSTS), figsize=(10, 3.8), sharey=True)
    gammas = list(range(max_gamma + 1))
    for ax, c in zip(axes, SPEEDUP_COSTS, strict=True):
        for alpha in SPEEDUP_ALPHAS:
            values = [float(speedup(alpha, g, c)) for g in gammas]
            (line,) = ax.plot(gammas, values, marker=".", label=f"alpha = {float(alpha):.1f}")
            best = optimal_gamma(alpha, c)
            ax.plot(best, float(speedup(alpha, best, c)), "o", color=line.get_color(), markersize=9, fillstyle="none")
        ax.axhline(1, color="gray", linewidth=0.8, linestyle="--")
        ax.set_title(f"c = draft / target cost = {float(c):g}")
    return finish_panels(fig, axes, xlabel="gamma (draft tokens per round)", ylabel="speedup over plain decoding",
                         title="Speedup model of Leviathan et al.; circles: optimal gamma", title_size=11)


@figure("expected_tokens_per_round.png")
def plot_expected_tokens_per_round(gammas: tuple = (1, 2, 4, 8)):
    """E[tokens per round] = (1 - alpha^(gamma+1)) / (1 - alpha) against alpha; dots: exact round laws."""
    fig, ax = plt.subplots(figsize=(6.4, 4))
    grid = [i / 100 for i in range(101)]
    marks = [Fraction(k, 10) for k in range(0, 11, 2)]
    for gamma in gammas:
        (line,) = ax.plot(grid, [float(expected_tokens_per_round(a, gamma)) for a in grid], label=f"gamma = {gamma}")
        # markers: E[|E|] from the exact round law of a toy pair with that alpha
        exact_values = [expected_round_tokens(*constant_alpha_pair(a), (), gamma) for a in marks]
        ax.plot([float(a) for a in marks], [float(v) for v in exact_values], "o", color=line.get_color(), markersize=4)
    ax.set_xlabel("alpha = sum_x min(p(x), q(x))")
    ax.set_ylabel("expected tokens per round")
    ax.set_title("Tokens per round: closed form (lines) = exact round law (dots)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig


@figure("round_length_law.png")
def plot_round_length_law(gamma: int = 4):
    """Exact law of the number of tokens one round emits for the notebook's context-dependent pair,
    next to the constant-alpha law P(k) = alpha^(k-1)(1 - alpha), P(gamma+1) = alpha^gamma at alpha(prefix)."""
    from specmath.speculative.examples import ROUND_DRAFT, ROUND_PREFIX, ROUND_TARGET
    from specmath.speculative.step import acceptance_rate

    law = round_law(ROUND_TARGET, ROUND_DRAFT, ROUND_PREFIX, gamma).map(len)
    alpha = acceptance_rate(ROUND_TARGET(ROUND_PREFIX), ROUND_DRAFT(ROUND_PREFIX))
    lengths = list(range(1, gamma + 2))
    geometric = [alpha ** (k - 1) * (1 - alpha) if k <= gamma else alpha**gamma for k in lengths]
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    width = 0.38
    ax.bar([k - width / 2 for k in lengths], [float(law.prob(k)) for k in lengths], width, label="exact round law")
    ax.bar([k + width / 2 for k in lengths], [float(g) for g in geometric], width, label=f"constant alpha = {alpha}")
    for k in lengths:
        ax.text(k - width / 2, float(law.prob(k)) + 0.01, str(law.prob(k)), ha="center", fontsize=7, rotation=90)
    ax.set_xlabel("tokens emitted by one round (accepted drafts + 1)")
    ax.set_ylabel("probability")
    ax.set_title(f"Round length, gamma = {gamma}: alpha varies along the draft")
    ax.legend(fontsize=8)
    return fig
