"""The bench: plain, speculative and HF assisted decoding timed on the same prompts and seeds, beside the model.

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha_i = P(draft position i
is accepted | positions before it were), t_1 = one cached target pass over 1 token.

``bench_pair`` is the one bench function: ``specmath bench``, ``benchmarks/lm_goals.py``,
``scripts/gpu_check.py``, the timing figure and notebook 07 all call it. Per prompt (batch 1) it runs
plain decoding, speculative decoding and HF assisted generation (``hf_baseline``) one after another,
so a change of machine load hits all three alike; then it measures the costs apart from the timed
runs (``cost_measure``), with the KV cache at the workload's mid-run length, and evaluates the speedup
model of ``specmath.theory.cost_model_speedup`` for the workload as run:

    speedup(n) = (P + n (1 + o_plain)) / (P + P_d + R(n) (gamma c + k(gamma) + o_round)),

P and P_d the prefills of one prompt, R(n) the expected rounds until n tokens are out
(``theory.expected_rounds``). Adaptive drafts (prompt lookup proposing only what a match offers, a
confidence stop) propose fewer than gamma tokens in some rounds, so the model takes the rounds as they
ran: alpha_j becomes the continuation rate a_j (``continuation_rates``), k and o_round the mean over
the rounds of k(g) and o_round(g) for the g drafts each verified (``Costs.model_of_rounds``). For a
draft that always proposes gamma tokens these are alpha_j, k(gamma) and o_round(gamma).

``choose_gamma`` (``--gamma auto``) maximises the measured-cost model over gamma 1..8 after a short
calibration run.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import torch
from tqdm.auto import tqdm

from specmath.choices import GAMMA_AUTO
from specmath.lm.bench_result import BenchResult, Calibration, DecodeOptions, PerDecoder, RoundProfile
from specmath.lm.cost_measure import GAMMAS, measure_costs, prefill_seconds, workload_context
from specmath.lm.drafts import ModelDraft
from specmath.lm.generation import combined
from specmath.lm.hf_baseline import has_hf_counterpart, hf_assisted_generate
from specmath.lm.pairs import Pair
from specmath.lm.plain_decode import plain_generate
from specmath.lm.speculative_decode import speculative_generate
from specmath.lm.stopwatch import Stopwatch, device_of
from specmath.lm.warps import DEFAULT_SAMPLING
from specmath.sampling_options import SamplingOptions
from specmath.theory import best_gamma, cost_model_speedup
from specmath.validation import InvalidArgument, check_integer, check_seed

__all__ = ["bench_pair", "choose_gamma", "continuation_rates", "DecodeOptions", "BenchResult"]


def continuation_rates(accepted_hist: Sequence[int], gamma: int) -> list[float]:
    """a_i = P(draft i proposed and accepted | drafts 1..i-1 accepted), i = 1..gamma, from rounds by accepted count.

    With S(m) = rounds that accepted at least m drafts, a_i = S(i) / S(i - 1). For a draft that always
    proposes gamma tokens this is alpha_i; for an adaptive one (prompt lookup without a match, a
    confidence stop) a position not proposed counts as not accepted, so 1 + sum_i prod_{j<=i} a_j is
    the mean tokens per round that the runs emitted.
    """
    hist = list(accepted_hist) + [0] * max(0, gamma + 1 - len(accepted_hist))
    at_least = [sum(hist[m:]) for m in range(gamma + 1)]
    return [at_least[i] / at_least[i - 1] if at_least[i - 1] else 0.0 for i in range(1, gamma + 1)]


def _speculative(pair: Pair, prompts: list[list[int]], max_new_tokens: int, *, gamma: int, sampling: SamplingOptions, seed: int,
                 options: DecodeOptions, profile: bool = False):
    return speculative_generate(pair.target, pair.draft, prompts, max_new_tokens, gamma=gamma, sampling=sampling, seed=seed,
                                eos_token_id=pair.eos_token_id, vocab_size=pair.vocab_size,
                                draft_threshold=options.draft_threshold, accept_reject=options.accept_reject, profile=profile)


def choose_gamma(pair: Pair, prompt: Sequence[int], *, sampling: SamplingOptions = DEFAULT_SAMPLING, context: int | None = None,
                 tokens: int = 32, seed: int = 0, options: DecodeOptions = DecodeOptions()) -> Calibration:
    """``--gamma auto``: the gamma in 1..8 maximising the measured-cost speedup, after a short calibration.

    One speculative run of ``tokens`` new tokens at gamma = 8 on ``prompt`` gives the continuation rate
    a_i per position (it does not depend on how many positions follow it); ``measure_costs`` gives c,
    k(gamma) and o_round(gamma) for gamma 1..8, each gamma scored with its own costs.
    """
    run = speculative_generate(pair.target, pair.draft, [list(prompt)], tokens, gamma=max(GAMMAS), sampling=sampling,
                               seed=seed, vocab_size=pair.vocab_size, draft_threshold=options.draft_threshold,
                               accept_reject=options.accept_reject)
    alphas = continuation_rates(run.accepted_hist, max(GAMMAS))  # a position not proposed counts as a stop
    costs = measure_costs(pair.target, pair.draft, prompt, GAMMAS, sampling=sampling, context=context,
                          accept_reject=options.accept_reject)
    models = {g: costs.model(g) for g in GAMMAS}
    scores = {g: cost_model_speedup(alphas, g, models[g]) for g in GAMMAS}
    return Calibration(best_gamma(alphas, models), alphas, costs, scores)


def bench_pair(pair: Pair, *, prompts: Sequence[Sequence[int]] | None = None, max_new_tokens: int = 64,
               gamma: int | str = 4, sampling: SamplingOptions = DEFAULT_SAMPLING, seed: int = 0,
               options: DecodeOptions = DecodeOptions(), hf: bool = True, progress: bool = True,
               profile: bool = False) -> BenchResult:
    """Tokens/s of plain, speculative and HF assisted decoding (batch 1, each prompt), alpha_i, the costs, the model.

    ``prompts``: token ids (default: the pair's own); prompt i decodes with seed + i, each run stops at
    the pair's eos. ``gamma="auto"``: ``choose_gamma`` on the first prompt. ``options``: how speculative
    decoding verifies and drafts (HF assisted generation always verifies token by token). ``hf=False``
    skips HF, as does a draft without an HF counterpart. ``profile``: one more speculative pass over the
    prompts with ``profile=True`` (seconds per part of the rounds), after the timed runs.
    """
    prompts = [list(p) for p in (pair.prompts if prompts is None else prompts)]
    if not prompts:
        raise InvalidArgument("bench_pair needs at least one prompt")
    check_integer(max_new_tokens, "max_new_tokens", min_value=1)
    check_seed(seed)
    target, draft = pair.target, pair.draft
    hf = hf and has_hf_counterpart(draft)
    context = workload_context(prompts, max_new_tokens)
    calibration = None
    if gamma == GAMMA_AUTO:
        calibration = choose_gamma(pair, prompts[0], sampling=sampling, context=context, seed=seed, options=options)
        gamma = calibration.gamma
    check_integer(gamma, f"gamma (draft tokens per round, or {GAMMA_AUTO!r})", min_value=1)
    plain = partial(plain_generate, target, sampling=sampling, eos_token_id=pair.eos_token_id, vocab_size=pair.vocab_size)
    speculative = partial(_speculative, pair, max_new_tokens=max_new_tokens, gamma=gamma, sampling=sampling, options=options)
    # warm-up: allocator, kernels, lazy inits
    plain(prompts[:1], 4, seed=seed)
    speculative(prompts[:1], max_new_tokens=4, seed=seed)
    watch = Stopwatch(device_of(target))
    plain_runs, runs, hf_tokens = [], [], 0
    for i, ids in enumerate(tqdm(prompts, desc=f"bench {pair.name}", disable=not progress)):
        plain_runs.append(watch.time("plain", partial(plain, [ids], max_new_tokens, seed=seed + i)))
        runs.append(watch.time("speculative", partial(speculative, [ids], seed=seed + i)))
        if hf:
            hf_tokens += watch.time("hf_assisted", partial(hf_assisted_generate, target, draft, ids, max_new_tokens,
                                                            gamma=gamma, sampling=sampling, seed=seed + i,
                                                            eos_token_id=pair.eos_token_id))
    spec = combined(runs)
    widths = spec.width_hist + [0] * (gamma + 1 - len(spec.width_hist))
    # costs, measured apart from the timed runs; every width a round verified (an adaptive draft's rounds verify fewer)
    verified = {g for g, n in enumerate(widths) if n and g}
    costs = measure_costs(target, draft, prompts[0], sorted({gamma} | verified), sampling=sampling, context=context,
                          accept_reject=options.accept_reject)
    prefill = prefill_seconds(prompts, target=target) / costs.t1 / len(prompts)
    draft_prefill = prefill_seconds(prompts, draft=draft) / costs.t1 / len(prompts) if isinstance(draft, ModelDraft) else 0.0
    # a model draft pays per forward pass; a draft without a model (prompt lookup) one search per round
    per_round = (spec.draft_steps / spec.rounds if isinstance(draft, ModelDraft) else gamma) if spec.rounds else 0.0
    rounds_profile = None
    if profile:
        profiled = combined([speculative([ids], seed=seed + i, profile=True) for i, ids in enumerate(prompts)])
        rounds_profile = RoundProfile(profiled.rounds, profiled.profile)
    accepted = sum(n * c for n, c in enumerate(spec.accepted_hist))
    return BenchResult(
        pair=pair.name, device=str(device_of(target)), dtype=str(next(target.parameters()).dtype).replace("torch.", ""),
        threads=torch.get_num_threads(), gamma=gamma, calibration=calibration, options=options, sampling=sampling,
        prompts=len(prompts), max_new_tokens=max_new_tokens,
        new_tokens=PerDecoder(sum(len(g.tokens[0]) for g in plain_runs), sum(len(s.tokens[0]) for s in runs), hf_tokens),
        seconds=PerDecoder(*(watch.seconds.get(part, 0.0) for part in ("plain", "speculative", "hf_assisted"))),
        hf_ran=hf, alpha=spec.alpha_mean,
        acceptance_by_position=[a / r if r else None for a, r in zip(spec.position_accepted, spec.position_reached, strict=True)],
        continuation_by_position=continuation_rates(spec.accepted_hist, gamma), rounds_by_width=widths,
        drafts_per_round=spec.drafted / spec.rounds if spec.rounds else None,
        mean_tokens_per_round=(accepted + spec.rounds) / spec.rounds if spec.rounds else None,
        costs=costs, model=costs.model_of_rounds(widths, per_round, gamma, prefill=prefill, draft_prefill=draft_prefill),
        profile=rounds_profile,
    )
