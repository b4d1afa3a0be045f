"""The built-in tree adapters: the float tree reference under each lossless verifier, and the tree zoo's entries.

Notation: p = target law, q = draft law, gamma = a tree's nodes.

Each reference is a ``TreeAdapter`` (``specmath.audit.trees.adapters``) named by the registry
``TREE_ADAPTERS`` there: ``tree_reference.sample_tree_rounds`` with one verifier, under the children it
is proved for (SGLang's target-only rule under ``top-k``, as SGLang drafts EAGLE trees). All numpy:
importing this module imports no torch.
"""

from __future__ import annotations

from functools import partial

from specmath.audit.trees.adapters import TreeAdapter
from specmath.speculative.tree_reference import sample_tree_rounds

__all__ = ["TREE_SPECINFER", "TREE_WITHOUT_REPLACEMENT", "TREE_TARGET_ONLY"]


def _reference(name: str, verifier: str, children: str) -> TreeAdapter:
    return TreeAdapter(name, f"specmath's float64 numpy tree sampler, {verifier} verifier, {children} children (correct)",
                       partial(sample_tree_rounds, verifier=verifier), "numpy", children)


TREE_SPECINFER = _reference("tree-specinfer", "specinfer", "iid")
TREE_WITHOUT_REPLACEMENT = _reference("tree-without-replacement", "without-replacement", "without-replacement")
TREE_TARGET_ONLY = _reference("tree-target-only", "target-only", "top-k")
