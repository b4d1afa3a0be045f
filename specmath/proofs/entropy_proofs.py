"""Internal: ``specmath verify`` entries for the entropy-limit samplers: rand7-recycling,
rand7-stream, knuth-yao, peres, a-res. Each compares an exact law with its target, Fraction ==.

Imported by one line at the bottom of ``specmath.proofs.classic_proofs``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import product

from specmath.classic.rand7 import rand7_article, rand7_basic, uniform_target
from specmath.entropy import extractors, knuth_yao, rand_recycling, recycling_stream, weighted_reservoir
from specmath.entropy.examples import A_RES_K, A_RES_WEIGHTS, RESIDUAL_P, RESIDUAL_Q
from specmath.exact import exact
from specmath.laws import Law, uniform
from specmath.proofs.verification import Verification, verification_from
from specmath.speculative.step import residual_law
from specmath.speculative.two_token import DRAFT, TARGET

__all__ = ["PROOFS"]



def _rand7_recycling() -> Verification:
    result = exact(rand_recycling.rand7_recycling)
    return verification_from(
        "rand7-recycling",
        "rand5 -> rand7 carrying the leftover until an output is possible (unbounded recycling)",
        result,
        uniform_target(7),
        "rand5",
        **{
            "Knuth-Yao least E[calls] for one output at a time": rand_recycling.knuth_yao_bound(5, 7),
            "article's three levels + fallback": exact(rand7_article).expected_cost("rand5"),
            "basic rejection": exact(rand7_basic).expected_cost("rand5"),
            "entropy limit log_5 7 (float)": math.log(7, 5),
        },
    )


def _rand7_stream() -> Verification:
    bound = 10
    law, calls = recycling_stream.stream_joint_law(5, 7, bound, 3)
    return Verification(
        "rand7-stream",
        f"first 3 outputs of the recycling stream (state kept across outputs, bound {bound}) are i.i.d. uniform",
        law,
        uniform(product(range(1, 8), repeat=3)),
        calls,
        "rand5 (for 3 outputs)",
        {
            "calls per output over the first 3": calls / 3,
            "exact long-run calls per output, bound 16": recycling_stream.long_run_calls_per_output(5, 7, 16),
            "entropy limit log_5 7 (float)": math.log(7, 5),
        },
    )


def _knuth_yao() -> Verification:
    target = residual_law(RESIDUAL_P, RESIDUAL_Q)
    result = exact(knuth_yao.knuth_yao, target, 5)
    two_token = exact(knuth_yao.knuth_yao, residual_law(TARGET, DRAFT), 5)
    return verification_from(
        "knuth-yao",
        "Knuth-Yao DDG walk from rand5 sampling a speculative residual norm(max(0, p - q))",
        result,
        target,
        "rand5",
        **{
            "optimal series sum_k sum_i {5^k p_i} / 5^k": knuth_yao.optimal_expected_draws(target, 5),
            "entropy H_5 of the residual (float)": knuth_yao.entropy(target, 5),
            "two-token residual {A: 1, B: 0} from rand5": dict(two_token.law),
            "two-token residual: rand5 calls": two_token.expected_cost("rand5"),
        },
    )


def _peres() -> Verification:
    p, n = Fraction(3, 10), 8
    result = exact(extractors.block_extractor, p, n, "peres")
    return verification_from(
        "peres",
        f"Peres' iterated extractor on n = {n} flips of a p = {p} coin: bits fair and independent given their number",
        result,
        extractors.fair_given_length_target(result.law),
        None,
        **{
            "bits per flip (n = 8, exact)": extractors.block_rate(result.law, n),
            "von Neumann bits per flip, p q": extractors.von_neumann_rate(p),
            "Elias bits per flip (n = 8, exact)": extractors.elias_rate(p, n),
            "H(p) bits per flip (float)": knuth_yao.entropy(Law({1: p, 0: 1 - p}), 2),
        },
    )


def _a_res() -> Verification:
    w, k = A_RES_WEIGHTS, A_RES_K
    law = weighted_reservoir.a_res_law(w, k)
    target = exact(weighted_reservoir.successive_sampling, tuple(w.items()), k).law.map(lambda s: tuple(sorted(s)))
    return Verification(
        "a-res",
        f"A-Res keys u^(1/w), weights {w}, k = {k}: key-order integrals == successive sampling",
        law,
        target,
        extras={
            "P(item kept)": weighted_reservoir.inclusion_probabilities(law, sorted(w)),
            "k w / W (not the inclusion law)": weighted_reservoir.naive_inclusion(w, k),
        },
    )


#: name -> zero-argument function returning the Verification (``specmath verify NAME``)
PROOFS = {
    "rand7-recycling": _rand7_recycling,
    "rand7-stream": _rand7_stream,
    "knuth-yao": _knuth_yao,
    "peres": _peres,
    "a-res": _a_res,
}
