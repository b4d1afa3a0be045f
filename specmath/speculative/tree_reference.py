"""The float reference tree sampler: batched numpy rounds over token trees given as parent indices.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

The layout is the one engines pass to their tree verification kernels (SGLang's
``tree_speculative_sampling_target_only``: the root at slot 0 of the target rows; vLLM's and
TensorRT-LLM's trees: nodes in breadth-first order, a parent before its children):

* ``parents`` [nodes] int: ``parents[i]`` is the index of node i's parent, -1 for the children of
  the context (the root); nodes in topological order (``parents[i] < i``). Siblings are tried in
  index order. One tree shape serves the whole batch.
* ``target_probs`` [N, nodes + 1, V]: row 0 is p(. | context), row i + 1 is p(. | context, the
  path to node i *including node i's token*): the law of the token after node i.
* ``draft_probs`` [N, nodes, V]: row i is the draft law node i's token was drawn from,
  q(. | context, path to node i's parent); siblings share it.
* ``draft_tokens`` [N, nodes] int: the drafted tokens, vocabulary indices 0..V-1.

``sample_tree_rounds`` returns [N, depth + 1] int64: the accepted path's tokens, then the final
(resampled or bonus) token, padded with -1. The verifier at each node is one *level rule*
(``specmath.speculative.tree_level_rules``, named by ``specmath.speculative.tree_registry``), a keyword a
lossy variant may swap (``specmath.bugzoo.tree_bugs``), as ``numpy_round``'s blocks are for chains.
``draft_tree_arrays`` draws these arrays from two toy LMs, so a test can compare the sampler's
histogram with the exact law ``tree_round_law``.

Floats appear only here and in the level rules: u * q(x) < p(x) decides an acceptance (no u = 0 accept
of p(x) = 0), and rows are checked to sum to 1 within 1e-6 (float32 softmax rows do so with room to spare).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from specmath.speculative.round import LM, law_at
from specmath.speculative.tree import TreeShape, check_shape, top_k_tokens
from specmath.speculative.tree_level_rules import LevelRule
from specmath.speculative.tree_registry import tree_verifier_record
from specmath.validation import InvalidArgument, check_integer

__all__ = ["TreeArrays", "tree_parents", "check_tree_arrays", "draw_rows", "sample_tree_rounds", "draft_tree_arrays"]

@dataclass(frozen=True)
class TreeArrays:
    """One batch of drafted trees in the engines' layout (see the module docstring)."""

    parents: np.ndarray  # [nodes]
    target_probs: np.ndarray  # [N, nodes + 1, V]
    draft_probs: np.ndarray  # [N, nodes, V]
    draft_tokens: np.ndarray  # [N, nodes]
    vocabulary: tuple  # token of each index


def tree_parents(shape: TreeShape) -> np.ndarray:
    """Parent indices of a full tree in breadth-first order: (2, 2) -> [-1, -1, 0, 0, 1, 1]."""
    parents, level = [], [-1]
    for k in shape.branching:
        nxt = []
        for parent in level:
            for _ in range(k):
                nxt.append(len(parents))
                parents.append(parent)
        level = nxt
    return np.array(parents, dtype=np.int64)


