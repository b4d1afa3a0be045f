"""Verifications of multi-token rounds: ``specmath verify speculative-round`` and ``speculative-generate``.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

Both use the article's word world (``specmath.speculative.examples``: prefix "I love", a bigram
target and an over-confident bigram draft). A round is lossless when its emitted tuple, continued by
plain target sampling to gamma + 1 tokens, has the autoregressive law of the target; generation is
lossless when the first ``length`` tokens of repeated rounds have that law.

References: Leviathan et al., ICML 2023, Algorithm 1 and Appendix A.1.
"""

from __future__ import annotations

from .speculative import (
    acceptance_rate,
    autoregressive_law,
    completed_round_law,
    expected_round_tokens,
    generate_law,
    target_passes_per_token,
)
from .speculative.examples import ROUND_DRAFT, ROUND_PREFIX, ROUND_TARGET
from .verifications import register
from .verify import Verification

__all__: list[str] = []

ROUND_GAMMA = 4
GENERATE_LENGTH = 6


@register("speculative-round")
def _speculative_round() -> Verification:
    target, draft, prefix, gamma = ROUND_TARGET, ROUND_DRAFT, ROUND_PREFIX, ROUND_GAMMA
    return Verification(
        "speculative-round",
        f"one round, gamma = {gamma}, prefix {' '.join(prefix)!r}, bigram word world; emitted tokens "
        f"continued by plain target sampling to {gamma + 1} tokens vs {gamma + 1} target tokens",
        completed_round_law(target, draft, prefix, gamma),
        autoregressive_law(target, prefix, gamma + 1),
        extras={
            "alpha at the prefix": acceptance_rate(target(prefix), draft(prefix)),
            "E[tokens per round] (exact)": expected_round_tokens(target, draft, prefix, gamma),
        },
    )


@register("speculative-generate")
def _speculative_generate() -> Verification:
    target, draft, prefix, gamma, length = ROUND_TARGET, ROUND_DRAFT, ROUND_PREFIX, 3, GENERATE_LENGTH
    return Verification(
        "speculative-generate",
        f"repeated rounds with gamma = {gamma} until {length} tokens (last round truncated) vs {length} target tokens",
        generate_law(target, draft, prefix, gamma, length),
        autoregressive_law(target, prefix, length),
        extras={"E[target passes per token] (exact)": target_passes_per_token(target, draft, prefix, gamma, length)},
    )
