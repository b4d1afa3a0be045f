"""Bugs in the accept/resample rule: the round is untouched, one ``rule(p, q, x)`` is swapped.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)). The correct rule accepts x with min(1, p(x)/q(x)) and resamples
from norm(max(0, p - q)) (``specmath.speculative.step.standard_rule``).

Each entry's instance is the smallest that shows it: two tokens {A, B}, gamma = 1, one generated
token (a single position with a rejection is all these bugs need).

Each entry's source is a dated claim record (``specmath.bugzoo.claims``): transformers' fixed softmax
residual and its open ``r_i <= p/q`` test, vLLM Ascend's fixed u = 0, vLLM V0's documented clamp.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import partial

import numpy as np

from specmath.bugzoo.claims import CLAIMS
from specmath.bugzoo.zoo import Bug, Instance, pair_instance
from specmath.laws import Law
from specmath.speculative.reference_round import numpy_round
from specmath.speculative.round import speculative_round

__all__ = ["RULE_BUGS", "softmax_residual_rule", "float32_uniform_le_rule", "always_accept_rule", "clamped_residual_rule"]

#: torch.rand(dtype=float32) returns k / 2^24, k = 0..2^24 - 1
FLOAT32_UNIFORM_STEP = Fraction(1, 2**24)
#: the clamp floor, taken as torch.finfo(torch.float32).tiny = 2^-126 (the smallest positive normal float32)
FLOAT32_TINY = Fraction(1, 2**126)


def softmax_residual_rule(p: Law, q: Law, x) -> tuple[Fraction, Law | None]:
    """Accept with min(1, p/q); resample from softmax(max(0, p - q)) instead of max(0, p - q) / sum.

    exp() is evaluated in float and converted exactly (Fraction(float)); every token gets mass
    e^r / sum e^r >= 1 / (V e), including tokens with p(x) = 0.
    """
    accept = min(Fraction(1), p[x] / q[x])
    if accept == 1:
        return accept, None
    weights = {y: Fraction(math.exp(float(max(Fraction(0), p[y] - q[y])))) for y in p}
    return accept, Law.from_weights(weights, name="softmax residual")


def float32_uniform_le_rule(p: Law, q: Law, x) -> tuple[Fraction, Law | None]:
    """Accept iff u <= p/q with u = k / 2^24 (float32 torch.rand): P = min(1, (floor(r 2^24) + 1) / 2^24)."""
    r = p[x] / q[x]
    # the grid points k / 2^24 <= r number floor(r 2^24) + 1; u = 0 accepts even r = 0
    accept = min(Fraction(1), (math.floor(r / FLOAT32_UNIFORM_STEP) + 1) * FLOAT32_UNIFORM_STEP)
    residual = Law.from_weights({y: max(Fraction(0), p[y] - q[y]) for y in p}) if accept < 1 and p != q else None
    return accept, residual


def always_accept_rule(p: Law, q: Law, x) -> tuple[Fraction, Law | None]:
    """u fixed at 0 in a log-space test (log 0 = -inf <= log p - log q): every draft token is accepted."""
    return Fraction(1), None


def clamped_residual_rule(p: Law, q: Law, x) -> tuple[Fraction, Law | None]:
    """Resample from clamp(p - q, min=tiny) / sum: the guard against 0/0 gives every token >= tiny."""
    accept = min(Fraction(1), p[x] / q[x])
    if accept == 1:
        return accept, None
    weights = {y: max(p[y] - q[y], FLOAT32_TINY) for y in p}
    return accept, Law.from_weights(weights, name="clamped residual")


def _rule_round(rule):
    def buggy_round(inst: Instance, context: tuple):
        emitted = yield from speculative_round(inst.wanted_target, inst.drawn_draft, context, inst.gamma, rule)
        return emitted

    buggy_round.__name__ = f"round_with_{rule.__name__}"
    return buggy_round


HALF_HALF = Law({"A": Fraction(1, 2), "B": Fraction(1, 2)})
CERTAIN_A = Law({"A": 1, "B": 0})


def _half_half_vs_certain_a() -> Instance:
    return pair_instance(HALF_HALF, CERTAIN_A)


def _certain_a_vs_half_half() -> Instance:
    return pair_instance(CERTAIN_A, HALF_HALF)


def _three_quarters() -> Instance:
    return pair_instance(HALF_HALF, Law({"A": Fraction(3, 4), "B": Fraction(1, 4)}))


def _softmax_residual(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    e = np.exp(np.maximum(p - q, 0.0))
    return e / e.sum()


def _float32_uniforms(gamma: int, rng: np.random.Generator) -> np.ndarray:
    return rng.integers(0, 2**24, size=gamma) / 2**24


def _clamped_residual(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    f = np.maximum(p - q, float(FLOAT32_TINY))
    return f / f.sum()


#: this module's entries of the bug zoo (joined into ``specmath.bugzoo.BUGS``)
RULE_BUGS: tuple[Bug, ...] = (
    Bug(
        name="residual-softmax",
        explanation="the residual is softmax(max(0, p - q)) instead of max(0, p - q) / sum, so tokens the target under-weights (even p = 0) are resampled",
        claim=CLAIMS["transformers-residual-softmax"],
        make_instance=_half_half_vs_certain_a,
        lossy_round=_rule_round(softmax_residual_rule),
        sample_round=partial(numpy_round, residual=_softmax_residual),
    ),
    Bug(
        name="accept-on-u-equal-zero",
        explanation="accepting when u <= p/q with a float32 uniform that can be exactly 0 accepts a token of target probability 0 with probability 2^-24 per proposal",
        claim=CLAIMS["transformers-accept-at-u-zero"],
        make_instance=_certain_a_vs_half_half,
        lossy_round=_rule_round(float32_uniform_le_rule),
        sample_round=partial(numpy_round, uniforms=_float32_uniforms, accept=lambda u, p, q: u * q <= p),
    ),
    Bug(
        name="uniform-fixed-at-zero",
        explanation="a backend without a random generator fixed u = 0, so the log-space test log u <= log p - log q accepts every draft: the output is the draft law",
        claim=CLAIMS["vllm-ascend-uniform-fixed-at-zero"],
        make_instance=_three_quarters,
        lossy_round=_rule_round(always_accept_rule),
        sample_round=partial(numpy_round, accept=lambda u, p, q: True),
    ),
    Bug(
        name="residual-clamped-at-tiny",
        explanation="the residual clamp(p - q, min=tiny) / sum, a guard against 0/0 when p == q up to rounding, gives every token at least tiny = 2^-126 of mass, even where p = 0",
        claim=CLAIMS["vllm-v0-residual-clamp"],
        make_instance=_half_half_vs_certain_a,
        lossy_round=_rule_round(clamped_residual_rule),
        sample_round=partial(numpy_round, residual=_clamped_residual),
    ),
)
