"""Sampling warps (temperature, top-k, top-p) and speculative decoding: lossless for the *warped* target.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)). A warp w maps a law to a law (``SamplingOptions`` applied by ``specmath.speculative.sampling_warp.warped``).

What the user asks for is a sample from w(p). Speculative decoding delivers exactly that when the
accept/reject step uses p' = w(p) and q' = the law the draft tokens were *actually drawn from*; the proof of
losslessness never looks at how q' was made, so:

* warp on both sides (tokens from w(q), accept/reject against w(p) with q' = w(q)): lossless;
* warp on the target only, draft unwarped and honest (tokens and q' both from q): still lossless
  for w(p), only acceptance changes;
* warp on the draft only (target probabilities unwarped): the output is the *unwarped* p, at
  TV(AR(p), AR(w(p))) from what was asked (vllm-project/vllm PR #10198);
* tokens drawn from w(q) but q' taken from the raw logits (q' = q): the acceptance ratio is off by
  the kept mass and the residual includes tokens the draft can never propose: lossy
  (huggingface/transformers issue #47932).

Greedy decoding is the T -> 0 end: w = temperature 0 makes p and q one-hot on their argmax, so
min(1, p/q) accepts a draft token iff it is the target's argmax, and a round emits the longest
agreeing prefix plus the target's own argmax, a point mass (``greedy_round_law``).

References: Leviathan et al., ICML 2023 (the proof holds for any p and q, so for warped ones);
vllm-project/vllm PR #10198; huggingface/transformers issue #47932 and PR #47961.
"""

from __future__ import annotations

from fractions import Fraction

from specmath.laws import Law, LawError, point, tv_distance
from specmath.sampling_options import SamplingOptions
from specmath.speculative.generate import generate_law
from specmath.speculative.round import LM, accept_block, check_round_arguments, draft_block, round_law
from specmath.speculative.toy_lm import temperature, warp
from specmath.speculative.variants import autoregressive_law, expected_accepted, generation_law_of, round_law_of

__all__ = [
    "mismatched_round",
    "mismatched_generation_law",
    "warp_scenarios",
    "greedy_continuation",
    "greedy_round_law",
    "greedy_round_prediction",
    "temperature_to_greedy",
]


def mismatched_round(target: LM, draft_sampled: LM, draft_claimed: LM, prefix: tuple, gamma: int):
    """Sampling program: tokens drawn from ``draft_sampled`` but accepted/rejected as if q = ``draft_claimed``.

    With ``draft_claimed is draft_sampled`` this is the ordinary (lossless) round.
    """
    prefix = check_round_arguments(prefix, gamma)
    tokens, _ = yield from draft_block(draft_sampled, prefix, gamma)
    # the accept/reject step is handed q' = draft_claimed at each drafted position, not the law actually used
    claimed = tuple(draft_claimed(prefix + tokens[:i]) for i in range(gamma))
    for i, (x, q) in enumerate(zip(tokens, claimed, strict=True)):
        if q.prob(x) == 0:
            raise LawError(f"draft token {x!r} at position {i} was drawn, but the claimed draft law gives it probability 0")
    emitted = yield from accept_block(target, prefix, tokens, claimed)
    return emitted


def mismatched_generation_law(target: LM, draft_sampled: LM, draft_claimed: LM, prefix: tuple, gamma: int, length: int) -> Law:
    """Law of the first ``length`` tokens of repeated ``mismatched_round`` calls."""

    def at(context: tuple) -> Law:
        return round_law_of(mismatched_round, target, draft_sampled, draft_claimed, context, gamma)

    return generation_law_of(at, prefix, length)


def warp_scenarios(target: LM, draft: LM, w: SamplingOptions, prefix: tuple, gamma: int, length: int) -> dict[str, dict]:
    """For each way of applying the warp w: the generation law, its TV from AR(w(p)), E[accepted].

    AR(w(p)) = autoregressive law of the warped target is what the user asked for.
    """
    wt, wd = warp(target, w), warp(draft, w)
    wanted = autoregressive_law(wt, prefix, length)
    cases = {
        "warp on both sides (correct)": (wt, wd, wd),
        "warp on the target only, honest unwarped draft": (wt, draft, draft),
        "warp on the draft only (target unwarped)": (target, wd, wd),
        "tokens from the warped draft, q from raw logits": (wt, wd, draft),
    }
    out = {}
    for name, (t, sampled, claimed) in cases.items():
        if sampled is claimed:
            law = generate_law(t, sampled, prefix, gamma, length)
            one_round = round_law(t, sampled, prefix, gamma)
        else:
            law = mismatched_generation_law(t, sampled, claimed, prefix, gamma, length)
            one_round = round_law_of(mismatched_round, t, sampled, claimed, check_round_arguments(prefix, gamma), gamma)
        out[name] = {"law": law, "tv": tv_distance(law, wanted), "accepted": expected_accepted(one_round)}
    return out


def greedy_continuation(lm: LM, prefix: tuple, n: int) -> tuple:
    """The n tokens greedy decoding produces: x_i = argmax p(. | prefix x_<i) (first listed token wins ties)."""
    out: tuple = ()
    for _ in range(n):
        # temperature 0 is the one-hot law on the argmax
        out += (next(x for x, w in temperature(lm(prefix + out), 0).items() if w == 1),)
    return out


def greedy_round_prediction(target: LM, draft: LM, prefix: tuple, gamma: int) -> tuple:
    """What a greedy round must emit: the draft's greedy tokens while they equal the target's argmax,
    then the target's argmax (the bonus when all gamma agree)."""
    prefix = check_round_arguments(prefix, gamma)
    out: tuple = ()
    for _ in range(gamma):
        mine = greedy_continuation(target, prefix + out, 1)
        theirs = greedy_continuation(draft, prefix + out, 1)
        if mine != theirs:
            return out + mine
        out += mine
    return out + greedy_continuation(target, prefix + out, 1)


def greedy_round_law(target: LM, draft: LM, prefix: tuple, gamma: int) -> Law:
    """Exact round law at temperature 0 on both sides (a point mass on ``greedy_round_prediction``)."""
    zero = SamplingOptions(temperature=0)
    return round_law(warp(target, zero), warp(draft, zero), prefix, gamma)


def temperature_to_greedy(target: LM, draft: LM, prefix: tuple, gamma: int, inverse_temperatures=(1, 2, 4, 8, 16)) -> list[dict]:
    """For T = 1/k: TV(AR(w_T(p)), greedy point law) over gamma + 1 tokens and E[accepted] of one round.

    As T -> 0 the warped target law concentrates on the greedy continuation (TV -> 0) and the
    acceptance tends to the greedy round's (1 per agreeing argmax).
    """
    greedy = point(greedy_continuation(target, check_round_arguments(prefix, gamma), gamma + 1))
    rows = []
    for k in inverse_temperatures:
        w = SamplingOptions(temperature=Fraction(1, k))
        wt, wd = warp(target, w), warp(draft, w)
        rows.append(
            {
                "T": Fraction(1, k),
                "tv_to_greedy": tv_distance(autoregressive_law(wt, prefix, gamma + 1), greedy),
                "accepted": expected_accepted(round_law(wt, wd, prefix, gamma)),
            }
        )
    zero_round = greedy_round_law(target, draft, prefix, gamma)
    rows.append({"T": Fraction(0), "tv_to_greedy": Fraction(0), "accepted": expected_accepted(zero_round)})
    return rows