def check_tree_arrays(parents, target_probs, draft_probs, draft_tokens) -> tuple[np.ndarray, ...]:
    """Validate shapes, topological order, normalisation (1e-6) and token ids; return int64/float64 arrays."""
    par = np.asarray(parents)
    if par.ndim != 1 or par.size == 0 or not np.issubdtype(par.dtype, np.integer):
        raise InvalidArgument(f"parents must be a non-empty 1-d int array, got shape {par.shape} dtype {par.dtype}")
    nodes = par.shape[0]
    if np.any(par < -1) or np.any(par >= np.arange(nodes)):
        raise InvalidArgument(f"parents {par.tolist()} must satisfy -1 <= parents[i] < i (a parent comes before its children)")
    p = np.asarray(target_probs, dtype=np.float64)
    q = np.asarray(draft_probs, dtype=np.float64)
    x = np.asarray(draft_tokens)
    if p.ndim != 3 or p.shape[1] != nodes + 1:
        raise InvalidArgument(f"target_probs must have shape [N, nodes + 1, V] = [N, {nodes + 1}, V], got {p.shape}")
    n, _, vocab = p.shape
    if q.shape != (n, nodes, vocab):
        raise InvalidArgument(f"draft_probs must have shape [N, nodes, V] = [{n}, {nodes}, {vocab}], got {q.shape}")
    if x.shape != (n, nodes) or not np.issubdtype(x.dtype, np.integer):
        raise InvalidArgument(f"draft_tokens must be an int array of shape [N, nodes] = [{n}, {nodes}], got {x.shape} {x.dtype}")
    for name, a in (("target_probs", p), ("draft_probs", q)):
        if not np.all(np.isfinite(a)) or np.any(a < 0):
            raise InvalidArgument(f"{name} must be finite and non-negative")
        worst = np.max(np.abs(a.sum(axis=-1) - 1))
        if worst > 1e-6:
            raise InvalidArgument(f"{name} rows must sum to 1 (within 1e-6); one is off by {worst:.3g}")
    if np.any((x < 0) | (x >= vocab)):
        raise InvalidArgument(f"draft_tokens must be ids in 0..{vocab - 1}")
    return par.astype(np.int64), p, q, x.astype(np.int64)


