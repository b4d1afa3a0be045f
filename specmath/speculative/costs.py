"""Exact costs of speculative decoding for any toy pair: tokens per round, target passes per token.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

A round runs gamma draft passes and one target pass and emits |e| tokens, e ~ ``round_law``:

    E[tokens per round] = sum_e R(e) |e| = sum_{k=0}^{gamma} P(the first k drafts are accepted).

With the same alpha at every position this is (1 - alpha^(gamma+1)) / (1 - alpha)
(``specmath.theory.expected_tokens_per_round``); with context-dependent LMs alpha varies along
the draft and only the exact sum is right. Generating n tokens takes N(prefix, n) rounds (one
target pass each), with

    N(prefix, n) = 1 + sum_{e : |e| < n} R_prefix(e) N(prefix e, n - |e|),

and ``target_passes_per_token`` = N / n (plain decoding needs exactly 1 per token).

References: Leviathan et al., ICML 2023, Section 3.3 (Eq. 1, the expected number of tokens).
"""

from __future__ import annotations

from fractions import Fraction

from specmath.exact import exact
from specmath.speculative.round import LM, check_round_arguments, round_law, speculative_round
from specmath.speculative.step import Rule, acceptance_rate, standard_rule
from specmath.speculative.variants import check_length

__all__ = [
    "expected_round_tokens",
    "expected_target_passes",
    "target_passes_per_token",
    "round_program_costs",
    "position_acceptance_rate",
]


def expected_round_tokens(target: LM, draft: LM, prefix: tuple, gamma: int, rule: Rule | None = None) -> Fraction:
    """E[tokens emitted by one round] = sum_e R(e) |e|, exactly (1 <= value <= gamma + 1)."""
    return round_law(target, draft, prefix, gamma, rule).expectation(len)


def expected_target_passes(target: LM, draft: LM, prefix: tuple, gamma: int, length: int, rule: Rule | None = None) -> Fraction:
    """E[rounds, i.e. target forward passes, until ``length`` tokens exist]:
    N(prefix, n) = 1 + sum_{|e| < n} R_prefix(e) N(prefix e, n - |e|)."""
    prefix = check_round_arguments(prefix, gamma)
    length = check_length(length)
    memo: dict[tuple, Fraction] = {}
    rounds: dict[tuple, dict] = {}  # one round law per context, shared by every remaining length

    def passes(context: tuple, remaining: int) -> Fraction:
        key = (context, remaining)
        if key not in memo:
            if context not in rounds:
                rounds[context] = round_law(target, draft, context, gamma, rule)
            short = [(e, w) for e, w in rounds[context].items() if w and len(e) < remaining]
            # this round's target pass, plus the rounds still needed after a short round
            memo[key] = 1 + sum((w * passes(context + e, remaining - len(e)) for e, w in short), Fraction(0))
        return memo[key]

    return passes(prefix, length)


def target_passes_per_token(target: LM, draft: LM, prefix: tuple, gamma: int, length: int, rule: Rule | None = None) -> Fraction:
    """E[target forward passes] / length for generating ``length`` tokens (plain decoding: exactly 1)."""
    return expected_target_passes(target, draft, prefix, gamma, length, rule) / length


def round_program_costs(target: LM, draft: LM, prefix: tuple, gamma: int, rule: Rule = standard_rule) -> dict[str, Fraction]:
    """Exact expected request counts of the round *program* (labels draft, target, accept, resample, bonus).

    Slower than the recursion (it replays every branch), for small cases and cross-checks.
    """
    return exact(speculative_round, target, draft, tuple(prefix), gamma, rule).expected_costs


def position_acceptance_rate(target: LM, draft: LM, context: tuple) -> Fraction:
    """alpha(context) = sum_x min(p(x | context), q(x | context)) at one position."""
    return acceptance_rate(target(tuple(context)), draft(tuple(context)))
