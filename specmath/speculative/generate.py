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

Both laws are the shared ones of ``specmath.speculative.variants`` (generation G, completion C,
autoregressive A) applied to the token-wise round law ``round_law``, the fast second path; the sampling
programs ``speculative_generation`` and ``autoregressive_generation`` are the reference meaning
(``exact(program, ...).law`` equals them), and ``specmath verify`` applies G and C to the interpreted
round program itself (``specmath.proofs.speculative_proofs``).

References: Leviathan et al., ICML 2023, Appendix A.1 (correctness); Chen et al., 2023, Theorem 1.
"""

from __future__ import annotations

from specmath.laws import Law
from specmath.program import draw
from specmath.speculative.round import LM, check_round_arguments, round_law, speculative_round
from specmath.speculative.step import Rule, standard_rule
from specmath.speculative.variants import autoregressive_law, check_length, completion_law_of, generation_law_of

__all__ = [
    "autoregressive_law",
    "generate_law",
    "completed_round_law",
    "speculative_generation",
    "autoregressive_generation",
]


def generate_law(target: LM, draft: LM, prefix: tuple, gamma: int, length: int, rule: Rule | None = None) -> Law:
    """Law of the first ``length`` tokens produced by repeated speculative rounds (last round truncated).

    ::

        G(prefix, n) = sum_e R_prefix(e) * [ e[:n]               if |e| >= n
                                             e + G(prefix e, n - |e|)  otherwise ],

    with R the round law (``round_law``). Equals ``autoregressive_law(target, prefix, length)`` for
    the standard rule.
    """
    prefix = check_round_arguments(prefix, gamma)
    return generation_law_of(lambda c: round_law(target, draft, c, gamma, rule), prefix, length)


def completed_round_law(target: LM, draft: LM, prefix: tuple, gamma: int, rule: Rule | None = None) -> Law:
    """Law of one round's emitted tuple e, continued by plain target sampling to gamma + 1 tokens.

    C(s) = sum_{e prefix of s} R(e) * prod_{i > |e|} p(s_i | prefix s_<i). The round is lossless
    iff C == autoregressive_law(target, prefix, gamma + 1): what it emits is a prefix of a p-sample.
    """
    prefix = check_round_arguments(prefix, gamma)
    return completion_law_of(round_law(target, draft, prefix, gamma, rule), target, prefix, gamma + 1)


def speculative_generation(target: LM, draft: LM, prefix: tuple, gamma: int, length: int, rule: Rule = standard_rule):
    """Sampling program: repeat ``speculative_round`` until ``length`` tokens exist; return the first ``length``.

    Each round emits at least one token, so at most ``length`` rounds run (no unbounded loop).
    """
    prefix = check_round_arguments(prefix, gamma)
    check_length(length)
    generated: tuple = ()
    while len(generated) < length:
        emitted = yield from speculative_round(target, draft, prefix + generated, gamma, rule)
        generated += emitted
    return generated[:length]


def autoregressive_generation(target: LM, prefix: tuple, length: int):
    """Sampling program: ``length`` plain decoding steps, one target pass ("target") per token."""
    prefix = check_round_arguments(prefix, 0)
    check_length(length)
    generated: tuple = ()
    for _ in range(length):
        x = yield draw(target(prefix + generated), label="target")
        generated += (x,)
    return generated
