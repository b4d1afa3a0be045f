"""The built-in verifications behind ``specmath verify NAME`` (registered into VERIFIERS).

Each one runs a sampler through the exact interpreter and pairs the result with its target law.
Other modules register their own entries with ``@register(name)``; the imports at the bottom of
this file pull them in.
"""

from __future__ import annotations

from fractions import Fraction

from . import fair_coin, rand7, rejection, reservoir, two_token
from .exact import exact
from .laws import Law
from .speculative.step import acceptance_rate, speculative_step
from .verify import VERIFIERS, Verification, verification_from

__all__ = ["register", "SPECULATIVE_EXAMPLE"]


def register(name: str):
    """Decorator: add a zero-argument Verification factory to VERIFIERS under ``name``."""

    def deco(fn):
        VERIFIERS[name] = fn
        return fn

    return deco


@register("two-token")
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


#: a five-token example with zeros on both sides, used by ``specmath verify speculative-step``
SPECULATIVE_EXAMPLE = (
    Law({"a": Fraction(1, 2), "b": Fraction(1, 4), "c": Fraction(1, 8), "d": Fraction(1, 8), "e": 0}, name="p"),
    Law({"a": Fraction(1, 10), "b": Fraction(1, 2), "c": 0, "d": Fraction(1, 5), "e": Fraction(1, 5)}, name="q"),
)


@register("speculative-step")
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
    from .exact import exact_paths

    return sum((path.probability for path in exact_paths(speculative_step, p, q) if dict(path.steps)["accept"]), Fraction(0))


@register("rand7-basic")
def _rand7_basic() -> Verification:
    result = exact(rand7.rand7_basic)
    return verification_from(
        "rand7-basic", "rand5 -> rand7 by rejection (keep 1..21 of 1..25)", result, rand7.uniform_target(7), "rand5"
    )


@register("rand7-article")
def _rand7_article() -> Verification:
    result = exact(rand7.rand7_article)
    levels = {k: result.expected_cost(k) for k in ("level 1", "level 2", "level 3", "fallback")}
    return verification_from(
        "rand7-article",
        "rand5 -> rand7 with the article's three recycling levels, then rand7_basic",
        result,
        rand7.uniform_target(7),
        "rand5",
        **{"P(output at level)": levels},
    )


@register("von-neumann")
def _von_neumann() -> Verification:
    p = Fraction(3, 10)
    result = exact(fair_coin.von_neumann, p)
    return verification_from(
        "von-neumann",
        f"fair coin from a p-coin, p = {p}: HT -> H, TH -> T, else flip again (E[flips] = 1/(p(1-p)))",
        result,
        fair_coin.fair_coin_law(),
        "flip",
        **{"closed form 1/(p(1-p))": fair_coin.expected_flips(p)},
    )


@register("reservoir")
def _reservoir() -> Verification:
    n, k = 6, 3
    result = exact(reservoir.algorithm_r, n, k)
    return verification_from(
        "reservoir",
        f"Algorithm R keeps k = {k} of n = {n} items: every k-subset has probability 1/C(n, k)",
        result,
        reservoir.subset_target(n, k),
        None,
        **{"P(item kept), each k/n": reservoir.inclusion_probabilities(result.law, n)},
    )


@register("rejection")
def _rejection() -> Verification:
    p, q = SPECULATIVE_EXAMPLE[0], Law({"a": Fraction(1, 5), "b": Fraction(1, 5), "c": Fraction(1, 5), "d": Fraction(1, 5), "e": Fraction(1, 5)}, name="q")
    M = rejection.smallest_envelope(p, q)
    result = exact(rejection.rejection_sampler, p, q, M)
    return verification_from(
        "rejection",
        f"rejection sampling of p from uniform q with envelope M = {M}: accept with p/(M q)",
        result,
        p,
        "proposal",
        **{"acceptance per attempt (exact)": 1 - result.attempt_restart_probability, "1/M": 1 / M},
    )


# Further verifications register themselves (with @register) when their modules are imported.
from . import (  # noqa: F401
    verifications_beyond,
    verifications_entropy,
    verifications_rounds,
)
