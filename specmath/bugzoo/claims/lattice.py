"""Claims about lattice's speculative decoding (ohdearquant/lattice), read on its tracker."""

from __future__ import annotations

from datetime import date

from specmath.bugzoo.claims.record import Claim

__all__ = ["RECORDS", "FIRST_DRAFT_UNVERIFIED"]

FIRST_DRAFT_UNVERIFIED = Claim(
    key="lattice-first-draft-unverified",
    engine="lattice", repository="ohdearquant/lattice", version="before PR #258 (2026-06)", checked=date(2026, 12, 1),
    status="fixed", fixed_by="PR #258 (merged June 2026)",
    claim="`verify_draft` fed draft[0] first and checked only draft[1..], so the first draft token was committed without "
          "the target's law at its position (a length-1 draft was always accepted)",
    evidence="read in the tracker",
    where=("ohdearquant/lattice issue #243 (closed) and PR #258 (merged): crates/inference/src/speculative.rs "
           "`verify_draft`",),
    upstream="ohdearquant/lattice#243",
)

#: this engine's claims (joined into ``specmath.bugzoo.claims.CLAIMS``)
RECORDS: tuple[Claim, ...] = (FIRST_DRAFT_UNVERIFIED,)
