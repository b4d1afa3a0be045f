"""Internal: The built-in tree adapters: the float tree reference under each lossless verifier, and the tree zoo's entries.

Notation: p = target law, q = draft law, gamma = a tree's nodes.

Each reference is a ``TreeAdapter`` (``specmath.audit.trees.tree_adapter``) named ``tree-NAME`` for a
record NAME of ``specmath.speculative.tree_registry``: ``tree_reference.sample_tree_rounds`` with that
verifier, under the children it is proved for (SGLang's target-only rule under ``top-k``, as SGLang
drafts EAGLE trees). All numpy: importing this module imports no torch.
"""

from __future__ import annotations

from functools import partial

from specmath.audit.trees.tree_adapter import TreeAdapter
from specmath.speculative.tree_reference import sample_tree_rounds
from specmath.speculative.tree_registry import TREE_VERIFIER_RECORDS, TreeVerifierRecord

__all__ = ["reference_tree_adapter", "REFERENCE_TREE_ADAPTERS"]


def reference_tree_adapter(record: TreeVerifierRecord) -> TreeAdapter:
    """The float tree reference with ``record``'s verifier, under the children its proof uses."""
    name, children = record.name, record.proof_children
    return TreeAdapter(f"tree-{name}", f"specmath's float64 numpy tree sampler, {name} verifier, {children} children (correct)",
                       partial(sample_tree_rounds, verifier=name), "numpy", children)


#: ``tree-NAME`` -> the reference adapter of tree verifier NAME, one per record
REFERENCE_TREE_ADAPTERS: dict[str, TreeAdapter] = {
    f"tree-{name}": reference_tree_adapter(record) for name, record in TREE_VERIFIER_RECORDS.items()}
