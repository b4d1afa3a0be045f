"""Internal: Verifications of multi-token rounds: ``specmath verify speculative-round`` and ``speculative-generate``.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

Both use the article's word world (``specmath.speculative.examples``: prefix "I love", a bigram
target and an over-confident bigram draft). A round is lossless when its emitted tuple, continued by
plain target sampling to gamma + 1 tokens, has the autoregressive law of the target; generation is
lossless when the first ``length`` tokens of repeated rounds have that law.

Both interpret the round program the course shows, ``speculative_round`` with the step's
``standard_rule``, with the exact interpreter: R = exact(speculative_round, ...).law, then the
completion C and the generation law G of ``specmath.speculative.variants`` over it. The faster
recursion ``round_law`` is not used here; the tests prove it equal to the interpreted program for
every rule of the battery (lossy ones included), so it may serve the property tests and notebooks.

References: Leviathan et al., ICML 2023, Algorithm 1 and Appendix A.1.
"""

from __future__ import annotations

from fractions import Fraction

from specmath.exact import exact, exact_paths
from specmath.laws import Law
from specmath.proofs.verification import Verification, verification_from
from specmath.speculative import (
    acceptance_rate,
    autoregressive_law,
    target_passes_per_token,
    two_token,
)
from specmath.speculative.examples import ROUND_DRAFT, ROUND_PREFIX, ROUND_TARGET, SPECULATIVE_EXAMPLE
from specmath.speculative.round import speculative_round
from specmath.speculative.step import speculative_step, standard_rule
from specmath.speculative.variants import completion_law_of, expected_emitted, generation_law_of, round_law_of

__all__ = ["PROOFS"]

def _two_token() -> Verification:
    s = two_token.summary()
    return Verification(
        "two-token",
        "one speculative step, p = {A: 7/10, B: 3/10}, q = {A: 2/5, B: 3/5}",
        s["output"],
        two_token.TARGET,
        extras={
            "acceptance min(1, p/q)": s["acceptance"],
            "alpha = sum min(p, q)": s["alpha"],
            "residual norm(max(0, p - q))": dict(s["residual"]),
            "paths": "; ".join(
                f"draft {r['draft']} {'accept' if r['accepted'] else 'reject -> ' + str(r['resampled'])}: {r['probability']}"
                for r in s["paths"]
            ),
        },
    )




def _speculative_step() -> Verification:
    p, q = SPECULATIVE_EXAMPLE
    result = exact(speculative_step, p, q)
    return verification_from(
        "speculative-step",
        "one speculative step over 5 tokens, zeros on both sides (q(c) = 0 < p(c), p(e) = 0 < q(e))",
        result,
        p,
        None,
        **{"alpha = sum min(p, q)": acceptance_rate(p, q), "P(accept), summed over exact paths": _accept_probability(p, q)},
    )


def _accept_probability(p: Law, q: Law) -> Fraction:
    return sum((path.probability for path in exact_paths(speculative_step, p, q) if dict(path.steps)["accept"]), Fraction(0))


ROUND_GAMMA = 4
GENERATE_LENGTH = 6


def _interpreted_round(context: tuple, gamma: int) -> Law:
    """R_context: the exact law of the tuple ``speculative_round`` emits, by the exact interpreter."""
    return round_law_of(speculative_round, ROUND_TARGET, ROUND_DRAFT, context, gamma, standard_rule)


def _speculative_round() -> Verification:
    target, draft, prefix, gamma = ROUND_TARGET, ROUND_DRAFT, ROUND_PREFIX, ROUND_GAMMA
    emitted = _interpreted_round(prefix, gamma)
    return Verification(
        "speculative-round",
        f"one round, gamma = {gamma}, prefix {' '.join(prefix)!r}, bigram word world; emitted tokens "
        f"continued by plain target sampling to {gamma + 1} tokens vs {gamma + 1} target tokens",
        # C(s) = sum_{e prefix of s} R(e) prod_{i > |e|} p(s_i | prefix s_<i), R from the round program
        completion_law_of(emitted, target, prefix, gamma + 1),
        autoregressive_law(target, prefix, gamma + 1),
        extras={
            "alpha at the prefix": acceptance_rate(target(prefix), draft(prefix)),
            "E[tokens per round] (exact)": expected_emitted(emitted),
        },
    )


def _speculative_generate() -> Verification:
    target, draft, prefix, gamma, length = ROUND_TARGET, ROUND_DRAFT, ROUND_PREFIX, 3, GENERATE_LENGTH
    return Verification(
        "speculative-generate",
        f"repeated rounds with gamma = {gamma} until {length} tokens (last round truncated) vs {length} target tokens",
        # G(c, n) = sum_e R_c(e) [e[:n] if |e| >= n else e + G(c e, n - |e|)], each R_c from the round program
        generation_law_of(lambda context: _interpreted_round(context, gamma), prefix, length),
        autoregressive_law(target, prefix, length),
        extras={"E[target passes per token] (exact)": target_passes_per_token(target, draft, prefix, gamma, length)},
    )


#: name -> zero-argument function returning the Verification (``specmath verify NAME``)
PROOFS = {
    "two-token": _two_token,
    "speculative-step": _speculative_step,
    "speculative-round": _speculative_round,
    "speculative-generate": _speculative_generate,
}
