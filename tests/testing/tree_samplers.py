"""Token-tree samplers written the way an engine writes its tree verification: batched numpy over parent indices.

Notation: p = target law, q = draft law, gamma = draft tokens per round (a tree's nodes),
alpha = sum_x min(p(x), q(x)).

Every sampler has the interface of ``specmath.testing.assert_tree_sampler_lossless``::

    sample_tree(parents [nodes], target_probs [N, nodes+1, V], draft_probs [N, nodes, V],
                draft_tokens [N, nodes], rng) -> [N, depth+1], the accepted path, one token, -1s

None of it is specmath's code. As in SGLang's ``tree_speculative_sampling_target_only`` and vLLM's
tree index tensors, the tree is turned once into a children table (a node's children in index order,
-1 padded) and every row of the batch walks its own tree level by level: one vectorised step per
level and sibling rank, all rows at once. The keywords swap one step each for the way engines get it
wrong; the functions at the end name the samplers the tests audit:

* correct: ``specinfer_tree`` (i.i.d. children), ``without_replacement_tree`` (children drawn without
  replacement), ``sglang_target_only_tree`` (distinct children: top-k or without replacement);
* lossy: ``residual_never_updated`` (TensorRT-LLM: every sibling against the node's own p),
  ``accept_on_u_equal_zero`` (``u q(x) <= p(x)``), ``typical_first_child`` (typical acceptance, the
  first child above min(epsilon, delta exp(-H(p))), else a token ~ p); and the correct rules under
  the wrong children: SpecInfer's rule on top-k children, SGLang's running sum on i.i.d. children
  (a repeated child counted twice).
"""

from __future__ import annotations

import numpy as np

#: typical acceptance's constants (Medusa's defaults: posterior_threshold 0.09, posterior_alpha 0.3, log(p + 1e-5))
TYPICAL_EPSILON, TYPICAL_DELTA, TYPICAL_OFFSET = 0.09, 0.3, 1e-5


def children_table(parents) -> tuple[np.ndarray, int]:
    """([nodes + 1, K] children of the root (row 0) and of node i (row i + 1), -1 padded; the tree's depth)."""
    parents = np.asarray(parents).tolist()
    rows: list[list[int]] = [[] for _ in range(len(parents) + 1)]
    depth = [0] * len(parents)
    for i, parent in enumerate(parents):
        rows[parent + 1].append(i)
        depth[i] = 1 if parent < 0 else depth[parent] + 1
    table = np.full((len(rows), max(map(len, rows))), -1, dtype=np.int64)
    for r, kids in enumerate(rows):
        table[r, : len(kids)] = kids
    return table, max(depth)


def sample_rows(law: np.ndarray, rng) -> np.ndarray:
    """One token per row of ``law`` [m, V] (unnormalised) by inverse CDF: #{cumulative weights <= u total}."""
    cdf = np.cumsum(law, axis=1)
    u = rng.random(len(law)) * cdf[:, -1]
    return np.minimum((cdf <= u[:, None]).sum(axis=1), law.shape[1] - 1)


def _normalise(rows: np.ndarray) -> np.ndarray:
    total = rows.sum(axis=1, keepdims=True)
    return rows / np.where(total > 0, total, 1.0)


def walk_trees(parents, target_probs, draft_tokens, rng, judge):
    """Every row walks its own tree from the root, all rows one level at a time.

    ``judge(p [n, V], kids [n, K], tokens [n, K], walking [n], rng) -> (chosen [n], final [n, V])`` decides
    at each row's current node: the child node it keeps (-1: none; kids -1 pad), or the law of the
    round's last token (the correction after rejections; at a leaf, p itself: the bonus token).
    """
    tp, dt = np.asarray(target_probs), np.asarray(draft_tokens)
    table, depth = children_table(parents)
    n, rows = len(dt), np.arange(len(dt))
    out = np.full((n, depth + 1), -1, dtype=np.int64)
    at = np.zeros(n, dtype=np.int64)  # each row's current node, as its row of target_probs (0: the root)
    walking = np.ones(n, dtype=bool)
    for level in range(depth + 1):
        kids = table[at]
        chosen, final = judge(tp[rows, at], kids, dt[rows[:, None], np.maximum(kids, 0)], walking, rng)
        moved = chosen >= 0
        out[moved, level] = dt[rows[moved], chosen[moved]]
        stop = walking & ~moved
        out[stop, level] = sample_rows(final[stop], rng)
        walking &= moved
        at[moved] = chosen[moved] + 1
    return out


