"""Many rounds: the law of the first ``length`` tokens of speculative generation vs plain sampling.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

Speculative generation repeats rounds (``specmath.speculative.round``), each appending 1..gamma+1
tokens to the context, until ``length`` tokens exist; the last round may overshoot and is truncated
(an engine stops at max_new_tokens the same way). Plain autoregressive sampling from the target has

    P(x_1..x_n | prefix) = prod_i p(x_i | prefix x_1..x_{i-1}).

Losslessness of speculative decoding is the equality ``generate_law(...) == autoregressive_law(...)``
for every target, draft, prefix, gamma and length; the tests prove it on hand-written and random
toy LMs. A round alone is lossless in the same sense: its emitted tuple, continued by plain target
sampling to gamma+1 tokens, has the autoregressive law (``completed_round_law``).

Both laws are computed by exact recursion; the sampling programs ``speculative_generation`` and
``autoregressive_generation`` are the reference meaning (``exact(program, ...).law`` equals them).

References: Leviathan et al., ICML 2023, Appendix A.1 (correctness); Chen et al., 2023, Theorem 1.
"""

from __future__ import annotations

from collections.abc import Hashable
from fractions import Fraction

from specmath.laws import Law, LawError
from specmath.program import draw
from specmath.speculative.round import LM, check_round_arguments, round_law, speculative_round
from specmath.speculative.step import Rule, standard_rule

__all__ = [
    "autoregressive_law",
    "generate_law",
    "completed_round_law",
    "speculative_generation",
    "autoregressive_generation",
]


def _check_length(length: object) -> int:
    if isinstance(length, bool) or not isinstance(length, int) or length < 1:
        raise LawError(f"length (tokens to generate) must be an integer >= 1, got {length!r}")
    return length


def _autoregressive_weights(target: LM, prefix: tuple, length: int) -> dict[tuple, Fraction]:
    # P(x_1..x_n) = p(x_1 | prefix) P(x_2..x_n | prefix x_1), expanded depth-first
    if length == 0:
        return {(): Fraction(1)}
    out: dict[tuple, Fraction] = {}
    for x, px in target(prefix).items():
        if px:
            for tail, w in _autoregressive_weights(target, prefix + (x,), length - 1).items():
                out[(x,) + tail] = px * w
    return out


def autoregressive_law(target: LM, prefix: tuple, length: int) -> Law:
    """Law of ``length`` tokens sampled one by one from the target: prod_i p(x_i | prefix x_<i)."""
    prefix = check_round_arguments(prefix, 0)
    return Law(_autoregressive_weights(target, prefix, _check_length(length)), name="autoregressive law")


def generate_law(target: LM, draft: LM, prefix: tuple, gamma: int, length: int, rule: Rule | None = None) -> Law:
    """Law of the first ``length`` tokens produced by repeated speculative rounds (last round truncated).

    G(prefix, n) = sum_e R_prefix(e) * [ e[:n]               if |e| >= n
                                         e + G(prefix e, n - |e|)  otherwise ],
    with R the round law (``round_law``). Equals ``autoregressive_law(target, prefix, length)`` for
    the standard rule.
    """
    prefix = check_round_arguments(prefix, gamma)
    _check_length(length)
    memo: dict[tuple, dict[tuple, Fraction]] = {}
    rounds: dict[tuple, Law] = {}  # one round law per context, shared by every remaining length

    def law_from(context: tuple, remaining: int) -> dict[tuple, Fraction]:
        key = (context, remaining)
        if key in memo:
            return memo[key]
        out: dict[tuple, Fraction] = {}
        if context not in rounds:
            rounds[context] = round_law(target, draft, context, gamma, rule)
        for emitted, w in rounds[context].items():
            if not w:
                continue
            if len(emitted) >= remaining:
                # the round overshoots: keep only the tokens asked for
                head = emitted[:remaining]
                out[head] = out.get(head, Fraction(0)) + w
                continue
            for tail, v in law_from(context + emitted, remaining - len(emitted)).items():
                seq = emitted + tail
                out[seq] = out.get(seq, Fraction(0)) + w * v
        memo[key] = out
        return out

    return Law(law_from(prefix, length), name="speculative generation law")


def completed_round_law(target: LM, draft: LM, prefix: tuple, gamma: int, rule: Rule | None = None) -> Law:
    """Law of one round's emitted tuple e, continued by plain target sampling to gamma + 1 tokens.

    C(s) = sum_{e prefix of s} R(e) * prod_{i > |e|} p(s_i | prefix s_<i). The round is lossless
    iff C == autoregressive_law(target, prefix, gamma + 1): what it emits is a prefix of a p-sample.
    """
    prefix = check_round_arguments(prefix, gamma)
    out: dict[Hashable, Fraction] = {}
    for emitted, w in round_law(target, draft, prefix, gamma, rule).items():
        if not w:
            continue
        rest = gamma + 1 - len(emitted)
        tails = _autoregressive_weights(target, prefix + emitted, rest)
        for tail, v in tails.items():
            seq = emitted + tail
            out[seq] = out.get(seq, Fraction(0)) + w * v
    return Law(out, name="completed round law")


def speculative_generation(target: LM, draft: LM, prefix: tuple, gamma: int, length: int, rule: Rule = standard_rule):
    """Sampling program: repeat ``speculative_round`` until ``length`` tokens exist; return the first ``length``.

    Each round emits at least one token, so at most ``length`` rounds run (no unbounded loop).
    """
    prefix = check_round_arguments(prefix, gamma)
    _check_length(length)
    generated: tuple = ()
    while len(generated) < length:
        emitted = yield from speculative_round(target, draft, prefix + generated, gamma, rule)
        generated += emitted
    return generated[:length]


def autoregressive_generation(target: LM, prefix: tuple, length: int):
    """Sampling program: ``length`` plain decoding steps, one target pass ("target") per token."""
    prefix = check_round_arguments(prefix, 0)
    _check_length(length)
    generated: tuple = ()
    for _ in range(length):
        x = yield draw(target(prefix + generated), label="target")
        generated += (x,)
    return generated
