"""Sample-match: sample the target at every drafted position and keep the matching prefix.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

Several engines verify sampled drafts this way (vLLM model runner V2's default "strict" rejection
sampling, the "sampler-match" rule of lablup/mlxcel): the target samples y_i ~ p_i at each position, the draft token x_i is kept
iff y_i == x_i, and the first mismatch emits y_i. Every emitted token *is* a target sample, so the
output is lossless for any draft, trivially. The price is acceptance:

    P(accept) = sum_x q(x) p(x)  <=  sum_x min(p(x), q(x)) = alpha,

because p(x) q(x) = min(p, q) max(p, q) <= min(p, q). Equality needs max(p(x), q(x)) = 1 wherever
both are positive: the supports are disjoint, or the only shared token carries all of p's or all of
q's mass. So for a deterministic (one-hot) draft such as n-gram lookup, sample-match loses
nothing (both accept with p(x_draft)); for a sampled draft it accepts strictly less.

References: vllm-project/vllm PR #35461 (strict vs probabilistic rejection sampling in model
runner V2); lablup/mlxcel PR #992 (the "sampler-match" rule and its acceptance sum p q);
Leviathan et al., ICML 2023 (the min(1, p/q) rule it is compared with).
"""

from __future__ import annotations

from fractions import Fraction

from specmath.laws import Law, LawError, as_law, check_same_vocabulary
from specmath.program import draw, tick
from specmath.speculative.round import LM, drafted_round
from specmath.speculative.step import acceptance_rate
from specmath.speculative.variants import RoundVariant

__all__ = [
    "SAMPLE_MATCH",
    "match_acceptance",
    "sample_match_step",
    "sample_match_block",
    "sample_match_round",
    "sample_match_round_law",
    "sample_match_generation_law",
    "acceptance_gap",
    "sampled_vs_tokenwise",
]


def match_acceptance(p: Law, q: Law) -> Fraction:
    """P(y == x) for x ~ q, y ~ p independent: sum_x p(x) q(x)."""
    p, q = as_law(p, name="p"), as_law(q, name="q")
    check_same_vocabulary(p, q)
    return sum((p[x] * q[x] for x in p), Fraction(0))


def acceptance_gap(p: Law, q: Law) -> Fraction:
    """alpha - sum_x p(x) q(x) = sum_x min(p, q) (1 - max(p, q)) >= 0: what sample-match gives up per token."""
    return acceptance_rate(p, q) - match_acceptance(p, q)


def sample_match_step(p: Law, q: Law):
    """Sampling program: draft x ~ q, target sample y ~ p; return (y, accepted) with accepted = (y == x)."""
    check_same_vocabulary(p, q)
    x = yield draw(q, label="draft")
    y = yield draw(p, label="target sample")
    return (y, y == x)


def sample_match_block(target: LM, prefix: tuple, tokens: tuple, q_laws: tuple):
    """Sampling program: keep draft tokens while the target's own sample matches; return the emitted tuple."""
    if len(tokens) != len(q_laws):
        raise LawError(f"sample_match_block got {len(tokens)} draft tokens but {len(q_laws)} draft laws")
    yield tick("target")
    for i, x in enumerate(tokens):
        p = target(prefix + tokens[:i])
        check_same_vocabulary(p, q_laws[i], p_name=f"target({prefix + tokens[:i]!r})", q_name="its draft law")
        # the target samples its own token y_i ~ p_i; the draft token survives only if it matches
        y = yield draw(p, label="target sample")
        if y != x:
            return tokens[:i] + (y,)
    bonus = yield draw(target(prefix + tokens), label="bonus")
    return tokens + (bonus,)


def sample_match_round(target: LM, draft: LM, prefix: tuple, gamma: int):
    """Sampling program: ``draft_block`` then ``sample_match_block``; returns the emitted tuple."""
    return (yield from drafted_round(sample_match_block, target, draft, prefix, gamma))


#: the variant: its round program and the shared laws of ``specmath.speculative.variants``
SAMPLE_MATCH = RoundVariant(sample_match_round, "sample-match")
#: exact law of the tuple one round emits; law of the first ``length`` tokens of repeated rounds
sample_match_round_law = SAMPLE_MATCH.round_law
sample_match_generation_law = SAMPLE_MATCH.generation_law
#: E[accepted draft tokens per round]: sample-match vs the min(1, p/q) rule, same pair
sampled_vs_tokenwise = SAMPLE_MATCH.vs_tokenwise
