"""Claims about vLLM Ascend's speculative decoding on NPUs (vllm-project/vllm-ascend).

Read in the stored snapshot of the file and on the tracker; not run (it needs an Ascend NPU).
"""

from __future__ import annotations

from datetime import date

from specmath.bugzoo.claims.record import Claim

__all__ = ["RECORDS", "UNIFORM_FIXED_AT_ZERO"]

UNIFORM_FIXED_AT_ZERO = Claim(
    key="vllm-ascend-uniform-fixed-at-zero",
    engine="vLLM Ascend", repository="vllm-project/vllm-ascend", version="commit 36eede59", checked=date(2026, 12, 1),
    status="fixed",
    fixed_by="a change before September 2026 (not identified): the diff of PR #16370 (2026-09-11) shows "
             "`_probabilistic_rejection_kernel` drawing u with `tl.rand`",
    claim="the V2 model runner's `_probabilistic_rejection_kernel` set `u = 0.0` ('NPU does not support tl_rand64; "
          "always accept the draft token'), so the test log p > log u + log q accepted every draft at T > 0: the output "
          "was the draft's law",
    evidence="read in the source",
    where=("vllm_ascend/worker/v2/spec_decode/rejection_sampler_utils.py at 36eede59, `_probabilistic_rejection_kernel`",
           "vllm-project/vllm-ascend issue #13730 (open on the tracker), PR #13766 (closed unmerged), PR #16370"),
    upstream="vllm-project/vllm-ascend#13730",
    note="the commit that replaced u = 0 was not identified; issue #13730 is still open on the tracker",
)

#: this engine's claims (joined into ``specmath.bugzoo.claims.CLAIMS``)
RECORDS: tuple[Claim, ...] = (UNIFORM_FIXED_AT_ZERO,)
