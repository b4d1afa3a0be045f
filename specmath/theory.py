"""Closed forms for speculative decoding: tokens per round, the speedup model, the optimal gamma.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)) = P(a draft token is accepted), c = cost of one draft pass divided
by the cost of one target pass.

With a constant acceptance rate alpha (the same at every position), the number of tokens one round
emits is 1 + (number of accepted draft tokens, capped at gamma), so (Leviathan et al. 2023, Eq. 1)

    E[tokens per round] = sum_{k=0}^{gamma} alpha^k = (1 - alpha^(gamma+1)) / (1 - alpha),

and a round costs gamma draft passes plus one target pass, gamma*c + 1 target-pass units, so the
wall-time improvement over plain decoding (one target pass per token) is (their Theorem 3.8)

    speedup(alpha, gamma, c) = (1 - alpha^(gamma+1)) / ((1 - alpha) (gamma*c + 1)).

That model assumes verifying gamma + 1 tokens costs one target pass. On hardware where it does not
(a CPU GEMM with few rows is compute-bound), the measured ratio

    k(gamma) = time(target pass over gamma + 1 tokens) / time(target pass over 1 token)

replaces the 1, and acceptance that changes with the draft position i (alpha_i = P(position i is
accepted | positions 1..i-1 were)) replaces the geometric sum:

    E[tokens per round] = 1 + sum_{i=1}^{gamma} prod_{j<=i} alpha_j
    speedup = E[tokens per round] (1 + o_plain) / (gamma*c + k(gamma) + o_round)        (cost_model_speedup)

where o_plain and o_round are the time a plain step and a round spend outside the model passes
(warping logits, sampling, accept/reject, cache rollback, host transfers), in target-pass units; the
costs travel together as one ``RoundCosts``. With k = 1 and no overheads this is Theorem 3.8 again;
``best_gamma`` maximises it over the costs measured for each gamma (``specmath.lm.cost_measure``).

Exact arithmetic: ints, Fractions and strings give Fractions; floats give floats.

References: Leviathan, Kalman, Matias, "Fast Inference from Transformers via Speculative
Decoding", ICML 2023, Sections 3.1-3.4. The worked example is the seed article's (3 tokens per
round at 10 ms a token, against a 3 ms draft and a 12 ms verification).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from specmath.laws import LawError, to_fraction
from specmath.validation import check_integer

__all__ = [
    "expected_tokens_per_round",
    "speedup",
    "optimal_gamma",
    "speedup_from_timings",
    "article_speedup_example",
    "alpha_for_expected_tokens",
    "expected_tokens_by_position",
    "RoundCosts",
    "cost_model_speedup",
    "expected_rounds",
    "best_gamma",
]

Number = Fraction | float


def _number(value: object, what: str) -> Number:
    """Floats stay floats; everything else is converted to a Fraction exactly."""
    exact_value = to_fraction(value, what=what)  # rejects NaN, infinities and non-numbers
    return value if isinstance(value, float) else exact_value


def _alpha(alpha: object) -> Number:
    a = _number(alpha, "alpha")
    if not 0 <= a <= 1:
        raise LawError(f"alpha (acceptance rate) must lie in [0, 1], got {alpha!r}")
    return a


def _gamma(gamma: object) -> int:
    return check_integer(gamma, "gamma (draft tokens per round)", min_value=0)


def _cost_ratio(c: object, what: str = "c (draft/target cost ratio)") -> Number:
    value = _number(c, what)
    if value < 0:
        raise LawError(f"{what} must be >= 0, got {c!r}")
    return value


def expected_tokens_per_round(alpha: object, gamma: int) -> Number:
    """E[tokens per round] = (1 - alpha^(gamma+1)) / (1 - alpha) = sum_{k=0}^{gamma} alpha^k (gamma + 1 at alpha = 1)."""
    a, g = _alpha(alpha), _gamma(gamma)
    if a == 1:
        # the geometric sum has gamma + 1 terms equal to 1
        return a * (g + 1)
    # geometric series: the round reaches position k+1 with probability alpha^k
    return (1 - a ** (g + 1)) / (1 - a)


def speedup(alpha: object, gamma: int, c: object) -> Number:
    """Walltime improvement (1 - alpha^(gamma+1)) / ((1 - alpha)(gamma*c + 1)) over plain decoding."""
    tokens = expected_tokens_per_round(alpha, gamma)
    # one round costs gamma draft passes (c each) and one target pass
    return tokens / (_gamma(gamma) * _cost_ratio(c) + 1)


def optimal_gamma(alpha: object, c: object) -> int:
    """The gamma >= 0 maximising ``speedup(alpha, gamma, c)`` (the smallest one on ties).

    Search stops once the bound speedup(gamma') <= 1 / ((1 - alpha)(gamma' c + 1)) for every
    gamma' >= gamma falls to the best value found. Raises ValueError when no finite gamma is optimal
    (c = 0 with alpha > 0, or alpha = 1 with c < 1: the speedup then grows with gamma forever).
    """
    a, cost = _alpha(alpha), _cost_ratio(c)
    if a == 0:
        return 0  # nothing is ever accepted: speculating only adds draft cost
    if a == 1:
        if cost < 1:
            raise LawError(f"alpha = 1 and c = {c} < 1: the speedup (gamma+1)/(gamma c+1) grows with gamma, no optimum")
        return 0
    if cost == 0:
        raise LawError(f"c = 0 with alpha = {alpha}: free drafts make the speedup grow with gamma, no optimum")
    best_gamma, best = 0, speedup(a, 0, cost)
    gamma = 1
    # every later gamma' has speedup < 1 / ((1 - alpha)(gamma' c + 1)); stop when that bound is beaten
    while 1 / ((1 - a) * (gamma * cost + 1)) > best:
        value = speedup(a, gamma, cost)
        if value > best:
            best_gamma, best = gamma, value
        gamma += 1
    return best_gamma


def _acceptance(acceptance: object, gamma: int) -> list[Number]:
    """One alpha for every position, or the per-position alpha_1..alpha_gamma (a longer list is cut)."""
    if isinstance(acceptance, (list, tuple)):
        if len(acceptance) < gamma:
            raise LawError(f"need an acceptance rate for each of the gamma = {gamma} positions, got {len(acceptance)}")
        return [_alpha(a) for a in acceptance[:gamma]]
    return [_alpha(acceptance)] * gamma


def expected_tokens_by_position(acceptance: object, gamma: int) -> Number:
    """E[tokens per round] = 1 + sum_{i=1}^{gamma} prod_{j<=i} alpha_j (alpha_j per position, or one alpha).

    Position i is reached and accepted with probability alpha_1 ... alpha_i; each accepted draft adds
    one token to the one token (residual or bonus) every round emits. With one alpha it is the
    geometric sum ``expected_tokens_per_round``.
    """
    g = _gamma(gamma)
    alphas = _acceptance(acceptance, g)
    total, reach = _number(1, "1"), _number(1, "1")
    for a in alphas:
        reach = reach * a  # P(positions 1..i all accepted)
        total = total + reach
    return total


#: ``expected_rounds`` runs its recursion up to this many tokens and extends it linearly beyond
ROUNDS_RECURSION_LIMIT = 4096


def expected_rounds(acceptance: object, gamma: int, new_tokens: object) -> Number:
    """E[rounds until a run has emitted at least n tokens] (n = ``new_tokens``, rounded up), rounds i.i.d.

    A round accepts exactly j drafts with P(j) = alpha_1 ... alpha_j (1 - alpha_{j+1}) (j < gamma) or
    alpha_1 ... alpha_gamma (j = gamma), and emits j + 1 tokens. With R(m) = 0 for m <= 0,

        R(n) = 1 + sum_j P(j) R(n - j - 1),

    which exceeds n / E[tokens per round] by the last round's overshoot: that round's surplus tokens
    are drawn and paid for, then cut (about half a round: 4% of a 64-token run at 4.8 tokens a round).
    Past ``ROUNDS_RECURSION_LIMIT`` tokens R grows by 1 / E[tokens] per token: the overshoot has settled
    (rounds whose length is not always one value; a fixed length leaves an error under one round).
    """
    g = _gamma(gamma)
    alphas = _acceptance(acceptance, g)
    n = _number(new_tokens, "new tokens")
    if n <= 0:
        raise LawError(f"new tokens per prompt must be > 0, got {new_tokens!r}")
    whole = math.ceil(n)
    probs, reach = [], _number(1, "1")
    for a in alphas:
        probs.append(reach * (1 - a))  # exactly j accepted: the first j accepted, draft j + 1 rejected
        reach = reach * a
    probs.append(reach)  # all gamma accepted (+ the bonus token)
    limit = min(whole, ROUNDS_RECURSION_LIMIT)
    rounds = [_number(0, "0")] * (limit + 1)
    for m in range(1, limit + 1):
        rounds[m] = 1 + sum((p * rounds[max(m - j - 1, 0)] for j, p in enumerate(probs)), _number(0, "0"))
    return rounds[limit] + (whole - limit) / expected_tokens_by_position(alphas, g)


@dataclass(frozen=True)
class RoundCosts:
    """The costs of the speedup model, in units of t_1 = one cached target pass over 1 token.

    ``c``: the draft's cost per drafted position; ``k``: the verify pass over gamma + 1 tokens / t_1
    (1 = "verification is free"); ``o_round`` and ``o_plain``: time outside the model passes per round
    and per plain step; ``prefill`` P and ``draft_prefill`` P_d: prefilling one prompt into the target
    and into the draft's own cache (they matter only for a run of finitely many tokens). Leviathan et
    al.'s premise is ``RoundCosts(c)``: k = 1 and nothing else. Floats stay floats, anything else is
    converted to a Fraction exactly.
    """

    c: Number
    k: Number = 1
    o_round: Number = 0
    o_plain: Number = 0
    prefill: Number = 0
    draft_prefill: Number = 0

    def __post_init__(self) -> None:
        k = _number(self.k, "k (verify/1-token forward cost ratio)")
        if k <= 0:
            raise LawError(f"k (verify/1-token forward cost ratio) must be > 0, got {self.k!r}")
        object.__setattr__(self, "k", k)
        for name in ("c", "o_round", "o_plain", "prefill", "draft_prefill"):
            what = "c (draft/target cost ratio)" if name == "c" else name
            object.__setattr__(self, name, _cost_ratio(getattr(self, name), what))


def cost_model_speedup(acceptance: object, gamma: int, costs: RoundCosts, *, new_tokens: object = None) -> Number:
    """E[tokens per round] (1 + o_plain) / (gamma c + k(gamma) + o_round), every cost in target-pass units.

    ``acceptance``: one alpha, or alpha_1..alpha_gamma per position; ``costs``: c, k, the overheads and
    the prefills (``RoundCosts``). A plain token costs 1 + o_plain, a round gamma c + k + o_round and
    emits E[tokens].

    ``new_tokens`` n (per prompt) gives the speedup of a finite run that also prefills the prompt:
    (P + n (1 + o_plain)) / (P + P_d + R(n) (gamma c + k + o_round)), R(n) = ``expected_rounds`` (about
    n / E[tokens] plus the last round's overshoot); n -> infinity is the above.
    """
    g = _gamma(gamma)
    tokens = expected_tokens_by_position(acceptance, g)
    round_cost = g * costs.c + costs.k + costs.o_round
    if new_tokens is None:
        return tokens * (1 + costs.o_plain) / round_cost
    n = _number(new_tokens, "new tokens")
    rounds = expected_rounds(acceptance, g, new_tokens)
    # plain: prefill, then n steps; speculative: both prefills, then R(n) rounds
    return (costs.prefill + n * (1 + costs.o_plain)) / (costs.prefill + costs.draft_prefill + rounds * round_cost)


def best_gamma(acceptance: object, costs: Mapping[int, RoundCosts]) -> int:
    """The gamma among ``costs``' keys maximising ``cost_model_speedup`` (the smallest on ties).

    ``costs`` maps each candidate gamma to its measured ``RoundCosts`` (k(gamma), o_round(gamma) and c
    depend on gamma). Per-position ``acceptance`` must cover the largest candidate.
    """
    if not costs:
        raise LawError("best_gamma needs the costs of at least one gamma")
    scores = {g: cost_model_speedup(acceptance, g, costs[g]) for g in sorted(costs)}
    return max(scores, key=lambda g: (scores[g], -g))


def speedup_from_timings(tokens_per_round: object, decode_time: object, draft_time: object, target_time: object) -> Number:
    """Speedup = E[tokens per round] * T_decode / (T_draft + T_target) (time per token, plain vs speculative)."""
    tokens = _number(tokens_per_round, "tokens per round")
    times = [_number(t, name) for t, name in ((decode_time, "decode time"), (draft_time, "draft time"), (target_time, "target time"))]
    if tokens < 1:
        raise LawError(f"a round emits at least one token, got tokens per round = {tokens_per_round!r}")
    if any(t < 0 for t in times) or times[1] + times[2] == 0:
        raise LawError(f"times must be >= 0 with a positive round time, got {decode_time!r}, {draft_time!r}, {target_time!r}")
    decode, draft, verify = times
    # plain decoding spends T_decode per token; a round spends T_draft + T_target for E[tokens] tokens
    return tokens * decode / (draft + verify)


def article_speedup_example() -> Fraction:
    """The article's worked example: 3 tokens per round, 10 ms/token decode, 3 ms draft, 12 ms verify -> 2."""
    return speedup_from_timings(3, 10, 3, 12)


def alpha_for_expected_tokens(tokens: float, gamma: int, *, tolerance: float = 1e-12) -> float:
    """The alpha in [0, 1] with (1 - alpha^(gamma+1)) / (1 - alpha) = tokens, by bisection (floats).

    The left side increases from 1 (alpha = 0) to gamma + 1 (alpha = 1), so a root exists iff
    1 <= tokens <= gamma + 1. (E.g. the article's 3 tokens per round with gamma = 4 need alpha ~ 0.741.)
    """
    g = _gamma(gamma)
    if not 1 <= tokens <= g + 1:
        raise LawError(f"a round with gamma = {g} emits between 1 and {g + 1} tokens on average, not {tokens}")
    lo, hi = 0.0, 1.0
    while hi - lo > tolerance:
        mid = (lo + hi) / 2
        if float(expected_tokens_per_round(mid, g)) < tokens:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2
