"""The article's two-token world: a vocabulary {A, B}, target p = {A: 0.7, B: 0.3},
draft q = {A: 0.4, B: 0.6}.

Worked by hand (and checked here by the exact interpreter):

* acceptance min(1, p/q): A -> min(1, 0.7/0.4 = 1.75) = 1, B -> min(1, 0.3/0.6) = 1/2;
* residual norm(max(0, p - q)) = {A: 0.3, B: 0} / 0.3 = {A: 1, B: 0};
* three paths: draft A and accept (0.4 * 1 = 0.4), draft B and accept (0.6 * 1/2 = 0.3),
  draft B, reject, resample A (0.6 * 1/2 * 1 = 0.3);
* output: P(A) = 0.4 + 0.3 = 0.7 = p(A), P(B) = 0.3 = p(B).
"""

from __future__ import annotations

from fractions import Fraction

from specmath.exact import Path, exact, exact_paths
from specmath.laws import Law, as_law
from specmath.speculative.step import acceptance_rate, residual_law, speculative_step

__all__ = ["TARGET", "DRAFT", "two_token_world", "two_token_paths", "acceptance_by_token", "path_table", "summary"]

#: target law p of the article's example
TARGET = Law({"A": Fraction(7, 10), "B": Fraction(3, 10)}, name="p")
#: draft law q of the article's example
DRAFT = Law({"A": Fraction(4, 10), "B": Fraction(6, 10)}, name="q")


def two_token_world(p: Law = TARGET, q: Law = DRAFT):
    """Sampling program of one speculative step in the two-token world (any p, q may be passed)."""
    return (yield from speculative_step(p, q))


def acceptance_by_token(p: Law = TARGET, q: Law = DRAFT) -> dict:
    """x -> min(1, p(x)/q(x)) for every token the draft can propose."""
    p, q = as_law(p, name="p"), as_law(q, name="q")
    return {x: min(Fraction(1), p[x] / q[x]) for x in q if q[x] > 0}


def two_token_paths(p: Law = TARGET, q: Law = DRAFT) -> list[Path]:
    """The leaves of one step: (draft, accept?, resampled token) with exact probabilities."""
    p, q = as_law(p, name="p"), as_law(q, name="q")
    return exact_paths(two_token_world, p, q)


def path_table(p: Law = TARGET, q: Law = DRAFT) -> list[dict]:
    """Rows {draft, accepted, resampled, output, probability} for a lecture table."""
    p, q = as_law(p, name="p"), as_law(q, name="q")
    rows = []
    for path in two_token_paths(p, q):
        answers = dict(path.steps)
        rows.append(
            {
                "draft": answers["draft"],
                "accepted": answers["accept"],
                "resampled": answers.get("resample"),
                "output": path.end,
                "probability": path.probability,
            }
        )
    return rows


def summary(p: Law = TARGET, q: Law = DRAFT) -> dict:
    """Everything the article computes for the two-token world, exactly."""
    p, q = as_law(p, name="p"), as_law(q, name="q")
    return {
        "acceptance": acceptance_by_token(p, q),
        "alpha": acceptance_rate(p, q),
        "residual": residual_law(p, q),
        "paths": path_table(p, q),
        "output": exact(two_token_world, p, q).law,
    }