def recursive_rejection(parents, target_probs, draft_probs, draft_tokens, rng, *, update_residual=True,
                        without_replacement=False, accept_at_zero=False):
    """SpecInfer's multi-step speculative sampling over each row's tree, batched.

    At a node with law p^(1) = p: child j accepted with min(1, p^(j)(x_j) / q_j(x_j)), i.e. u q_j(x) < p^(j)(x);
    a rejection makes p^(j+1) = norm(max(0, p^(j) - q_j)); all rejected: the final token ~ p^(k+1); at a
    leaf: the bonus token ~ p. q_j = q (i.i.d. children) or q without the siblings drawn before x_j,
    renormalised (``without_replacement``, Jeon et al. 2024).
    """
    dp = np.asarray(draft_probs)
    rows = np.arange(len(dp))

    def judge(p, kids, tokens, walking, rng):
        p = p.copy()  # p^(j), updated in place as siblings are rejected
        seen = np.zeros_like(p, dtype=bool)
        chosen = np.full(len(p), -1)
        for rank in range(kids.shape[1]):
            live = walking & (kids[:, rank] >= 0) & (chosen < 0)
            x, q = tokens[:, rank], dp[rows, np.maximum(kids[:, rank], 0)]
            if without_replacement:
                q = _normalise(np.where(seen, 0.0, q))
            u = rng.random(len(p))
            hit = u * q[rows, x] <= p[rows, x] if accept_at_zero else u * q[rows, x] < p[rows, x]
            chosen[live & hit] = kids[live & hit, rank]
            rejected = live & ~hit
            if update_residual:
                p[rejected] = _normalise(np.maximum(p[rejected] - q[rejected], 0.0))
            seen[rows[live], x[live]] = True
        if not update_residual:
            # TensorRT-LLM: all siblings rejected -> norm(max(0, p - q)) with the node's own p (leaves keep p)
            corrected = np.maximum(p - dp[rows, np.maximum(kids[:, 0], 0)], 0.0)
            rejected_all = (kids[:, 0] >= 0) & (corrected.sum(axis=1) > 0)
            p[rejected_all] = corrected[rejected_all]
        return chosen, p

    return walk_trees(parents, target_probs, draft_tokens, rng, judge)


def sglang_target_only(parents, target_probs, draft_probs, draft_tokens, rng):
    """SGLang's target-only kernel, batched: one u per node, child j kept when u < p(x_1) + ... + p(x_j);
    none kept: the final token ~ relu(p - q') with q' = p on the children (at a leaf: p, the bonus)."""

    def judge(p, kids, tokens, walking, rng):
        rows = np.arange(len(p))
        rest = p.copy()
        coin = rng.random(len(p))
        prob_acc = np.zeros(len(p))
        chosen = np.full(len(p), -1)
        for rank in range(kids.shape[1]):
            live = walking & (kids[:, rank] >= 0) & (chosen < 0)
            x = tokens[:, rank]
            prob_acc = prob_acc + np.where(live, p[rows, x], 0.0)  # a repeated child is added twice
            keep = live & (coin < prob_acc)
            chosen[keep] = kids[keep, rank]
            rest[rows[live], x[live]] = 0.0
        return chosen, rest

    return walk_trees(parents, target_probs, draft_tokens, rng, judge)


def typical_first_child(parents, target_probs, draft_probs, draft_tokens, rng):
    """Typical acceptance walked down the tree: the first child with p(x) > min(epsilon, delta exp(-H(p)))
    is kept, H(p) = -sum p ln(p + 1e-5) as Medusa's and vLLM's code; none: the final token ~ p (vLLM V0)."""

    def judge(p, kids, tokens, walking, rng):
        entropy = -(p * np.log(p + TYPICAL_OFFSET)).sum(axis=1)
        threshold = np.minimum(TYPICAL_EPSILON, TYPICAL_DELTA * np.exp(-entropy))
        above = (kids >= 0) & (np.take_along_axis(p, tokens, axis=1) > threshold[:, None])
        first = np.argmax(above, axis=1)
        found = walking & above.any(axis=1)
        return np.where(found, kids[np.arange(len(p)), first], -1), p

    return walk_trees(parents, target_probs, draft_tokens, rng, judge)


def specinfer_tree(parents, target_probs, draft_probs, draft_tokens, rng):
    """SpecInfer's recursive rejection (correct for i.i.d. children; lossy for top-k children)."""
    return recursive_rejection(parents, target_probs, draft_probs, draft_tokens, rng)


def without_replacement_tree(parents, target_probs, draft_probs, draft_tokens, rng):
    """Recursive rejection without replacement, q renormalised after each drawn child (correct for such children)."""
    return recursive_rejection(parents, target_probs, draft_probs, draft_tokens, rng, without_replacement=True)


def sglang_target_only_tree(parents, target_probs, draft_probs, draft_tokens, rng):
    """SGLang's target-only rule (correct for distinct children; lossy for i.i.d. ones, which repeat)."""
    return sglang_target_only(parents, target_probs, draft_probs, draft_tokens, rng)


def residual_never_updated(parents, target_probs, draft_probs, draft_tokens, rng):
    """Every sibling judged against the node's own p; all rejected: norm(max(0, p - q)) (TensorRT-LLM's kernel)."""
    return recursive_rejection(parents, target_probs, draft_probs, draft_tokens, rng, update_residual=False)


def accept_on_u_equal_zero(parents, target_probs, draft_probs, draft_tokens, rng):
    """``u q(x) <= p(x)``: at u = 0 a child of p(x) = 0 is accepted (probability 2^-53 per draw: a probe's job)."""
    return recursive_rejection(parents, target_probs, draft_probs, draft_tokens, rng, accept_at_zero=True)