def draw_rows(probs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One inverse-CDF draw per row of ``probs`` [m, V] (rows need not be normalised); zeros never drawn."""
    cdf = np.cumsum(probs, axis=1)
    u = rng.random(probs.shape[0]) * cdf[:, -1]
    index = np.minimum((cdf <= u[:, None]).sum(axis=1), probs.shape[1] - 1)
    # round-off at the top end can land on a trailing zero: take the last positive entry instead
    off = probs[np.arange(len(index)), index] <= 0
    if np.any(off):
        index[off] = probs.shape[1] - 1 - np.argmax(probs[off][:, ::-1] > 0, axis=1)
    return index


def _children_table(parents: np.ndarray) -> np.ndarray:
    """[nodes + 1, max_k]: row 0 lists the root's children, row i + 1 node i's, in index order; -1 pads."""
    lists: list[list[int]] = [[] for _ in range(len(parents) + 1)]
    for i, parent in enumerate(parents.tolist()):
        lists[parent + 1].append(i)
    table = np.full((len(lists), max(len(c) for c in lists)), -1, dtype=np.int64)
    for row, kids in enumerate(lists):
        table[row, : len(kids)] = kids
    return table


def sample_tree_rounds(parents, target_probs, draft_probs, draft_tokens, rng: np.random.Generator, *,
                       verifier: str | LevelRule = "specinfer") -> np.ndarray:
    """One tree round per batch row; returns [N, depth + 1] emitted tokens, -1 padded (see the module doc)."""
    if not isinstance(rng, np.random.Generator):
        raise InvalidArgument(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    rule = tree_verifier_record(verifier).level_rule if isinstance(verifier, str) else verifier
    parents, p_all, q_all, x_all = check_tree_arrays(parents, target_probs, draft_probs, draft_tokens)
    kids = _children_table(parents)
    depth_of = np.zeros(len(parents), dtype=np.int64)
    for i, parent in enumerate(parents.tolist()):
        depth_of[i] = 1 if parent < 0 else depth_of[parent] + 1
    n = p_all.shape[0]
    out = np.full((n, int(depth_of.max()) + 1), -1, dtype=np.int64)
    at = np.zeros(n, dtype=np.int64)  # the current node's row in target_probs (0: the root)
    live = np.ones(n, dtype=bool)
    for level in range(out.shape[1]):
        # a leaf: every position of the tree was scored, so the bonus token ~ p is free
        leaf = live & (kids[at, 0] < 0)
        out[leaf, level] = draw_rows(p_all[leaf, at[leaf]], rng)
        live &= ~leaf
        rows = np.flatnonzero(live)
        if rows.size == 0:
            break
        children = kids[at[rows]]  # [m, k]
        valid = children >= 0
        safe = np.where(valid, children, 0)
        chosen, residual = rule(p_all[rows, at[rows]], q_all[rows[:, None], safe], x_all[rows[:, None], safe], valid, rng)
        accepted = chosen >= 0
        node = children[np.flatnonzero(accepted), chosen[accepted]]
        out[rows[accepted], level] = x_all[rows[accepted], node]
        at[rows[accepted]] = node + 1
        # every child rejected: the round ends with a token from the residual law
        stop = rows[~accepted]
        out[stop, level] = draw_rows(residual[~accepted], rng)
        live[stop] = False
    return out


def draft_tree_arrays(target: LM, draft: LM, prefix: tuple, shape: TreeShape, n: int,
                      rng: np.random.Generator) -> TreeArrays:
    """Draw ``n`` trees of ``shape`` from the toy ``draft`` below ``prefix`` and lay them out as engines do.

    Every node must get all its children: without replacement and top-k, q must have at least
    ``branching[i]`` tokens of positive mass at every node (else InvalidArgument names the node).
    """
    n = check_integer(n, "n (trees in the batch)", min_value=1)
    shape = check_shape(shape)
    prefix = tuple(prefix)
    vocab = tuple(getattr(target, "vocabulary", None) or law_at(target, prefix, "target").sorted_outcomes())
    index = {x: i for i, x in enumerate(vocab)}
    parents = tree_parents(shape)
    rows: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}

    def floats(context: tuple) -> tuple[np.ndarray, np.ndarray]:
        if context not in rows:
            p, q = law_at(target, context, "target"), law_at(draft, context, "draft")
            rows[context] = (np.array([float(p[x]) for x in vocab]), np.array([float(q[x]) for x in vocab]))
        return rows[context]

    target_probs = np.zeros((n, len(parents) + 1, len(vocab)))
    draft_probs = np.zeros((n, len(parents), len(vocab)))
    tokens = np.zeros((n, len(parents)), dtype=np.int64)
    for b in range(n):
        context_of = {-1: prefix}
        target_probs[b, 0] = floats(prefix)[0]
        siblings: list = []
        for i, parent in enumerate(parents.tolist()):
            context = context_of[parent]
            if i == 0 or parents[i - 1] != parent:  # breadth-first order: a node's children are contiguous
                siblings = list(_draw_siblings(law_at(draft, context, "draft"), int(np.sum(parents == parent)),
                                               shape.children, context, rng))
            token = siblings.pop(0)
            tokens[b, i] = index[token]
            draft_probs[b, i] = floats(context)[1]
            context_of[i] = context + (token,)
            target_probs[b, i + 1] = floats(context_of[i])[0]
    return TreeArrays(parents, target_probs, draft_probs, tokens, vocab)


def _draw_siblings(q, k: int, children: str, context: tuple, rng: np.random.Generator) -> tuple:
    """k children of one node in draw order: i.i.d., one by one without replacement, or the top k."""
    outcomes = [x for x in q if q[x] > 0]
    if children != "iid" and len(outcomes) < k:
        raise InvalidArgument(f"the draft law at {context!r} has {len(outcomes)} tokens of positive mass, "
                              f"fewer than the {k} children a full {children} tree needs there")
    if children == "top-k":
        return top_k_tokens(q, k)
    weights = np.array([float(q[x]) for x in outcomes])
    drawn: list = []
    for _ in range(k):
        i = int(draw_rows(weights[None, :], rng)[0])
        drawn.append(outcomes[i])
        if children == "without-replacement":
            weights[i] = 0.0  # the next draw is from q without the tokens drawn so far
    return tuple(drawn)
