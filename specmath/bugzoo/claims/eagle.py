"""Claims about EAGLE's reference code (SafeAILab/EAGLE, commit cb7e0841, 2026-02-19, the head).

Notation: p = target law, q = draft law. ``eagle/model/utils.py`` last changed at c7ef8e5 (2025-05-18);
lines refer to cb7e0841.
"""

from __future__ import annotations

from datetime import date

from specmath.bugzoo.claims.record import Claim

__all__ = ["RECORDS", "ONE_HOT_Q"]

ONE_HOT_Q = Claim(
    key="eagle-one-hot-q",
    engine="EAGLE", repository="SafeAILab/EAGLE", version="commit cb7e0841", checked=date(2026, 12, 1),
    status="latent",
    claim="at T > 0 `evaluate_posterior` judges each distinct child x with `r <= p(x) / qx`, `qx = 1.0`, and after a "
          "rejection sets p(x) = 0 and renormalises p: the one-hot view of a top-k child, so the emitted token follows p "
          "(SGLang's target-only rule, without its running sum: repeated children are skipped); `r = random.random()` "
          "is 0.0 with probability 2^-53, and `0 <= 0` then keeps a child of p = 0",
    evidence="read in the source",
    where=("eagle/model/utils.py lines 375-408 (`qx = 1.0` at 398, `r <= acp` at 400, the renormalisation at 406-407, "
           "repeated children skipped at 393-394)",),
    note="the u = 0 case has probability 2^-53 per child: no sampling test sees it",
)

#: this engine's claims (joined into ``specmath.bugzoo.claims.CLAIMS``)
RECORDS: tuple[Claim, ...] = (ONE_HOT_Q,)
