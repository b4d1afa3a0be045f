"""The bench: plain, speculative and HF assisted decoding timed on the same prompts and seeds, beside the model.

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha_i = P(draft position i
is accepted | positions before it were), t_1 = one cached target pass over 1 token.

``bench_pair`` is the one bench function: ``specmath bench``, ``benchmarks/lm_goals.py``,
``scripts/gpu_check.py``, the timing figure and notebook 07 all call it. Per prompt (batch 1) it runs
plain decoding, speculative decoding and HF assisted generation (``hf_baseline``) one after another,
so a change of machine load hits all three alike; then it measures the costs apart from the timed
runs (``cost_measure``), with the KV cache at the workload's mid-run length. That whole sequence is
repeated (A B A B ..., ``repeats``, default 3): on a shared machine one repeat's ratio can be off by
a factor of 3 when a neighbour starts, so the bench reports every repeat's measured and predicted
ratio, their medians and their spread, each prediction from the costs taken in its own repeat. It
evaluates the speedup model of ``specmath.theory.cost_model_speedup`` for the workload as run:

    speedup(n) = (P + n (1 + o_plain)) / (P + P_d + R(n) (gamma c + k(gamma) + o_round)),

P and P_d the prefills of one prompt, R(n) the expected rounds until n tokens are out
(``theory.expected_rounds``). Adaptive drafts (prompt lookup proposing only what a match offers, a
confidence stop) propose fewer than gamma tokens in some rounds, so the model takes the rounds as they
ran: alpha_j becomes the continuation rate a_j (``continuation_rates``), k and o_round the mean over
the rounds of k(g) and o_round(g) for the g drafts each verified (``Costs.model_of_rounds``). For a
draft that always proposes gamma tokens these are alpha_j, k(gamma) and o_round(gamma).

``choose_gamma`` (``--gamma auto``, ``bench_pair(calibrate_gamma=True)``) maximises the measured-cost
model over gamma 1..8 after a short calibration run. How speculative decoding runs (gamma, the warp,
the verifier, the draft's confidence stop, the seed) is one ``decode_options.DecodeOptions``; plain
decoding and HF assisted generation run with the same warp and seeds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from statistics import median

import torch
from tqdm.auto import tqdm

from specmath.lm.bench_result import BenchResult, Calibration, PerDecoder, RepeatTimes, RoundProfile, load_average
from specmath.lm.cost_measure import GAMMAS, MIN_SECONDS, measure_costs, prefill_seconds, workload_context
from specmath.lm.decode_options import DecodeOptions
from specmath.lm.drafts import ModelDraft
from specmath.lm.generation import combined
from specmath.lm.hf_baseline import has_hf_counterpart, hf_assisted_generate
from specmath.lm.pairs import Pair
from specmath.lm.plain_decode import plain_generate
from specmath.lm.roofline import Roofline, memory_bandwidth, weight_bytes
from specmath.lm.speculative_decode import speculative_generate
from specmath.lm.stopwatch import Stopwatch, device_of, timed_by
from specmath.theory import best_gamma, cost_model_speedup
from specmath.validation import InvalidArgument, check_clock, check_integer, check_seed

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


def choose_gamma(pair: Pair, prompt: Sequence[int], options: DecodeOptions = DecodeOptions(), *,
                 context: int | None = None, tokens: int = 32) -> Calibration:
    """``--gamma auto``: the gamma in 1..8 maximising the measured-cost speedup, after a short calibration.

    One speculative run of ``tokens`` new tokens at gamma = 8 on ``prompt`` (``options`` otherwise) gives
    the continuation rate a_i per position (it does not depend on how many positions follow it);
    ``measure_costs`` gives c, k(gamma) and o_round(gamma) for gamma 1..8, each gamma scored with its own costs.
    """
    run = speculative_generate(pair.target, pair.draft, [list(prompt)], tokens,
                               options.replace(gamma=max(GAMMAS), vocab_size=pair.vocab_size, eos_token_id=None))
    alphas = continuation_rates(run.accepted_hist, max(GAMMAS))  # a position not proposed counts as a stop
    costs = measure_costs(pair.target, pair.draft, prompt, GAMMAS, options=options, context=context)
    models = {g: costs.model(g) for g in GAMMAS}
    scores = {g: cost_model_speedup(alphas, g, models[g]) for g in GAMMAS}
    return Calibration(best_gamma(alphas, models), alphas, costs, scores)


def bench_pair(pair: Pair, prompts: Sequence[Sequence[int]] | None = None, max_new_tokens: int = 64,
               options: DecodeOptions = DecodeOptions(), *, calibrate_gamma: bool = False, hf: bool = True,
               progress: bool = True, profile: bool = False, repeats: int = 3, clock: str = "wall") -> BenchResult:
    """Tokens/s of plain, speculative and HF assisted decoding (batch 1, each prompt), alpha_i, the costs, the model.

    ``prompts``: token ids (default: the pair's own); prompt i decodes with seed options.seed + i, each run
    stops at the pair's eos. ``options``: how speculative decoding runs (an int gamma and seed; HF
    assisted generation always verifies token by token, without a confidence stop; the pair gives eos and
    the vocabulary; ``compile`` runs plain and speculative decoding on compiled static-cache steps).
    ``calibrate_gamma``: ``choose_gamma`` on the first prompt sets gamma. ``hf=False`` skips HF, as does a
    draft without an HF counterpart. ``profile``: one more speculative pass over the prompts with
    ``profile=True`` (seconds per part of the rounds), after the timed runs.

    ``repeats``: the whole measurement is repeated, interleaved (prompt by prompt: plain, speculative, HF;
    then the costs), so each repeat's measured ratio and its predicted one see the same machine; the
    result reports each repeat, the median ratios and their spread (``RepeatTimes``). Each repeat also
    measures the memory bandwidth (``roofline``): plain decoding's rate against its bandwidth floor.

    ``clock``: what the runs and the costs are timed by, "wall" or "cpu" (this process's CPU time, for a CPU run of
    one torch thread beside other CPU-bound processes: ``stopwatch.timed_by``); the warm-up is timed by the wall.
    """
    prompts = [list(p) for p in (pair.prompts if prompts is None else prompts)]
    if not prompts:
        raise InvalidArgument("bench_pair needs at least one prompt")
    check_integer(max_new_tokens, "max_new_tokens", min_value=1)
    check_integer(repeats, "repeats (interleaved repeats of the bench)", min_value=1)
    seed = check_seed(options.seed, "options.seed (the bench's: prompt i decodes with seed + i)")
    check_clock(clock, torch.get_num_threads(), str(device_of(pair.target)))
    with timed_by(clock):
        return _bench(pair, prompts, max_new_tokens, options, seed, calibrate_gamma, hf, progress, profile, repeats, clock)


def _bench(pair: Pair, prompts: list[list[int]], max_new_tokens: int, options: DecodeOptions, seed: int,
           calibrate_gamma: bool, hf: bool, progress: bool, profile: bool, repeats: int, clock: str) -> BenchResult:
    """``bench_pair`` after its checks, every stopwatch reading ``clock``."""
    target, draft = pair.target, pair.draft
    hf = hf and has_hf_counterpart(draft)
    context = workload_context(prompts, max_new_tokens)
    calibration = None
    if calibrate_gamma:
        calibration = choose_gamma(pair, prompts[0], options, context=context)
        options = options.replace(gamma=calibration.gamma)
    gamma = check_integer(options.gamma, "gamma (draft tokens per round: the bench takes an int)", min_value=1)
    run_options = options.replace(eos_token_id=pair.eos_token_id, vocab_size=pair.vocab_size)

    def plain(ids: list[int], tokens: int, run: DecodeOptions):
        return plain_generate(target, [ids], tokens, run)

    def speculative(ids: list[int], tokens: int, run: DecodeOptions, profile: bool = False):
        return speculative_generate(target, draft, [ids], tokens, run, profile=profile)

    # warm-up: allocator, kernels, lazy inits; with ``compile``, the graphs of every width a run meets
    # (the first runs of each prompt compile; their time is the compile time, reported apart)
    compile_watch = Stopwatch(device_of(target), clock="wall")  # compiling runs in other processes too
    compile_watch.time("plain", partial(plain, prompts[0], 4, run_options))
    compile_watch.time("speculative", partial(speculative, prompts[0], 4, run_options))
    if options.compile:
        for i, ids in enumerate(prompts):
            run = run_options.replace(seed=seed + i)
            compile_watch.time("plain", partial(plain, ids, max_new_tokens, run))
            compile_watch.time("speculative", partial(speculative, ids, max_new_tokens, run))
    warmup_seconds = compile_watch.total
    plain_runs, runs, hf_tokens, by_repeat, repeat_costs = [], [], 0, [], []
    cost_seconds = MIN_SECONDS / repeats  # the calibration's time, spread over the repeats
    bar = tqdm(total=repeats * len(prompts), desc=f"bench {pair.name}", disable=not progress)
    for r in range(repeats):
        watch = Stopwatch(device_of(target))
        load_before = load_average()
        for i, ids in enumerate(prompts):
            run = run_options.replace(seed=seed + i)  # prompt i's seed, for all three decoders
            plain_run = watch.time("plain", partial(plain, ids, max_new_tokens, run))
            spec_run = watch.time("speculative", partial(speculative, ids, max_new_tokens, run))
            if r == 0:  # every repeat emits the same tokens (same prompts and seeds): count the first
                plain_runs.append(plain_run)
                runs.append(spec_run)
            if hf:
                tokens = watch.time("hf_assisted", partial(hf_assisted_generate, target, draft, ids, max_new_tokens, run))
                hf_tokens += tokens if r == 0 else 0
            bar.update(1)
        if r == 0:
            spec = combined(runs)
            widths = spec.width_hist + [0] * (gamma + 1 - len(spec.width_hist))
            # every width a round verified (an adaptive draft's rounds verify fewer)
            verified = {g for g, n in enumerate(widths) if n and g}
        # the costs, measured right after this repeat's runs: the model sees the machine they saw
        repeat_costs.append(measure_costs(target, draft, prompts[0], sorted({gamma} | verified), options=options,
                                          context=context, repeats=max(2, 7 // repeats), min_seconds=cost_seconds))
        by_repeat.append(RepeatTimes(*(watch.seconds.get(part, 0.0) for part in ("plain", "speculative", "hf_assisted")),
                                     load_average=(load_before, load_average()),
                                     bandwidth=memory_bandwidth(device_of(target))))  # the copy loop, in the same repeat
    bar.close()
    prefill_s = prefill_seconds(prompts, target=target, options=options)
    draft_prefill_s = prefill_seconds(prompts, draft=draft, options=options) if isinstance(draft, ModelDraft) else 0.0
    # a model draft pays per forward pass; a draft without a model (prompt lookup) one search per round
    per_round = (spec.draft_steps / spec.rounds if isinstance(draft, ModelDraft) else gamma) if spec.rounds else 0.0
    new_tokens = PerDecoder(sum(len(g.tokens[0]) for g in plain_runs), sum(len(s.tokens[0]) for s in runs), hf_tokens)
    continuation = continuation_rates(spec.accepted_hist, gamma)
    models = [costs.model_of_rounds(widths, per_round, gamma, prefill=prefill_s / costs.t1 / len(prompts),
                                    draft_prefill=draft_prefill_s / costs.t1 / len(prompts)) for costs in repeat_costs]
    predicted = [cost_model_speedup(continuation, gamma, m, new_tokens=new_tokens.plain / len(prompts)) for m in models]
    for r, value in enumerate(predicted):
        by_repeat[r] = replace(by_repeat[r], predicted_speedup=value)
    middle = sorted(range(repeats), key=lambda r: predicted[r])[(repeats - 1) // 2]  # the repeat with the median prediction
    rounds_profile = None
    if profile:
        profiled = combined([speculative(ids, max_new_tokens, run_options.replace(seed=seed + i), profile=True)
                             for i, ids in enumerate(prompts)])
        rounds_profile = RoundProfile(profiled.rounds, profiled.profile)
    accepted = sum(n * c for n, c in enumerate(spec.accepted_hist))
    return BenchResult(
        pair=pair.name, device=str(device_of(target)), dtype=str(next(target.parameters()).dtype).replace("torch.", ""),
        threads=torch.get_num_threads(), calibration=calibration, options=options,
        prompts=len(prompts), max_new_tokens=max_new_tokens, new_tokens=new_tokens,
        seconds=PerDecoder(*(median(getattr(t, part) for t in by_repeat) for part in ("plain", "speculative", "hf_assisted"))),
        hf_ran=hf, alpha=spec.alpha_mean,
        acceptance_by_position=[a / r if r else None for a, r in zip(spec.position_accepted, spec.position_reached, strict=True)],
        continuation_by_position=continuation, rounds_by_width=widths,
        drafts_per_round=spec.drafted / spec.rounds if spec.rounds else None,
        mean_tokens_per_round=(accepted + spec.rounds) / spec.rounds if spec.rounds else None,
        costs=repeat_costs[middle], model=models[middle], profile=rounds_profile, repeats=by_repeat,
        warmup_seconds=warmup_seconds, clock=clock,
        roofline=Roofline(weight_bytes(target), median(t.bandwidth for t in by_repeat),
                          new_tokens.plain / median(t.plain for t in by_repeat)),
    )
