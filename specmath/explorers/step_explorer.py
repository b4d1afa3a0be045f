"""Two-token explorer: move p(A) and q(A), watch acceptance, the residual and the path table.

On the vocabulary {A, B} with p = target law and q = draft law (the article's example is
p(A) = 7/10, q(A) = 4/10), one speculative step

* accepts a drafted x with min(1, p(x) / q(x)),
* on rejection resamples from residual = norm(max(0, p - q)),
* has acceptance rate alpha = sum_x min(p(x), q(x)) = 1 - TV(p, q),

and its exact output law equals p for every slider position: ``TwoTokenView.lossless`` is an
``==`` between Fractions, recomputed by the exact interpreter at each move.

Reference: Leviathan, Kalman, Matias, "Fast Inference from Transformers via Speculative Decoding"
(ICML 2023), Algorithm 1; the seed article's two-token world.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from specmath.exact import exact
from specmath.laws import Law, tv_distance
from specmath.speculative.step import acceptance_rate, residual_law
from specmath.speculative.two_token import acceptance_by_token, path_table, two_token_world
from specmath.validation import check_fraction

__all__ = ["TwoTokenView", "two_token_view", "two_token_laws", "format_two_token"]


@dataclass(frozen=True)
class TwoTokenView:
    """Everything one speculative step does in the two-token world, exactly."""

    p: Law
    q: Law
    acceptance: dict  # token -> min(1, p(x)/q(x)) for tokens the draft can propose
    alpha: Fraction  # sum_x min(p(x), q(x))
    residual: Law | None  # norm(max(0, p - q)); None when p == q (no rejection ever happens)
    paths: list  # rows {draft, accepted, resampled, output, probability}
    output: Law  # the exact output law of one step
    lossless: bool  # output == p, as Fractions


def _probability(value: object, name: str) -> Fraction:
    # a Python float is read as the decimal it prints as (0.7 -> 7/10), see specmath.laws.to_fraction
    return check_fraction(value, name, min_value=0, max_value=1)


def two_token_laws(p_a: object, q_a: object) -> tuple[Law, Law]:
    """p = {A: p_a, B: 1 - p_a}, q = {A: q_a, B: 1 - q_a}; ValueError unless both lie in [0, 1]."""
    pa, qa = _probability(p_a, "p(A)"), _probability(q_a, "q(A)")
    return Law({"A": pa, "B": 1 - pa}, name="p"), Law({"A": qa, "B": 1 - qa}, name="q")


def two_token_view(p_a: object = Fraction(7, 10), q_a: object = Fraction(4, 10)) -> TwoTokenView:
    """The step for p(A) = p_a, q(A) = q_a: acceptance, alpha, residual, paths, output law (exact).

    P(out = x) = sum over paths ending in x = min(p(x), q(x)) + (1 - alpha) residual(x) = p(x).
    """
    p, q = two_token_laws(p_a, q_a)
    alpha = acceptance_rate(p, q)
    output = exact(two_token_world, p, q).law
    return TwoTokenView(
        p=p,
        q=q,
        acceptance=acceptance_by_token(p, q),
        alpha=alpha,
        # the residual exists only when some mass is rejected: 1 - alpha = sum_x max(0, p(x) - q(x)) > 0
        residual=residual_law(p, q) if alpha < 1 else None,
        paths=path_table(p, q),
        output=output,
        lossless=output == p,
    )


def format_two_token(view: TwoTokenView) -> str:
    """A plain-text report of the view: the laws, acceptance, residual and the path table."""
    lines = [
        f"p = {{A: {view.p['A']}, B: {view.p['B']}}}    q = {{A: {view.q['A']}, B: {view.q['B']}}}",
        "acceptance min(1, p/q): " + ", ".join(f"{x}: {a}" for x, a in sorted(view.acceptance.items())),
        f"alpha = sum min(p, q) = {view.alpha} = 1 - TV(p, q) = 1 - {tv_distance(view.p, view.q)}",
        "residual norm(max(0, p - q)): " + ("none (p == q, never rejects)" if view.residual is None else f"{{A: {view.residual['A']}, B: {view.residual['B']}}}"),
        f"{'draft':<6}{'accepted':<10}{'resampled':<11}{'output':<8}probability",
    ]
    for row in view.paths:
        lines.append(f"{row['draft']:<6}{row['accepted']!s:<10}{row['resampled']!s:<11}{row['output']:<8}{row['probability']}")
    lines.append(f"output law = {{A: {view.output.prob('A')}, B: {view.output.prob('B')}}}  == p: {view.lossless}")
    return "\n".join(lines)
