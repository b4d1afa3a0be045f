"""The tree adapter record: a tree sampler under audit, with the children its verifier assumes.

Notation: p = target law, q = draft law, gamma = a tree's nodes. The interface of ``sample_tree`` and
the adapters specmath offers are ``specmath.audit.trees.adapters``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from specmath.speculative.tree import CHILDREN
from specmath.validation import check_choice, check_generator_kind

__all__ = ["TreeAdapter"]


@dataclass(frozen=True)
class TreeAdapter:
    """A tree sampler under audit: its function, its generator kind and the children its verifier assumes."""

    name: str
    description: str
    sample_tree: Callable  # (parents, target_probs, draft_probs, draft_tokens, generator) -> [N, depth + 1]
    generator_kind: str  # "numpy" or "torch"
    children: str  # how the auditor draws each node's children (CHILDREN)

    def __post_init__(self) -> None:
        check_choice(self.children, "way of drawing children", CHILDREN)
        check_generator_kind(self.generator_kind)
