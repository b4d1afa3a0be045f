"""Internal: Verifications of token-tree rounds: each lossless verifier with the children it is proved for.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

Each entry compares the exact law of the first 3 tokens of repeated 2 x 2 tree rounds (6 drafted
tokens per round) on the tree track's example pair with the target's autoregressive law. The
lossy tree verifiers (SpecInfer's rule on top-k children, the sibling rule TensorRT-LLM had until PR
#15098, claim tensorrt-llm-sibling-rule; typical acceptance) live in ``specmath.bugzoo.tree_bugs``, each with its claim record, and are
not registered here.

References: Miao et al., ASPLOS 2024 (SpecInfer); Jeon et al., arXiv 2402.14160 (RSD); SGLang
sgl-kernel ``tree_speculative_sampling_target_only``.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from specmath.proofs.verification import Verification
from specmath.speculative.tree import TreeShape, accepted_per_round, tree_generation_law
from specmath.speculative.tree_examples import EQUAL_NODE_SHAPES, TREE_DRAFT, TREE_TARGET
from specmath.speculative.tree_registry import TREE_VERIFIER_RECORDS, TreeVerifierRecord
from specmath.speculative.variants import autoregressive_law

__all__ = ["PROOFS"]

_LENGTH = 3


def _tree_proof(record: TreeVerifierRecord) -> Verification:
    """``specmath verify tree-NAME``: the verifier's generation law under its proof's children equals p's."""
    children = record.proof_children
    shape = TreeShape((2, 2), children)
    law = tree_generation_law(TREE_TARGET, TREE_DRAFT, (), shape, _LENGTH, record.name)
    shapes = [replace(s, children=children) for s in EQUAL_NODE_SHAPES]
    accepted = accepted_per_round(TREE_TARGET, TREE_DRAFT, (), shapes, record.name)
    return Verification(
        f"tree-{record.name}",
        f"{record.description}; 2 x 2 {children} trees, {_LENGTH} tokens",
        law,
        autoregressive_law(TREE_TARGET, (), _LENGTH),
        extras={"E[accepted] per round, 6 drafted tokens": {"x".join(map(str, s.branching)): a for s, a in accepted.items()}},
    )


#: name -> zero-argument function returning the Verification (``specmath verify NAME``): one per tree
#: verifier record (``specmath.speculative.tree_registry``)
PROOFS = {f"tree-{name}": partial(_tree_proof, record) for name, record in TREE_VERIFIER_RECORDS.items()}
