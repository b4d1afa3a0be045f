"""Bugs in which law reaches the accept/reject step: processed vs raw logits on one side only.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)); w is the user's sampling warp (temperature / top-k / top-p).

The correct round accepts/rejects against w(p) with the law the draft tokens were drawn from, w(q)
(``specmath.speculative.warped``). These entries keep the round and hand the accept/reject step a wrong law.

Sources (dated records in ``specmath.bugzoo.claims``): transformers issue #47932, fixed by PR #48007
(claim transformers-q-from-raw-logits); vLLM issue #9834, fixed by PR #10198 (claim vllm-target-probs-unwarped).
"""

from __future__ import annotations

from fractions import Fraction
from functools import partial

from specmath.bugzoo.claims import CLAIMS
from specmath.bugzoo.zoo import Bug, Instance, pair_instance
from specmath.laws import Law
from specmath.sampling_options import SamplingOptions
from specmath.speculative.reference_round import numpy_round
from specmath.speculative.round import speculative_round
from specmath.speculative.warped import mismatched_round

__all__ = ["LOGIT_BUGS", "q_from_raw_logits_round", "target_unwarped_round"]

TOP_2 = SamplingOptions(top_k=2)
TOP_P_HALF = SamplingOptions(top_p=Fraction(1, 2))


def q_from_raw_logits_round(inst: Instance, context: tuple):
    """Tokens drawn from w(q), accepted/rejected against w(p) but with q' = raw q (the unprocessed logits)."""
    emitted = yield from mismatched_round(inst.wanted_target, inst.drawn_draft, inst.draft, context, inst.gamma)
    return emitted


def target_unwarped_round(inst: Instance, context: tuple):
    """Tokens drawn from w(q) with q' = w(q), but accepted/rejected against the raw target p instead of w(p)."""
    emitted = yield from speculative_round(inst.target, inst.drawn_draft, context, inst.gamma)
    return emitted


def _top2_instance() -> Instance:
    # top-2 keeps p unchanged but removes C from q: raw q(B) = 1/4 vs processed q(B) = 1/3
    p = Law({"A": Fraction(1, 2), "B": Fraction(1, 2), "C": 0})
    q = Law({"A": Fraction(1, 2), "B": Fraction(1, 4), "C": Fraction(1, 4)})
    return pair_instance(p, q, warp=TOP_2)


def _top_p_instance() -> Instance:
    # top-p = 1/2 makes the wanted target one-hot on A; the raw target still gives B 1/3
    return pair_instance(Law({"A": Fraction(2, 3), "B": Fraction(1, 3)}), Law({"A": Fraction(1, 2), "B": Fraction(1, 2)}), warp=TOP_P_HALF)


#: this module's entries of the bug zoo (joined into ``specmath.bugzoo.BUGS``)
LOGIT_BUGS: tuple[Bug, ...] = (
    Bug(
        name="q-from-raw-logits",
        explanation="draft tokens are sampled from processed (top-k) logits but q is read from the raw ones: p/q is off by the kept mass and the residual counts tokens the draft never proposes",
        claim=CLAIMS["transformers-q-from-raw-logits"],
        make_instance=_top2_instance,
        lossy_round=q_from_raw_logits_round,
        sample_round=partial(numpy_round, warp_target=TOP_2, warp_draft=None),
        warp=TOP_2,
    ),
    Bug(
        name="target-probs-unwarped",
        explanation="top-p is applied to the draft but the target probabilities use default sampling parameters, so the round is lossless for the raw p, not for the top-p law the user asked for",
        claim=CLAIMS["vllm-target-probs-unwarped"],
        make_instance=_top_p_instance,
        lossy_round=target_unwarped_round,
        sample_round=partial(numpy_round, warp_target=None, warp_draft=TOP_P_HALF),
        warp=TOP_P_HALF,
    ),
)
