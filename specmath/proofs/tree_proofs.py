"""Verifications of token-tree rounds: each lossless verifier with the children it is proved for.

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

from specmath.proofs.verification import Verification
from specmath.speculative.tree import TreeShape, accepted_per_round, tree_generation_law
from specmath.speculative.tree_examples import EQUAL_NODE_SHAPES, TREE_DRAFT, TREE_TARGET
from specmath.speculative.variants import autoregressive_law

__all__ = ["PROOFS"]

_LENGTH = 3


def _tree_proof(name: str, verifier: str, children: str, text: str) -> Verification:
    shape = TreeShape((2, 2), children)
    law = tree_generation_law(TREE_TARGET, TREE_DRAFT, (), shape, _LENGTH, verifier)
    shapes = [replace(s, children=children) for s in EQUAL_NODE_SHAPES]
    accepted = accepted_per_round(TREE_TARGET, TREE_DRAFT, (), shapes, verifier)
    return Verification(
        name,
        f"{text}; 2 x 2 {children} trees, {_LENGTH} tokens",
        law,
        autoregressive_law(TREE_TARGET, (), _LENGTH),
        extras={"E[accepted] per round, 6 drafted tokens": {"x".join(map(str, s.branching)): a for s, a in accepted.items()}},
    )


def _specinfer() -> Verification:
    return _tree_proof("tree-specinfer", "specinfer", "iid", "SpecInfer's recursive rejection over i.i.d. children")


def _without_replacement() -> Verification:
    return _tree_proof("tree-without-replacement", "without-replacement", "without-replacement",
                       "recursive rejection without replacement (Jeon et al. 2024), q renormalised after each child")


def _target_only() -> Verification:
    return _tree_proof("tree-target-only", "target-only", "top-k",
                       "SGLang's target-only rule (first child j with u <= p(x_1) + ... + p(x_j)) on top-k children")


#: name -> zero-argument function returning the Verification (``specmath verify NAME``)
PROOFS = {
    "tree-specinfer": _specinfer,
    "tree-without-replacement": _without_replacement,
    "tree-target-only": _target_only,
}
