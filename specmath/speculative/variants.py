"""Laws of any round variant: one round, generation by repeated rounds, and accepted length.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

A *round variant* is a sampling program ``round(target, draft, prefix, gamma, ...)`` that returns
the tuple of tokens it emits (1..gamma+1 of them): token-wise verification
(``specmath.speculative.round``), block verification, multi-draft trees, sample-match, and every
entry of the bug zoo. Rounds of different variants emit different *lengths*, so their round laws
are not comparable with each other; what must agree is the law of the text they produce. Two exact
criteria, both computed here from a function ``context -> round law``:

* generation: G(prefix, n) = sum_e R_prefix(e) [ e[:n] if |e| >= n else e + G(prefix e, n - |e|) ],
  the law of the first n tokens of repeated rounds; lossless iff G == autoregressive law of p;
* completion: C(s) = sum_{e prefix of s} R(e) prod_{i > |e|} p(s_i | prefix s_<i); lossless iff C
  equals the autoregressive law of gamma + 1 tokens (what a round emits is a prefix of a p-sample).

References: Leviathan et al., "Fast Inference from Transformers via Speculative Decoding", ICML 2023
(correctness of one round); Sun et al., "Block verification accelerates speculative decoding",
ICLR 2025 (arXiv 2403.10444), which states losslessness for variable-length rounds the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from specmath.exact import exact
from specmath.laws import Law, LawError
from specmath.speculative.round import LM, check_round_arguments

__all__ = [
    "round_law_of",
    "generation_law_of",
    "completion_law_of",
    "expected_emitted",
    "expected_accepted",
]

RoundLaw = Callable[[tuple], Law]


def round_law_of(round_program: Callable, *args) -> Law:
    """The exact law of the tuple a round program emits: ``exact(round_program, *args).law``."""
    return exact(round_program, *args).law


def generation_law_of(round_law_at: RoundLaw, prefix: tuple, length: int) -> Law:
    """Law of the first ``length`` tokens of repeated rounds, given ``round_law_at(context)``.

    G(c, n) = sum_e R_c(e) [ e[:n] if |e| >= n else e + G(c e, n - |e|) ] (the last round is truncated).
    """
    prefix = check_round_arguments(prefix, 0)
    if isinstance(length, bool) or not isinstance(length, int) or length < 1:
        raise LawError(f"length (tokens to generate) must be an integer >= 1, got {length!r}")
    memo: dict[tuple, dict[tuple, Fraction]] = {}

    def law_from(context: tuple, remaining: int) -> dict[tuple, Fraction]:
        key = (context, remaining)
        if key in memo:
            return memo[key]
        out: dict[tuple, Fraction] = {}
        for emitted, w in round_law_at(context).items():
            if not w:
                continue
            if not isinstance(emitted, tuple) or not emitted:
                raise LawError(f"a round must emit a non-empty tuple of tokens, got {emitted!r}")
            if len(emitted) >= remaining:
                head = emitted[:remaining]
                out[head] = out.get(head, Fraction(0)) + w
                continue
            for tail, v in law_from(context + emitted, remaining - len(emitted)).items():
                out[emitted + tail] = out.get(emitted + tail, Fraction(0)) + w * v
        memo[key] = out
        return out

    return Law(law_from(prefix, length), name="generation law")


def _autoregressive(target: LM, context: tuple, n: int) -> dict[tuple, Fraction]:
    # P(x_1..x_n | c) = p(x_1 | c) P(x_2..x_n | c x_1)
    if n == 0:
        return {(): Fraction(1)}
    out: dict[tuple, Fraction] = {}
    for x, px in target(context).items():
        if px:
            for tail, w in _autoregressive(target, context + (x,), n - 1).items():
                out[(x,) + tail] = px * w
    return out


def completion_law_of(round_law: Law, target: LM, prefix: tuple, total: int) -> Law:
    """C(s) = sum_{e prefix of s} R(e) prod_{i > |e|} p(s_i | prefix s_<i), sequences of ``total`` tokens.

    ``total`` must be at least the longest emitted tuple (gamma + 1 for a round with gamma drafts).
    """
    prefix = check_round_arguments(prefix, 0)
    out: dict[tuple, Fraction] = {}
    for emitted, w in round_law.items():
        if not w:
            continue
        if len(emitted) > total:
            raise LawError(f"the round emitted {len(emitted)} tokens, more than total = {total}")
        for tail, v in _autoregressive(target, prefix + emitted, total - len(emitted)).items():
            out[emitted + tail] = out.get(emitted + tail, Fraction(0)) + w * v
    return Law(out, name="completed round law")


def expected_emitted(round_law: Law) -> Fraction:
    """E[tokens emitted per round] = sum_e R(e) |e| (accepted drafts plus the one resampled/bonus token)."""
    return round_law.expectation(len)


def expected_accepted(round_law: Law) -> Fraction:
    """E[accepted draft tokens per round] = E[|e|] - 1 (every round ends with one non-draft token)."""
    return expected_emitted(round_law) - 1
