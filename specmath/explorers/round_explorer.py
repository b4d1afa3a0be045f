"""Speculative-round explorer: alpha, gamma, c -> expected tokens per round, speedup, best gamma.

With a constant acceptance rate alpha (alpha = sum_x min(p(x), q(x))), gamma draft tokens per
round and c = (cost of a draft pass) / (cost of a target pass), Leviathan et al. (2023, Eq. 1 and
Theorem 3.8) give

    E[tokens per round] = (1 - alpha^(gamma+1)) / (1 - alpha),
    speedup             = (1 - alpha^(gamma+1)) / ((1 - alpha) (gamma c + 1)),

computed by ``specmath.theory`` (exact for Fractions, floats for floats). The best gamma is
``theory.optimal_gamma``; when none exists (c = 0, or alpha = 1 with c < 1, where the speedup grows
without bound) the view says why instead of guessing.
"""

from __future__ import annotations

from dataclasses import dataclass

from specmath.theory import expected_tokens_per_round, optimal_gamma, speedup
from specmath.validation import check_integer

__all__ = ["RoundView", "round_view", "format_round"]


@dataclass(frozen=True)
class RoundView:
    """The speedup model at one (alpha, gamma, c), with the curve over gamma = 0..max_gamma."""

    alpha: object
    gamma: int
    c: object
    expected_tokens: object  # (1 - alpha^(gamma+1)) / (1 - alpha)
    speedup: object  # expected_tokens / (gamma c + 1)
    best_gamma: int | None  # argmax_gamma speedup, None when unbounded
    best_speedup: object | None
    no_best_reason: str | None  # why best_gamma is None
    curve: tuple  # ((gamma', speedup(alpha, gamma', c)) for gamma' = 0..max_gamma)


def round_view(alpha: object = 0.8, gamma: int = 4, c: object = 0.1, max_gamma: int = 16) -> RoundView:
    """Expected tokens, speedup and best gamma at (alpha, gamma, c); ValueError on bad input.

    speedup(alpha, gamma, c) = (1 - alpha^(gamma+1)) / ((1 - alpha)(gamma c + 1)).
    """
    max_gamma = check_integer(max_gamma, "max_gamma", min_value=0)
    tokens = expected_tokens_per_round(alpha, gamma)  # validates alpha and gamma
    value = speedup(alpha, gamma, c)  # validates c
    try:
        best = optimal_gamma(alpha, c)
        best_value, reason = speedup(alpha, best, c), None
    except ValueError as error:  # no finite optimum: the model's speedup grows with gamma
        best, best_value, reason = None, None, str(error)
    curve = tuple((g, speedup(alpha, g, c)) for g in range(max_gamma + 1))
    return RoundView(alpha, gamma, c, tokens, value, best, best_value, reason, curve)


def format_round(view: RoundView) -> str:
    """A plain-text report of the view."""
    best = (
        f"best gamma = {view.best_gamma} (speedup {float(view.best_speedup):.3f})"
        if view.best_gamma is not None
        else f"no best gamma: {view.no_best_reason}"
    )
    return "\n".join(
        [
            f"alpha = {view.alpha}, gamma = {view.gamma}, c = {view.c}",
            f"E[tokens per round] = (1 - alpha^(gamma+1)) / (1 - alpha) = {float(view.expected_tokens):.4f}",
            f"speedup = E[tokens] / (gamma c + 1) = {float(view.speedup):.4f}",
            best,
        ]
    )
