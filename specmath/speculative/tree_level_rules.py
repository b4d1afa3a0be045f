"""Internal: The float level rules of the tree reference: one tree node's verifier on a batch of nodes, in numpy.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

A level rule is the float counterpart of an exact verifier of ``specmath.speculative.tree_verifiers``:
given the target rows p [m, V], the draft rows q [m, k, V] each child was drawn from, the children's
tokens [m, k] and which of them exist (valid [m, k]), it returns the accepted child j (-1: none) and
the law the final token is drawn from when none is accepted. ``specmath.speculative.tree_registry``
pairs each rule with its exact verifier; ``specmath.speculative.tree_reference.sample_tree_rounds``
walks a tree with one. Floats appear only here and there: u * q(x) < p(x) decides an acceptance.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["LevelRule", "specinfer_rule", "without_replacement_rule", "target_only_rule"]

#: a level rule: (p [m, V], q [m, k, V], tokens [m, k], valid [m, k], rng) -> (accepted child j or -1 [m], residual [m, V])
LevelRule = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.random.Generator], tuple[np.ndarray, np.ndarray]]


def _normalised(rows: np.ndarray, what: str) -> np.ndarray:
    total = rows.sum(axis=1, keepdims=True)
    if np.any(total <= 0):
        raise ValueError(f"the {what} is zero: a rejection happened where p <= q everywhere (p == q up to rounding)")
    return rows / total


def _recursive_rule(renormalise_q: bool) -> LevelRule:
    """SpecInfer (q fixed) or without replacement (q without the earlier siblings), in float."""

    def rule(p, q, tokens, valid, rng):
        m = p.shape[0]
        rows = np.arange(m)
        current = p.copy()
        chosen = np.full(m, -1)
        drawn = np.zeros_like(p, dtype=bool)
        for j in range(tokens.shape[1]):
            live = valid[:, j] & (chosen < 0)
            x = tokens[:, j]
            q_j = q[:, j]
            if renormalise_q:
                q_j = _normalised(np.where(drawn, 0.0, q_j), "draft law without the drawn tokens")
            # accept x_j with min(1, p^(j)(x_j) / q_j(x_j)): u q(x) < p(x)
            accept = live & (rng.random(m) * q_j[rows, x] < current[rows, x])
            chosen[accept] = j
            reject = live & ~accept
            if np.any(reject):
                current[reject] = _normalised(np.maximum(current[reject] - q_j[reject], 0.0), "residual max(0, p - q)")
            drawn[rows[live], x[live]] = True
        return chosen, current

    return rule


def target_only_rule(p, q, tokens, valid, rng):
    """SGLang's rule: one u per node, child j accepted when u < p(x_1) + ... + p(x_j); else p without the children."""
    m = p.shape[0]
    rows = np.arange(m)
    u = rng.random(m)
    covered = np.zeros(m)
    chosen = np.full(m, -1)
    residual = p.copy()
    for j in range(tokens.shape[1]):
        live = valid[:, j] & (chosen < 0)
        x = tokens[:, j]
        covered = covered + np.where(live, p[rows, x], 0.0)
        chosen[live & (u < covered)] = j
        residual[rows[live], x[live]] = 0.0
    return chosen, residual


#: SpecInfer's recursive rejection in float: every child judged against its own q row
specinfer_rule: LevelRule = _recursive_rule(renormalise_q=False)
#: recursive rejection without replacement in float: child j judged against q without the earlier siblings
without_replacement_rule: LevelRule = _recursive_rule(renormalise_q=True)
