"""Internal: Verifications of adaptive drafting: rounds whose draft length is decided on the draft's side.

Notation: p = target law, q = draft law, gamma = the most draft tokens per round,
alpha = sum_x min(p(x), q(x)).

* ``confidence-stop``: the draft stops before position i when max_x q_i(x) < threshold
  (``specmath.speculative.confidence_stop``; ``DecodeOptions(draft_threshold=...)``);
* ``lookup-adaptive``: prompt lookup proposes only what its latest n-gram match offers, none
  without a match (``specmath.speculative.lookup_round``; ``PromptLookupDraft``).

Each compares the exact law of the first ``length`` generated tokens with the target's
autoregressive law (Fraction ==), on the article's word bigram world.
"""

from __future__ import annotations

from fractions import Fraction

from specmath.proofs.verification import Verification
from specmath.speculative import autoregressive_law
from specmath.speculative.confidence_stop import (
    confidence_stop_generation_law,
    confidence_stop_round_law,
    expected_drafted,
)
from specmath.speculative.examples import ROUND_DRAFT, ROUND_TARGET
from specmath.speculative.lookup_round import lookup_generation_law
from specmath.speculative.variants import expected_emitted

__all__ = ["PROOFS"]

#: the draft is sure of itself after most words (q = 1) and unsure after "love" (2/3) and "is" (1/2)
THRESHOLD = Fraction(3, 4)
GAMMA, LENGTH = 3, 4
#: from "I" the draft proposes "love" (q = 1), then stops (max q = 2/3 after "love")
PREFIX = ("I",)


def _confidence_stop() -> Verification:
    law = confidence_stop_generation_law(ROUND_TARGET, ROUND_DRAFT, PREFIX, GAMMA, THRESHOLD, LENGTH)
    extras = {}
    for t in (Fraction(0), THRESHOLD):
        extras[f"E[draft tokens per round], threshold {t}"] = expected_drafted(ROUND_TARGET, ROUND_DRAFT, PREFIX, GAMMA, t)
        extras[f"E[tokens per round], threshold {t}"] = expected_emitted(
            confidence_stop_round_law(ROUND_TARGET, ROUND_DRAFT, PREFIX, GAMMA, t))
    return Verification(
        "confidence-stop",
        f"the draft stops when max_x q(x) < {THRESHOLD} (word bigrams, prefix {' '.join(PREFIX)!r}, "
        f"gamma <= {GAMMA}, {LENGTH} tokens)",
        law,
        autoregressive_law(ROUND_TARGET, PREFIX, LENGTH),
        extras=extras,
    )


def _lookup_adaptive() -> Verification:
    prefix = ("I", "love", "machine", "learning", ".", "I", "love")
    law = lookup_generation_law(ROUND_TARGET, prefix, GAMMA, LENGTH)
    return Verification(
        "lookup-adaptive",
        f"prompt lookup proposes what the latest match offers (<= {GAMMA} tokens, none without a match), "
        f"word bigrams, prefix {' '.join(prefix)!r}, {LENGTH} tokens",
        law,
        autoregressive_law(ROUND_TARGET, prefix, LENGTH),
    )


#: name -> zero-argument function returning the Verification (``specmath verify NAME``)
PROOFS = {
    "confidence-stop": _confidence_stop,
    "lookup-adaptive": _lookup_adaptive,
}
