"""A prompt-lookup round: propose what the latest n-gram match offers, as many tokens as it offers.

Notation: p = target law, q = draft law, gamma = the most draft tokens per round,
alpha = sum_x min(p(x), q(x)).

Prompt lookup decoding (Saxena 2023; ``specmath.lm.drafts.PromptLookupDraft``) has no draft model:
find the latest earlier occurrence of the context's last n tokens and propose the tokens that
followed it. Here it proposes only those tokens, at most gamma and none when nothing matches (the
round is then one plain target step, with no target positions wasted on padding). The proposal is a
function of the context, so its law q_i is the point mass on x_i: accept with probability
min(1, p_i(x_i) / 1) = p_i(x_i), resample from p_i with x_i removed.

Lossless for the same reason as every round: each drafted position is accepted or rejected with the law it
was drawn from (a point mass), and the length of the proposal is fixed by the context before any
target law is read.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from specmath.laws import Law
from specmath.speculative.multidraft import one_hot
from specmath.speculative.round import LM, accept_block, check_round_arguments
from specmath.speculative.variants import generation_law_of, round_law_of

__all__ = ["lookup_proposal", "lookup_round", "lookup_generation_law"]


def lookup_proposal(context: Sequence[Hashable], gamma: int, max_ngram: int = 2) -> tuple:
    """Up to gamma tokens that followed the latest earlier match of the context's last n tokens (longest n first); () if none."""
    seq = tuple(context)
    for n in range(min(max_ngram, len(seq) - 1), 0, -1):
        tail = seq[-n:]
        for start in range(len(seq) - n - 1, -1, -1):
            if seq[start : start + n] == tail:
                return seq[start + n : start + n + gamma]
    return ()


def lookup_round(target: LM, prefix: tuple, gamma: int, vocabulary: Sequence[Hashable], max_ngram: int = 2):
    """Sampling program: propose ``lookup_proposal`` (one-hot laws), then ``accept_block``; returns the emitted tuple."""
    prefix = check_round_arguments(prefix, gamma)
    tokens = lookup_proposal(prefix, gamma, max_ngram)
    q_laws = tuple(one_hot(x, vocabulary) for x in tokens)
    emitted = yield from accept_block(target, prefix, tokens, q_laws)
    return emitted


def lookup_generation_law(target: LM, prefix: tuple, gamma: int, length: int, max_ngram: int = 2) -> Law:
    """Law of the first ``length`` tokens of repeated lookup rounds; lossless iff == autoregressive law."""
    vocabulary = tuple(target(tuple(prefix)).keys())
    return generation_law_of(
        lambda context: round_law_of(lookup_round, target, context, gamma, vocabulary, max_ngram), tuple(prefix), length
    )
