"""Laws of repeated rounds, written once: autoregressive, generation, completion, accepted length.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

A *round variant* is a sampling program ``round(target, draft, prefix, gamma)`` that returns the
tuple of tokens it emits (1..gamma+1 of them): token-wise accept/reject
(``specmath.speculative.round``), block verification, multi-draft trees, sample-match, and every
entry of the bug zoo. A variant supplies only its round program (or, for speed, a direct
``context -> round law`` function); every law of repeated rounds is computed here:

* autoregressive: A(c, n)(x_1..x_n) = prod_i p(x_i | c x_<i), the law of plain sampling from p;
* generation: G(c, n) = sum_e R_c(e) [ e[:n] if |e| >= n else e + G(c e, n - |e|) ],
  the law of the first n tokens of repeated rounds (the last one truncated, as an engine stops at
  max_new_tokens); lossless iff G == A for every prefix and length;
* completion: C(s) = sum_{e prefix of s} R(e) prod_{i > |e|} p(s_i | prefix s_<i); lossless iff C
  equals A(prefix, gamma + 1): what a round emits is a prefix of a p-sample.

Rounds of different variants emit different *lengths*, so their round laws are not comparable
with each other; G and C are.

References: Leviathan et al., "Fast Inference from Transformers via Speculative Decoding", ICML 2023,
Appendix A.1 (correctness of one round); Chen et al., 2023, Theorem 1; Sun et al., "Block
verification accelerates speculative decoding", ICLR 2025 (arXiv 2403.10444), which states
losslessness for variable-length rounds the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from specmath.exact import exact
from specmath.laws import Law, LawError
from specmath.speculative.round import LM, check_round_arguments, round_law
from specmath.validation import check_integer

__all__ = [
    "RoundLaw",
    "check_length",
    "autoregressive_law",
    "round_law_of",
    "variant_round_law",
    "variant_generation_law",
    "RoundVariant",
    "generation_law_of",
    "completion_law_of",
    "expected_emitted",
    "expected_accepted",
]

#: context -> law of the tuple one round emits at that context
RoundLaw = Callable[[tuple], Law]


def check_length(length: object) -> int:
    """The number of tokens to generate, as an int >= 1 (InvalidArgument otherwise)."""
    return check_integer(length, "length (tokens to generate)", min_value=1)


def _autoregressive_weights(target: LM, context: tuple, n: int) -> dict[tuple, Fraction]:
    # A(c, n)(x_1..x_n) = p(x_1 | c) A(c x_1, n - 1)(x_2..x_n), expanded depth-first
    if n == 0:
        return {(): Fraction(1)}
    out: dict[tuple, Fraction] = {}
    for x, px in target(context).items():
        if px:
            for tail, w in _autoregressive_weights(target, context + (x,), n - 1).items():
                out[(x,) + tail] = px * w
    return out


def autoregressive_law(target: LM, prefix: tuple, length: int) -> Law:
    """Law of ``length`` tokens sampled one by one from the target: prod_i p(x_i | prefix x_<i)."""
    prefix = check_round_arguments(prefix, 0)
    return Law(_autoregressive_weights(target, prefix, check_length(length)), name="autoregressive law")


def round_law_of(round_program: Callable, *args) -> Law:
    """The exact law of the tuple a round program emits: ``exact(round_program, *args).law``."""
    return exact(round_program, *args).law


def variant_round_law(round_program: Callable, target: LM, draft, prefix: tuple, gamma: int) -> Law:
    """Exact law of one round of ``round_program(target, draft, prefix, gamma)`` (``draft``: one LM or a tuple)."""
    return round_law_of(round_program, target, draft, check_round_arguments(prefix, gamma), gamma)


def variant_generation_law(round_program: Callable, target: LM, draft, prefix: tuple, gamma: int, length: int) -> Law:
    """Law of the first ``length`` tokens of repeated ``round_program(target, draft, context, gamma)`` rounds."""
    prefix = check_round_arguments(prefix, gamma)
    return generation_law_of(lambda c: round_law_of(round_program, target, draft, c, gamma), prefix, length)


@dataclass(frozen=True)
class RoundVariant:
    """A variant given by nothing but its round program ``round_program(target, draft, prefix, gamma)``
    (and the ``name`` it is shown under); its laws are the shared ones of this module."""

    round_program: Callable
    name: str = "variant"

    def round_law(self, target: LM, draft, prefix: tuple, gamma: int) -> Law:
        """Exact law of the tuple one round emits (lengths 1..gamma+1)."""
        return variant_round_law(self.round_program, target, draft, prefix, gamma)

    def generation_law(self, target: LM, draft, prefix: tuple, gamma: int, length: int) -> Law:
        """G: the law of the first ``length`` tokens of repeated rounds (lossless iff it equals autoregressive_law)."""
        return variant_generation_law(self.round_program, target, draft, prefix, gamma, length)

    def vs_tokenwise(self, target: LM, draft, prefix: tuple, gamma: int) -> dict[str, Fraction]:
        """E[accepted draft tokens per round] = E[|e|] - 1 for token-wise verification and for this
        variant, on the same pair: {"token-wise": ..., name: ...}."""
        return {
            "token-wise": expected_accepted(round_law(target, draft, prefix, gamma)),
            self.name: expected_accepted(self.round_law(target, draft, prefix, gamma)),
        }


def generation_law_of(round_law_at: RoundLaw, prefix: tuple, length: int) -> Law:
    """Law of the first ``length`` tokens of repeated rounds, given ``round_law_at(context)``.

    G(c, n) = sum_e R_c(e) [ e[:n] if |e| >= n else e + G(c e, n - |e|) ] (the last round is truncated).
    Each context's round law is computed once and shared by every remaining length.
    """
    prefix = check_round_arguments(prefix, 0)
    check_length(length)
    memo: dict[tuple, dict[tuple, Fraction]] = {}
    rounds: dict[tuple, Law] = {}

    def law_from(context: tuple, remaining: int) -> dict[tuple, Fraction]:
        key = (context, remaining)
        if key in memo:
            return memo[key]
        if context not in rounds:
            rounds[context] = round_law_at(context)
        out: dict[tuple, Fraction] = {}
        for emitted, w in rounds[context].items():
            if not w:
                continue
            if not isinstance(emitted, tuple) or not emitted:
                raise LawError(f"a round must emit a non-empty tuple of tokens, got {emitted!r}")
            if len(emitted) >= remaining:
                # the round overshoots: keep only the tokens asked for
                head = emitted[:remaining]
                out[head] = out.get(head, Fraction(0)) + w
                continue
            for tail, v in law_from(context + emitted, remaining - len(emitted)).items():
                out[emitted + tail] = out.get(emitted + tail, Fraction(0)) + w * v
        memo[key] = out
        return out

    return Law(law_from(prefix, length), name="generation law")


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
        for tail, v in _autoregressive_weights(target, prefix + emitted, total - len(emitted)).items():
            out[emitted + tail] = out.get(emitted + tail, Fraction(0)) + w * v
    return Law(out, name="completed round law")


def expected_emitted(round_law: Law) -> Fraction:
    """E[tokens emitted per round] = sum_e R(e) |e| (accepted drafts plus the one resampled/bonus token)."""
    return round_law.expectation(len)


def expected_accepted(round_law: Law) -> Fraction:
    """E[accepted draft tokens per round] = E[|e|] - 1 (every round ends with one non-draft token)."""
    return expected_emitted(round_law) - 1
