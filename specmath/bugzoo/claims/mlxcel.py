"""Claims about mlxcel's speculative decoding (lablup/mlxcel), read on its tracker."""

from __future__ import annotations

from datetime import date

from specmath.bugzoo.claims.record import Claim

__all__ = ["RECORDS", "ARGMAX_ACCEPTANCE"]

ARGMAX_ACCEPTANCE = Claim(
    key="mlxcel-argmax-acceptance",
    engine="mlxcel", repository="lablup/mlxcel", version="before issue #902 was closed (2026)", checked=date(2026, 12, 1),
    status="fixed", fixed_by="issue #902 closed as done (the fixing change was not read here)",
    claim="the verify loop accepted a draft token iff it equalled the target's argmax, also at temperature > 0, so "
          "verified positions were greedy-like instead of samples of the target's law",
    evidence="read in the tracker",
    where=("lablup/mlxcel issue #902 (closed, status:done): src/lib/mlxcel-core/src/speculative/mod.rs, the verify loop",),
    upstream="lablup/mlxcel#902",
)

#: this engine's claims (joined into ``specmath.bugzoo.claims.CLAIMS``)
RECORDS: tuple[Claim, ...] = (ARGMAX_ACCEPTANCE,)
