"""Claims about TensorRT-LLM's EAGLE-3 dynamic-tree rejection sampling (NVIDIA/TensorRT-LLM).

Notation: p = target law, q = draft law (TensorRT-LLM's kernel comments swap the names: its p is the
draft). Read in the stored snapshots of the files at the commits named; not run (the kernels need a CUDA GPU).
"""

from __future__ import annotations

from datetime import date

from specmath.bugzoo.claims.record import Claim

__all__ = ["RECORDS", "SIBLING_RULE"]

SIBLING_RULE = Claim(
    key="tensorrt-llm-sibling-rule",
    engine="TensorRT-LLM", repository="NVIDIA/TensorRT-LLM",
    version="the kernel PR #12588 added (dynamicTreeKernels.cu at 16f02671)", checked=date(2026, 12, 1),
    status="fixed",
    fixed_by="PR #15098 (merged June 2026), which replaced it with a target-only rule",
    claim="`verifyDynamicTreeRejectionKernel` tested every top-K sibling with min(1, p(x)/q(x)) against the same p and "
          "q and, when all were rejected, corrected from norm(max(0, p - q)) with the first sibling's draft row: lossy "
          "with two or more siblings (specmath's model: 7/16 over 2 tokens on 2 x 2 top-k trees, 9/20 over 3); with one "
          "sampled child per node it is the standard step, TV 0",
    evidence="read in the source",
    where=("cpp/tensorrt_llm/kernels/speculativeDecoding/dynamicTreeKernels.cu at 16f02671, "
           "verifyDynamicTreeRejectionKernel: `fminf(1.0f, pTarget / (pDraft + 1e-10f))` per sibling, the correction "
           "from the draftProbs row of firstChild",
           "NVIDIA/TensorRT-LLM PR #15098, 'fix output distribution correctness for Eagle3 dynamic-tree rejection "
           "sampling' (merged June 2026)",
           "after PR #15098: tensorrt_llm/_torch/speculative/eagle3_dynamic_tree.py at 057c8a65, "
           "`_can_use_rejection_sampling` ('Target-only rejection sampling only requires target logits'), and "
           "cpp/tensorrt_llm/thop/dynamicTreeOp.cpp, `verify_dynamic_tree_rejection_out_op` ('Target-only rejection "
           "sampling verify op (no draft probabilities needed)')"),
    reproducer="pytest tests/bugzoo/test_claim_figures.py -k sibling (specmath's model of the old kernel)",
    upstream="NVIDIA/TensorRT-LLM#15098",
    note="the new target-only kernel was not read line by line; its rule is named by its own comments",
)

#: this engine's claims (joined into ``specmath.bugzoo.claims.CLAIMS``)
RECORDS: tuple[Claim, ...] = (SIBLING_RULE,)
