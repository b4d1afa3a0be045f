"""Plots of the explorer views: one function per view, drawn on a given or new matplotlib Axes.

Each draws what its view computed and nothing else (the numbers come from ``two_token``, ``rand``,
``rounds`` and ``model_step``), so a widget redraw and a static call show the same picture.
"""

from __future__ import annotations

import matplotlib.pyplot as plt

from specmath.explorers.rand_explorer import METHODS, RandView, rand_view
from specmath.explorers.round_explorer import RoundView
from specmath.explorers.step_explorer import TwoTokenView

__all__ = ["plot_two_token_view", "plot_rand_view", "plot_round_view", "plot_model_step", "model_step_bars"]


def _axes(ax, size=(6.4, 3.4)):
    if ax is None:
        _, ax = plt.subplots(figsize=size, layout="constrained")
    return ax


def plot_two_token_view(view: TwoTokenView, ax=None):
    """Bars per token: p (target), q (draft), min(p, q) (accepted mass, sums to alpha), output law."""
    ax = _axes(ax)
    tokens = ["A", "B"]
    series = [
        ("p (target)", [float(view.p[t]) for t in tokens], "tab:blue"),
        ("q (draft)", [float(view.q[t]) for t in tokens], "tab:orange"),
        # min(p(x), q(x)) is the mass accepted directly; it sums to alpha
        ("min(p, q): accepted", [float(min(view.p[t], view.q[t])) for t in tokens], "tab:green"),
        ("output law (exact)", [float(view.output.prob(t)) for t in tokens], "tab:gray"),
    ]
    width = 0.2
    for k, (label, values, color) in enumerate(series):
        ax.bar([i + (k - 1.5) * width for i in range(2)], values, width, label=label, color=color)
    ax.set_xticks(range(2), tokens)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("probability")
    ax.set_title(f"alpha = {view.alpha} ≈ {float(view.alpha):.2f}; output == p: {view.lossless}")
    ax.legend(fontsize=8, loc="upper right")
    return ax


def plot_rand_view(view: RandView, ax=None):
    """E[die calls] of every method at the view's (a, b), the chosen one highlighted, the optimum dashed."""
    ax = _axes(ax)
    names, values = [], []
    for method in METHODS:
        if method == "article" and view.a >= view.b:
            continue  # the article's recycling needs a < b
        names.append(method)
        values.append(float(view.expected_calls if method == view.method else rand_view(method, view.a, view.b).expected_calls))
    colors = ["tab:red" if m == view.method else "tab:gray" for m in names]
    bars = ax.bar(names, values, color=colors)
    ax.bar_label(bars, [f"{v:.4f}" for v in values], fontsize=8)
    ax.axhline(float(view.optimum), ls="--", color="k", label=f"Knuth-Yao optimum {view.optimum}")
    # the methods differ by a few percent: start the axis just below the optimum so the gaps show
    low = min(values + [float(view.optimum)])
    ax.set_ylim(low * 0.97, max(values) * 1.02)
    ax.set_ylabel(f"E[rand{view.a} calls] per rand{view.b}")
    ax.set_title(f"{view.method}: E[calls] = {view.expected_calls}; uniform exactly: {view.uniform}")
    ax.legend(fontsize=8, loc="upper right")
    return ax


def plot_round_view(view: RoundView, ax=None):
    """Speedup (1 - alpha^(gamma+1)) / ((1 - alpha)(gamma c + 1)) against gamma; chosen and best gamma marked."""
    ax = _axes(ax)
    gammas = [g for g, _ in view.curve]
    ax.plot(gammas, [float(s) for _, s in view.curve], "o-", color="tab:blue", ms=3, label="speedup model")
    ax.axhline(1, color="gray", lw=0.8)
    ax.plot([view.gamma], [float(view.speedup)], "s", color="tab:red", ms=8, label=f"gamma = {view.gamma}: {float(view.speedup):.2f}x")
    if view.best_gamma is not None and view.best_gamma <= gammas[-1]:
        ax.plot([view.best_gamma], [float(view.best_speedup)], "*", color="tab:green", ms=14, label=f"best gamma = {view.best_gamma}")
    ax.set_xlabel("gamma (draft tokens per round)")
    ax.set_ylabel("speedup over plain decoding")
    ax.set_title(f"alpha = {view.alpha}, c = {view.c}")
    ax.legend(fontsize=8)
    return ax


def model_step_bars(view) -> list[tuple[str, float, float, bool]]:
    """(token text, p_0, q_0, drafted?) for the left panel: the likeliest first tokens, plus the drafted one.

    The first draft token x_1 ~ q_0 need not be among the target's likeliest tokens (that is when it is
    rejected most often), so it is appended when missing and always marked: the bars show what was drafted.
    """
    bars = [(t, p, q, False) for t, p, q in view.top_tokens]
    if view.rows:
        first = view.rows[0]
        found = [i for i, (t, _, _, _) in enumerate(bars) if t == first.text]
        if found:
            t, p, q, _ = bars[found[0]]
            bars[found[0]] = (t, p, q, True)
        else:
            bars.append((first.text, first.p, first.q, True))  # p_0(x_1), q_0(x_1) of the drafted token
    return bars


def plot_model_step(view, axes=None):
    """Left: p_0 and q_0 on the likeliest first tokens and the drafted one. Right: min(1, p/q) per draft token."""
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(10, 3.4), layout="constrained")
    left, right = axes
    bars = model_step_bars(view)
    labels = [repr(t) + ("\n(drafted)" if drafted else "") for t, _, _, drafted in bars]
    xs = range(len(labels))
    edges = ["black" if drafted else "none" for *_, drafted in bars]
    left.bar([x - 0.2 for x in xs], [p for _, p, _, _ in bars], 0.4, label="p_0 (target)", color="tab:blue", edgecolor=edges)
    left.bar([x + 0.2 for x in xs], [q for _, _, q, _ in bars], 0.4, label="q_0 (draft)", color="tab:orange", edgecolor=edges)
    left.set_xticks(list(xs), labels, rotation=45, ha="right", fontsize=8)
    left.set_title("next-token laws after the prompt (drafted token outlined)", fontsize=9)
    left.legend(fontsize=8)
    colors = {"accepted": "tab:green", "rejected": "tab:red", "not reached": "lightgray"}
    right.bar([f"{r.position}: {r.text!r}" for r in view.rows], [r.accept_probability for r in view.rows], color=[colors[r.outcome] for r in view.rows])
    right.set_ylim(0, 1.05)
    right.tick_params(axis="x", rotation=45, labelsize=8)
    right.set_title(f"min(1, p/q) per draft token: {view.n_accepted} accepted (green), rejected red", fontsize=9)
    return axes
