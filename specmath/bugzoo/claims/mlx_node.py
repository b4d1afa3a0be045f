"""Claims about mlx-node's speculative decoding (mlx-node/mlx-node), read in a review on its tracker."""

from __future__ import annotations

from datetime import date

from specmath.bugzoo.claims.record import Claim

__all__ = ["RECORDS", "LOGITS_OFF_BY_ONE"]

LOGITS_OFF_BY_ONE = Claim(
    key="mlx-node-logits-off-by-one",
    engine="mlx-node", repository="mlx-node/mlx-node", version="PR #11 (merged)", checked=date(2026, 12, 1),
    status="unconfirmed",
    claim="an automated review of PR #11 flagged the Qwen3 speculative path for slicing the target's verification "
          "logits from position 1, which judges draft i by the row after it and drops the bonus row",
    evidence="read in the tracker",
    where=("mlx-node/mlx-node PR #11, the review comment 'Verification logits are shifted by one' on "
           "crates/mlx-core/src/models/qwen3/model.rs",),
    upstream="mlx-node/mlx-node#11",
    note="the slice `target_logits.slice(&[0, 1, 0], ...)` is in a stored version of model.rs; whether the current "
         "source still has it was not checked",
)

#: this engine's claims (joined into ``specmath.bugzoo.claims.CLAIMS``)
RECORDS: tuple[Claim, ...] = (LOGITS_OFF_BY_ONE,)
