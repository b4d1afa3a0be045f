"""Internal: Proofs of the article's classic samplers: rand5 -> rand7, von Neumann's coin, reservoir, rejection.

Each function runs a sampler through the exact interpreter and pairs its law with the target.
"""

from __future__ import annotations

from fractions import Fraction

from specmath.classic import fair_coin, rand7, rejection, reservoir
from specmath.classic.examples import REJECTION_PROPOSAL, REJECTION_TARGET
from specmath.exact import exact
from specmath.proofs.verification import Verification, verification_from

__all__ = ["PROOFS"]


def _rand7_basic() -> Verification:
    result = exact(rand7.rand7_basic)
    return verification_from(
        "rand7-basic", "rand5 -> rand7 by rejection (keep 1..21 of 1..25)", result, rand7.uniform_target(7), "rand5"
    )


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


def _rejection() -> Verification:
    p, q = REJECTION_TARGET, REJECTION_PROPOSAL
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


#: name -> zero-argument function returning the Verification (``specmath verify NAME``)
PROOFS = {
    "rand7-basic": _rand7_basic,
    "rand7-article": _rand7_article,
    "von-neumann": _von_neumann,
    "reservoir": _reservoir,
    "rejection": _rejection,
}
