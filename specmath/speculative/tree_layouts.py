"""Engines' token-tree layouts turned into parent indices, the form ``tree_reference`` and the tree audit take.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

specmath's layout: ``parents[i]`` is the index of node i's parent, -1 for the children of the
context (the root), parents before their children; siblings are tried in index order. Engines write
the same tree in two other ways:

* **paths** (vLLM's ``speculative_token_tree``, Medusa's and TensorRT-LLM's ``medusa_choices``,
  TensorRT-LLM's ``eagle_choices``): node i is the tuple of child ranks from the root, ``(0,)`` the
  root's first child, ``(0, 1)`` that child's second child. The parent of a path is the path without
  its last rank; ``parents_from_paths`` keeps the listed order (engines list depth by depth, ranks
  ascending, so siblings are tried in rank order).
* **first child / next sibling** (SGLang's ``retrive_next_token`` and ``retrive_next_sibling``, one
  row per request, position 0 the root, i.e. the last verified token; -1 for none):
  ``parents_from_sglang`` turns one row into parent indices of positions 1.., so node i is SGLang's
  position i + 1 and ``candidates[:, 1:]`` are the draft tokens. SGLang's ``target_probs``
  [bs, num_draft_tokens, V] is specmath's [N, nodes + 1, V] row for row. Siblings are then tried
  in position order, which may differ from SGLang's sibling chain; its target-only rule accepts
  each of a node's distinct children with probability p(x) in any order, so its law does not change.
  SGLang's tree may differ from request to request; specmath's batch shares one.

Both raise ``InvalidArgument`` naming the first node that breaks the layout.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from specmath.validation import InvalidArgument

__all__ = ["parents_from_paths", "parents_from_sglang"]


def parents_from_paths(paths: Sequence[Sequence[int]]) -> np.ndarray:
    """Parent indices of a tree listed as child-rank paths: [(0,), (1,), (0, 0)] -> [-1, -1, 0]."""
    index: dict[tuple, int] = {}
    parents = []
    for i, path in enumerate(paths):
        path = tuple(path)
        if not path or not all(isinstance(r, (int, np.integer)) and not isinstance(r, bool) and r >= 0 for r in path):
            raise InvalidArgument(f"path {i} is {path!r}: a node is a non-empty tuple of child ranks >= 0, e.g. (0, 1)")
        if path in index:
            raise InvalidArgument(f"path {i} is {path!r}, listed twice (first as path {index[path]})")
        if len(path) > 1 and path[:-1] not in index:
            raise InvalidArgument(f"path {i} is {path!r}, but its parent {path[:-1]!r} is not listed before it")
        parents.append(-1 if len(path) == 1 else index[path[:-1]])
        index[path] = i
    if not parents:
        raise InvalidArgument("paths is empty: a tree has at least one node")
    return np.array(parents, dtype=np.int64)


def parents_from_sglang(next_token: Sequence[int], next_sibling: Sequence[int]) -> np.ndarray:
    """Parent indices of one SGLang request's tree (position 0 the root; node i = position i + 1).

    ``next_token[j]`` is position j's first child, ``next_sibling[j]`` its next sibling (-1: none).
    """
    first, sibling = np.asarray(next_token, dtype=np.int64), np.asarray(next_sibling, dtype=np.int64)
    size = len(first)
    if first.ndim != 1 or sibling.shape != first.shape or size < 2:
        raise InvalidArgument(f"next_token and next_sibling must be 1-d of one length >= 2 (the root and a node), "
                              f"got shapes {first.shape} and {sibling.shape}")
    parent_of = np.full(size, -2, dtype=np.int64)
    parent_of[0] = -1
    for position in range(size):  # positions in order: a parent is visited before its children
        if parent_of[position] == -2:
            raise InvalidArgument(f"position {position} is not reached from the root through a parent listed before it")
        child = int(first[position])
        while child != -1:
            if not position < child < size or parent_of[child] != -2:
                raise InvalidArgument(f"position {position} has child {child}: children must come after their parent, "
                                      "once each, within the tree")
            parent_of[child] = position
            child = int(sibling[child])
    return parent_of[1:] - 1
