"""A round whose draft stops early when it is unsure: max_x q(x) < threshold ends the draft phase.

Notation: p = target law, q = draft law, gamma = the most draft tokens per round,
alpha = sum_x min(p(x), q(x)).

Adaptive drafting (Leviathan et al. 2023 section 3.4 on choosing gamma; HF's
``assistant_confidence_threshold``; ``specmath.lm`` ``DecodeOptions(draft_threshold=t)``):

1. for i = 1..gamma: compute q_i = q(. | prefix x_1..x_{i-1}); if max_x q_i(x) < t, stop drafting;
   else draw x_i ~ q_i;
2. accept/reject the n <= gamma drafted tokens as in every round (``accept_block``); n = 0 is one
   plain target step (the "bonus" token drawn from p(. | prefix)).

Why it stays lossless: whether position i is drafted depends only on q_i, which depends only on the
tokens already drafted. Given that x_1..x_{i-1} were accepted they equal the emitted tokens, so the
stop decision at i is a function of the emitted prefix, fixed before x_i is drawn; when position i
is drafted, x_i ~ q_i exactly, the law accept_block uses, and accept/resample emits a token with
law p_i; when the draft stops, the bonus token has law p_i too. Either way position i emits a
p_i-token, so the round emits a prefix of an autoregressive p-sample (Theorem 1 of Leviathan et al.
applied position by position).

Contrast: stopping on the *drafted* token's q_i(x_i) < t (decided after x_i is drawn, dropping x_i)
makes a drafted x_i follow q_i restricted to {q_i >= t}, not q_i; accepting it with min(1, p_i/q_i) is then
lossy unless accept/reject uses that renormalised law. The threshold here reads max_x q_i(x) only.

``confidence_stop_round`` is the sampling program (one meaning for both interpreters);
``specmath verify confidence-stop`` proves its generation law equals the target's autoregressive law.
"""

from __future__ import annotations

from fractions import Fraction

from specmath.exact import exact
from specmath.laws import Law
from specmath.program import draw, tick
from specmath.speculative.round import LM, accept_block, check_round_arguments, law_at
from specmath.speculative.variants import generation_law_of, round_law_of
from specmath.validation import check_fraction

__all__ = [
    "confidence",
    "check_threshold",
    "confident_draft_block",
    "confidence_stop_round",
    "confidence_stop_round_law",
    "confidence_stop_generation_law",
    "expected_drafted",
]


def confidence(q: Law) -> Fraction:
    """The draft's confidence in its next token: max_x q(x)."""
    return max(q.values())


def check_threshold(threshold: object) -> Fraction:
    """The threshold as an exact Fraction in [0, 1] (LawError otherwise)."""
    return check_fraction(threshold, "the confidence threshold", min_value=0, max_value=1)


def confident_draft_block(draft: LM, prefix: tuple, gamma: int, threshold: Fraction):
    """Sampling program: draft up to gamma tokens, stopping before x_i when max_x q_i(x) < threshold.

    Returns ``(tokens, q_laws)`` like ``draft_block`` (0..gamma of them). One "draft" tick per
    draft pass, including the pass whose law made it stop.
    """
    tokens: tuple = ()
    q_laws: tuple = ()
    for _ in range(gamma):
        q = law_at(draft, prefix + tokens, "draft")
        yield tick("draft")
        # the decision reads q alone (no p, no drawn token): accept/reject's law for x_i stays q_i
        if confidence(q) < threshold:
            break
        x = yield draw(q, label="draft token")
        tokens += (x,)
        q_laws += (q,)
    return tokens, q_laws


def confidence_stop_round(target: LM, draft: LM, prefix: tuple, gamma: int, threshold: Fraction | int | str):
    """Sampling program for one round: ``confident_draft_block`` then ``accept_block``; returns the emitted tuple."""
    prefix = check_round_arguments(prefix, gamma)
    threshold = check_threshold(threshold)
    tokens, q_laws = yield from confident_draft_block(draft, prefix, gamma, threshold)
    emitted = yield from accept_block(target, prefix, tokens, q_laws)
    return emitted


def confidence_stop_round_law(target: LM, draft: LM, prefix: tuple, gamma: int, threshold) -> Law:
    """Exact law of the tuple one confidence-stop round emits (1..gamma+1 tokens)."""
    return round_law_of(confidence_stop_round, target, draft, tuple(prefix), gamma, check_threshold(threshold))


def confidence_stop_generation_law(target: LM, draft: LM, prefix: tuple, gamma: int, threshold, length: int) -> Law:
    """Law of the first ``length`` tokens of repeated confidence-stop rounds; lossless iff == autoregressive law."""
    t = check_threshold(threshold)
    return generation_law_of(lambda context: confidence_stop_round_law(target, draft, context, gamma, t), tuple(prefix), length)


def expected_drafted(target: LM, draft: LM, prefix: tuple, gamma: int, threshold) -> Fraction:
    """E[draft tokens proposed in one round], exactly: the threshold trades drafted tokens for acceptance."""
    t = check_threshold(threshold)

    def proposed(target, draft, prefix, gamma, t):
        tokens, _ = yield from confident_draft_block(draft, prefix, gamma, t)
        return len(tokens)

    return exact(proposed, target, draft, tuple(prefix), gamma, t).law.expectation(lambda n: n)
