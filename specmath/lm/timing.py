"""Timing on the same models, prompts and seed: plain, speculative, HF assisted; and the cost model that predicts it.

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha_i = P(draft position i
is accepted | positions before it were), alpha = sum_x min(p(x), q(x)).

The speedup model (``specmath.theory.cost_model_speedup``; Leviathan et al. 2023, Theorem 3.8 with
the verify pass measured instead of assumed free). Every cost is measured on this machine, in
isolation from the timed runs, with the KV cache at the workload's length (mean prompt + half the
new tokens) and in units of t_1 = one cached target pass over 1 token:

    c          = (one draft ``propose`` of gamma tokens + its rollback) / (gamma t_1): forwards, warps, sampling
    k(gamma)   = (target pass over gamma + 1 tokens) / t_1          (1 if decoding were memory-bound), the
                 verify pass timed right after a draft proposal, as in a round: for small models the
                 draft's work evicts the target's weights from the CPU caches, and that costs time too
    o_round    = (warp of the gamma + 1 target laws, the accept/reject step, cache rollback, counters) / t_1
    o_plain    = (warp of one law, sampling, host transfer) / t_1    (the part of a plain step outside the pass)
    E[tokens per round] = 1 + sum_{i<=gamma} prod_{j<=i} alpha_j      (alpha_j measured per position)

    speedup = E[tokens] (1 + o_plain) / (gamma c + k(gamma) + o_round)       (n new tokens -> infinity)

Adaptive drafts (prompt lookup proposing only what a match offers, a confidence stop) propose fewer
than gamma tokens in some rounds, so the model takes the rounds as they ran: alpha_j becomes the
continuation rate a_j = P(draft j proposed and accepted | drafts before it accepted)
(``continuation_rates``), k(gamma) and o_round the mean over rounds of k(g) and o_round(g) for the g
drafts each verified (a round with none is a plain step, 1 + o_plain), and gamma c the draft tokens
forward passes per round times c (``round_costs``). For a draft that always proposes gamma tokens these
are alpha_j, k(gamma), o_round(gamma) and gamma c.

A timed run of n new tokens per prompt also pays the prompt's prefill (P target, P_d draft, measured
per prompt), so the model prints, for the workload actually run,

    speedup(n) = (P + n (1 + o_plain)) / (P + P_d + R(n) (gamma c + k(gamma) + o_round)),

R(n) = the expected rounds until n tokens are out (``theory.expected_rounds``: n / E[tokens] plus the
last round's overshoot, whose surplus tokens are paid for and cut).

``bench_pair`` prints it with k = 1 and no overheads (Leviathan's premise) and with the measured costs,
next to the measured speedup; ``choose_gamma`` maximises the measured-cost model over gamma 1..8 after a
short calibration run (``--gamma auto``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from statistics import median

import torch
from tqdm.auto import tqdm

from specmath.lm.accept_reject import accept_reject
from specmath.lm.block_verify import verifier
from specmath.lm.cache import RowCache
from specmath.lm.drafts import ModelDraft, PromptLookupDraft
from specmath.lm.generation import Draws
from specmath.lm.lean_llama import hf_model
from specmath.lm.plain_decode import plain_generate
from specmath.lm.speculative_decode import speculative_generate
from specmath.lm.warps import DEFAULT_SAMPLING, Sampling
from specmath.theory import best_gamma, cost_model_speedup, expected_tokens_by_position
from specmath.theory import speedup as predicted_speedup  # (1 - alpha^(gamma+1)) / ((1 - alpha)(gamma c + 1))

__all__ = ["predicted_speedup", "forward_cost", "Costs", "measure_costs", "choose_gamma", "prefill_seconds", "bench_pair", "GAMMAS",
           "continuation_rates", "round_costs"]

#: the gammas ``--k-table`` and ``--gamma auto`` consider
GAMMAS = tuple(range(1, 9))
#: a cost is the median of at least ``repeats`` timings, more while they add up to less than this
MIN_SECONDS = 1.0


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def _context(prompt: Sequence[int], length: int | None) -> list[int]:
    """``prompt`` repeated (or cut) to ``length`` tokens: a KV cache as long as the workload's."""
    prompt = list(prompt)
    if not length or length <= len(prompt):
        return prompt[: length or len(prompt)]
    return (prompt * (length // len(prompt) + 1))[:length]


def _device(model: torch.nn.Module) -> torch.device:
    return next(model.parameters()).device


@torch.inference_mode()
def _pass_times(model: torch.nn.Module, context: list[int], sizes: Sequence[int], repeats: int) -> tuple[dict, dict, torch.Tensor]:
    """Median seconds of a cached pass over n tokens (and of rolling the cache back) for each n in sizes.

    The sizes are interleaved within each repeat, so a change of machine load hits every size alike.
    Returns (pass seconds by n, rollback seconds by n, the logits of the last pass over max(sizes)).
    """
    cache = RowCache(model, 1)
    cache.prefill([context[:-1]])
    base = cache.lengths[0]
    device = cache.device
    passes = {n: [] for n in sizes}
    rollbacks = {n: [] for n in sizes}
    logits = None
    began = time.perf_counter()
    r = 0
    # at least ``repeats`` rounds, more (up to 8x) while they take under MIN_SECONDS: a fast model's
    # millisecond passes need many samples for a stable median on a shared machine
    while r <= repeats or (time.perf_counter() - began < MIN_SECONDS and r <= 8 * repeats):
        r += 1
        for n in sizes:
            fed = _context(context[-n:], n)
            _sync(device)
            start = time.perf_counter()
            out = cache.feed([fed])
            _sync(device)
            middle = time.perf_counter()
            cache.keep([base])
            _sync(device)
            end = time.perf_counter()
            if r > 1:  # the first repeat warms kernels and the allocator
                passes[n].append(middle - start)
                rollbacks[n].append(end - middle)
            if n == max(sizes):
                logits = out
    return {n: median(t) for n, t in passes.items()}, {n: median(t) for n, t in rollbacks.items()}, logits


def forward_cost(model: torch.nn.Module, prompt: Sequence[int], n_tokens: int, repeats: int = 10,
                 context: int | None = None) -> float:
    """Seconds for one cached forward of ``n_tokens`` new tokens after ``prompt`` (tiled to ``context`` tokens)."""
    passes, _, _ = _pass_times(model, _context(prompt, context), [n_tokens], repeats)
    return passes[n_tokens]


@torch.inference_mode()
def _round_times(target: torch.nn.Module, draft, context: list[int], gammas: Sequence[int], sampling: Sampling,
                 repeats: int) -> tuple[dict, dict, dict, float]:
    """A round's model work timed in the order a round runs it, for each gamma, in units of a plain pass.

    The draft proposes gamma tokens (``propose``, host read, ``commit`` of a round that kept nothing),
    then the target passes over the gamma + 1 tokens, then its cache is rolled back. Timing the target
    right after the draft, not alone, charges the verify pass with what the alternation costs: the
    draft's work evicts the target's weights and cache from the CPU caches (it matters for models of a
    few MB, like the bundled pair; a model of hundreds of MB is read from memory every pass anyway).
    Each repeat also times t_1 as plain decoding runs it (a 1-token pass right after another one), and
    the draft and verify times are divided by *that repeat's* t_1 before the median is taken: a change
    of machine speed between repeats (a shared CPU's neighbours, frequency steps) then cancels in the
    ratios instead of moving every cost of the model at once.
    Returns (draft / t_1 by gamma, verify pass / t_1 by gamma + 1, rollback seconds by gamma + 1, median t_1).
    """
    device = _device(target)
    cache = RowCache(target, 1)
    cache.prefill([context[:-1]])
    base = cache.lengths[0]
    draws = Draws.of(torch.Generator(device=device).manual_seed(0), 1)
    draft.start([context])
    drafting = {g: [] for g in gammas}
    verifying = {g + 1: [] for g in gammas}
    rollbacks = {g + 1: [] for g in gammas}
    plain = []
    began = time.perf_counter()
    r = 0
    while r <= repeats or (time.perf_counter() - began < MIN_SECONDS and r <= 8 * repeats):
        r += 1
        times = {}
        for g in gammas:
            _sync(device)
            t0 = time.perf_counter()
            proposal = draft.propose([context], g, sampling, draws)
            proposed = proposal.tokens[0, : proposal.lengths[0]].tolist()  # the decoder reads the drafts on the host
            draft.commit([len(context) - 1])
            _sync(device)
            t1 = time.perf_counter()
            cache.feed([[context[-1], *proposed]])
            _sync(device)
            t2 = time.perf_counter()
            cache.keep([base])
            _sync(device)
            t3 = time.perf_counter()
            times[g] = (t1 - t0, t2 - t1, t3 - t2)
        # t_1 as plain decoding sees it: the second of two 1-token passes, the target's data warm
        for _ in range(2):
            _sync(device)
            start = time.perf_counter()
            cache.feed([[context[-1]]])
            _sync(device)
            single = time.perf_counter() - start
            cache.keep([base])
        if r > 1:  # the first repeat warms kernels and the allocator
            plain.append(single)
            for g, (d, v, b) in times.items():
                drafting[g].append(d / single)
                verifying[g + 1].append(v / single)
                rollbacks[g + 1].append(b)
    return ({g: median(t) for g, t in drafting.items()}, {n: median(t) for n, t in verifying.items()},
            {n: median(t) for n, t in rollbacks.items()}, median(plain))


@torch.inference_mode()
def _round_overhead_seconds(logits: torch.Tensor, gamma: int, one_hot: bool, sampling: Sampling, repeats: int,
                            verify=accept_reject) -> float:
    """Median seconds of what a round does besides the model passes, on real target logits (1, >= gamma + 1, V).

    Mirrors ``speculative_generate``: warp the gamma + 1 target laws, accept/reject, read the number
    accepted and the emitted tokens on the host, and the per-position counters (the cache rollback is
    timed with the passes, in ``_pass_times``).
    """
    z = logits[:, : gamma + 1]
    generator = torch.Generator(device=z.device).manual_seed(0)
    drafts = z[:, :gamma].argmax(-1)  # (1, gamma) realistic proposals: the target's own favourites
    q = None if one_hot else sampling.probs(z[:, :gamma])
    times = []
    for _ in range(repeats + 1):
        _sync(z.device)
        start = time.perf_counter()
        p = sampling.probs(z)  # (1, gamma + 1, V)
        result = verify(p, q, drafts, generator)
        n = result.n_accepted.tolist()[0]
        drafts[0, :n].tolist() + [int(result.next_token[0])]
        alpha = p[:, :gamma].gather(-1, drafts.unsqueeze(-1)).squeeze(-1) if q is None else torch.minimum(p[:, :gamma], q).sum(-1)
        torch.cat([alpha.sum().reshape(1), alpha.new_tensor([n])]).tolist()
        _sync(z.device)
        times.append(time.perf_counter() - start)
    return median(times[1:])


@torch.inference_mode()
def _plain_overhead_seconds(logits: torch.Tensor, sampling: Sampling, repeats: int) -> float:
    """Median seconds of a plain step besides the pass: pick the last logits, warp, sample, read the token."""
    generator = torch.Generator(device=logits.device).manual_seed(0)
    times = []
    for _ in range(repeats + 1):
        _sync(logits.device)
        start = time.perf_counter()
        last = torch.tensor([logits.shape[1] - 1], device=logits.device)
        p = sampling.probs(logits[torch.arange(1, device=logits.device), last])  # (1, V)
        torch.multinomial(p, 1, generator=generator).squeeze(-1).tolist()
        _sync(logits.device)
        times.append(time.perf_counter() - start)
    return median(times[1:])


class Costs:
    """Measured costs of one target/draft pair on this machine (seconds), and the ratios of the model."""

    def __init__(self, t1: float, passes: dict[int, float], rollback: dict[int, float], draft_round: dict[int, float],
                 round_extra: dict[int, float], plain_extra: float, context: int, alone: dict[int, float]) -> None:
        self.t1 = t1  # one cached target pass over 1 token
        self.passes = passes  # n -> target pass over n tokens
        self.rollback = rollback  # n -> rolling the target cache back after a pass over n tokens
        self.draft_round = draft_round  # gamma -> one propose of gamma tokens + rollback
        self.round_extra = round_extra  # gamma -> warps, accept/reject, host reads, counters
        self.plain_extra = plain_extra  # a plain step besides its pass
        self.context = context
        self.alone = alone  # n -> target pass over n tokens, the target alone (no draft work in between)

    def k(self, gamma: int) -> float:
        """k(gamma) = verify pass over gamma + 1 tokens (in a round, after the draft) / plain pass over 1 token."""
        return self.passes[gamma + 1] / self.t1

    def k_alone(self, gamma: int) -> float:
        """The same ratio with the target alone: what the hardware's GEMMs cost, without cache interference."""
        return self.alone[gamma + 1] / self.alone[1]

    def c(self, gamma: int) -> float:
        """c = draft time per drafted token / t_1 (the draft's forwards, warps, sampling and rollback)."""
        return self.draft_round[gamma] / (gamma * self.t1)

    def o_round(self, gamma: int) -> float:
        return (self.round_extra[gamma] + self.rollback[gamma + 1]) / self.t1

    @property
    def o_plain(self) -> float:
        return self.plain_extra / self.t1

    def to_json(self, gammas: Sequence[int]) -> dict:
        return {
            "context_tokens": self.context,
            "target_1_token_s": self.t1,
            "k": {g: self.k(g) for g in gammas},
            "k_alone": {g: self.k_alone(g) for g in gammas},
            "c": {g: self.c(g) for g in gammas},
            "o_round": {g: self.o_round(g) for g in gammas},
            "o_plain": self.o_plain,
        }


def measure_costs(target: torch.nn.Module, draft, prompt: Sequence[int], gammas: Sequence[int], sampling: Sampling,
                  context: int | None = None, repeats: int = 7, verify=accept_reject) -> Costs:
    """Measure t_1, the target pass over gamma + 1 tokens, the draft's round, and the overheads, for each gamma.

    ``verify``: the round's accept/reject step (``accept_reject`` or ``block_verify.block_accept_reject``),
    timed in o_round.

    t_1 is timed as plain decoding runs it (a 1-token pass right after another), in the same repeats as
    the draft's proposal and the verify pass, which are timed as a round runs them (``_round_times``);
    k(gamma) and c are medians of per-repeat ratios to t_1. The pure pass ratio (the target alone,
    ``_pass_times``) is kept as ``k_alone`` for comparison.
    """
    ctx = _context(prompt, context)
    sizes = sorted({1} | {g + 1 for g in gammas})
    alone, _, logits = _pass_times(target, ctx, sizes, repeats)
    draft_ratio, verify_ratio, rollback, t1 = _round_times(target, draft, ctx, sorted(gammas), sampling, repeats)
    one_hot = isinstance(draft, PromptLookupDraft)  # q None; model and table drafts carry a dense q
    round_extra = {g: _round_overhead_seconds(logits, g, one_hot, sampling, 4 * repeats, verify) for g in gammas}  # sub-ms: more samples
    plain_extra = _plain_overhead_seconds(logits[:, :1], sampling, 4 * repeats)
    # seconds at the median t_1, from the per-repeat ratios (so k(gamma) and c are those ratios' medians)
    passes = {n: ratio * t1 for n, ratio in verify_ratio.items()}
    draft_round = {g: ratio * t1 for g, ratio in draft_ratio.items()}
    return Costs(t1, {1: t1, **passes}, rollback, draft_round, round_extra, plain_extra, len(ctx), alone)


@torch.inference_mode()
def prefill_seconds(model: torch.nn.Module | None, draft, prompts: list[list[int]]) -> float:
    """Seconds to prefill every prompt (all but its last token) into the target, or to ``start`` the draft."""
    total = 0.0
    for ids in prompts:
        start = time.perf_counter()
        if model is not None:
            if len(ids) > 1:
                RowCache(model, 1).prefill([ids[:-1]])
        else:
            draft.start([ids])
        _sync(torch.device("cpu") if model is None else _device(model))
        total += time.perf_counter() - start
    return total


def _acceptance(reached: Sequence[int], accepted: Sequence[int]) -> list[float | None]:
    """alpha_i = accepted at i / reached i (None where position i was never reached)."""
    return [a / r if r else None for a, r in zip(accepted, reached, strict=True)]


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


def round_costs(costs: Costs, width_hist: Sequence[int], draft_steps_per_round: float, gamma: int) -> dict[str, float]:
    """Mean costs of the rounds as run: a round verifying g drafts pays k(g) and o_round(g) (g = 0: a plain
    step, 1 + o_plain), and the draft c(gamma) per draft step it made (a model draft's forward passes;
    c(gamma) is one proposal of gamma tokens, gamma forwards, divided by gamma)."""
    rounds = sum(width_hist)
    used = [(g, n) for g, n in enumerate(width_hist) if n]
    k = sum(n * (costs.k(g) if g else 1.0) for g, n in used) / rounds
    o = sum(n * (costs.o_round(g) if g else costs.o_plain) for g, n in used) / rounds
    return {"k": k, "o_round": o, "c_per_position": costs.c(gamma) * draft_steps_per_round / gamma}


def choose_gamma(target: torch.nn.Module, draft, prompt: Sequence[int], sampling: Sampling = DEFAULT_SAMPLING,
                 context: int | None = None, tokens: int = 32, seed: int = 0, vocab_size: int | None = None,
                 decode_options: dict | None = None) -> tuple[int, dict]:
    """``--gamma auto``: the gamma in 1..8 maximising the measured-cost speedup, after a short calibration.

    Calibration: one speculative run of ``tokens`` new tokens at gamma = 8 on ``prompt`` gives the
    continuation rate a_i per position (``continuation_rates``; it does not depend on how many positions
    follow it); ``measure_costs``
    gives c, k(gamma) and o_round(gamma) for gamma 1..8. Returns (gamma, the calibration as a dict).
    """
    run = speculative_generate(target, draft, [list(prompt)], tokens, max(GAMMAS), sampling, seed, vocab_size=vocab_size,
                               **(decode_options or {}))
    # continuation rates: a position an adaptive draft did not propose counts as a stop
    alphas = continuation_rates(run.accepted_hist, max(GAMMAS))
    costs = measure_costs(target, draft, prompt, GAMMAS, sampling, context,
                          verify=(decode_options or {}).get("accept_reject", accept_reject))
    k = {g: costs.k(g) for g in GAMMAS}
    o_round = {g: costs.o_round(g) for g in GAMMAS}
    # c is measured per gamma; the model takes each gamma's own c
    c = {g: costs.c(g) for g in GAMMAS}
    scores = {g: cost_model_speedup(alphas, g, c[g], k[g], o_round[g], costs.o_plain) for g in GAMMAS}
    gamma = best_gamma(alphas, c, k, o_round, costs.o_plain)
    return gamma, {"acceptance_by_position": alphas, "predicted_speedup": scores, **costs.to_json(GAMMAS)}


def _timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def hf_lookup_part(draft) -> PromptLookupDraft | None:
    """The prompt lookup HF runs in place of ``draft``: itself, or the lookup of a lookup + table draft."""
    if isinstance(draft, PromptLookupDraft):
        return draft
    return getattr(draft, "lookup", None) if isinstance(getattr(draft, "lookup", None), PromptLookupDraft) else None


def has_hf_counterpart(draft) -> bool:
    """HF generate runs a model draft (assistant_model) or prompt lookup; an n-gram table alone has no counterpart."""
    return isinstance(draft, ModelDraft) or hf_lookup_part(draft) is not None


@torch.no_grad()
def _hf_assisted(target, draft, ids: list[int], max_new_tokens: int, gamma: int, sampling: Sampling, seed: int,
                 eos_token_id: int | None) -> int:
    """HF generate(assistant_model=...) (or prompt_lookup_num_tokens for a prompt-lookup draft); returns new tokens."""
    target = hf_model(target)  # HF generate runs the models as loaded, never a LeanLlama
    device = next(target.parameters()).device
    x = torch.tensor([ids], device=device)
    if eos_token_id is None:
        kwargs = dict(max_new_tokens=max_new_tokens, min_new_tokens=max_new_tokens, pad_token_id=0)
    else:
        kwargs = dict(max_new_tokens=max_new_tokens, eos_token_id=eos_token_id, pad_token_id=eos_token_id)
    if sampling.greedy:
        kwargs.update(do_sample=False)
    else:
        kwargs.update(do_sample=True, temperature=sampling.temperature, top_k=sampling.top_k or 0, top_p=sampling.top_p or 1.0)
    lookup = hf_lookup_part(draft)
    if lookup is not None:
        kwargs.update(prompt_lookup_num_tokens=gamma, max_matching_ngram_size=lookup.max_ngram)
    else:
        assistant = hf_model(draft.model)
        assistant.generation_config.num_assistant_tokens = gamma
        assistant.generation_config.num_assistant_tokens_schedule = "constant"
        assistant.generation_config.assistant_confidence_threshold = 0.0
        kwargs.update(assistant_model=assistant)
    torch.manual_seed(seed)  # HF samples from the global RNG
    out = target.generate(x, **kwargs)
    return out.shape[1] - len(ids)


def bench_pair(
    name: str, target, draft: ModelDraft | PromptLookupDraft, prompts: Sequence[Sequence[int]], max_new_tokens: int = 64,
    gamma: int | str = 4, sampling: Sampling = DEFAULT_SAMPLING, seed: int = 0, vocab_size: int | None = None, hf: bool = True,
    progress: bool = True, eos_token_id: int | None = None, decode_options: dict | None = None, k_table: bool = False,
    verify: str = "token",
) -> dict:
    """Tokens/s of plain, speculative and HF assisted decoding (batch 1, each prompt), alpha_i, c, k, predicted speedups.

    ``gamma="auto"``: ``choose_gamma`` on the first prompt. ``eos_token_id``: each run stops there (all
    three decoders alike). ``decode_options``: extra keyword arguments for ``speculative_generate``
    (passed through unchanged; the place to switch on decoder options such as an early-stop threshold).
    ``k_table``: also measure k(gamma), c and o_round for gamma 1..8. ``verify``: "token" (accept/reject
    position by position) or "block" (``block_verify``, Sun et al. 2024) in speculative decoding; HF
    assisted generation always verifies token by token.
    """
    device = next(target.parameters()).device
    prompts = [list(p) for p in prompts]
    hf = hf and has_hf_counterpart(draft)
    options = dict(decode_options or {})  # decoder options, passed through to speculative_generate only
    step = verifier(verify)
    if step is not accept_reject:
        options["accept_reject"] = step
    context = round(sum(map(len, prompts)) / len(prompts)) + max_new_tokens // 2  # the cache length mid-run
    calibration = None
    if gamma == "auto":
        gamma, calibration = choose_gamma(target, draft, prompts[0], sampling, context, seed=seed, vocab_size=vocab_size,
                                          decode_options=options)
    if not isinstance(gamma, int) or gamma < 1:
        raise ValueError(f"gamma must be an int >= 1 or 'auto', got {gamma!r}")
    # warm-up: allocator, kernels, lazy inits
    plain_generate(target, prompts[:1], 4, sampling, seed, vocab_size=vocab_size)
    speculative_generate(target, draft, prompts[:1], 4, gamma, sampling, seed, vocab_size=vocab_size, **options)
    totals = {"plain": [0, 0.0], "speculative": [0, 0.0], "hf_assisted": [0, 0.0]}
    rounds = accepted = 0
    alpha_sum = alpha_n = 0.0
    reached = [0] * gamma
    acc_pos = [0] * gamma
    hist, widths, drafted, steps = [0] * (gamma + 1), [0] * (gamma + 1), 0, 0
    for i, ids in enumerate(tqdm(prompts, desc=f"bench {name}", disable=not progress)):
        g, t = _timed(lambda ids=ids, i=i: plain_generate(target, [ids], max_new_tokens, sampling, seed + i,
                                                          eos_token_id=eos_token_id, vocab_size=vocab_size))
        totals["plain"][0] += len(g.tokens[0])
        totals["plain"][1] += t
        s, t = _timed(lambda ids=ids, i=i: speculative_generate(target, draft, [ids], max_new_tokens, gamma, sampling, seed + i,
                                                                eos_token_id=eos_token_id, vocab_size=vocab_size, **options))
        totals["speculative"][0] += len(s.tokens[0])
        totals["speculative"][1] += t
        rounds += s.rounds
        accepted += sum(n * c for n, c in enumerate(s.accepted_hist))
        alpha_sum += s.alpha_sum
        alpha_n += s.alpha_count
        reached = [a + b for a, b in zip(reached, s.position_reached, strict=True)]
        acc_pos = [a + b for a, b in zip(acc_pos, s.position_accepted, strict=True)]
        hist = [a + b for a, b in zip(hist, s.accepted_hist + [0] * (gamma + 1 - len(s.accepted_hist)), strict=True)]
        widths = [a + b for a, b in zip(widths, s.width_hist + [0] * (gamma + 1 - len(s.width_hist)), strict=True)]
        drafted += s.drafted
        steps += s.draft_steps
        if hf:
            n, t = _timed(lambda ids=ids, i=i: _hf_assisted(target, draft, ids, max_new_tokens, gamma, sampling, seed + i,
                                                            eos_token_id))
            totals["hf_assisted"][0] += n
            totals["hf_assisted"][1] += t
    # None where a decoder did not run (HF without a counterpart of the draft, or hf=False): JSON null
    rate = {k: (n / t if t else None) for k, (n, t) in totals.items()}
    # costs, measured apart from the timed runs, with the cache at the workload's mid-run length
    gammas = GAMMAS if k_table else (gamma,)
    # every width a round verified (an adaptive draft's rounds verify fewer than gamma drafts)
    verified = {g for g, n in enumerate(widths) if n and g}
    costs = measure_costs(target, draft, prompts[0], sorted(set(gammas) | {gamma} | verified), sampling, context, verify=step)
    prefill = prefill_seconds(target, None, prompts) / costs.t1
    draft_prefill = prefill_seconds(None, draft, prompts) / costs.t1 if isinstance(draft, ModelDraft) else 0.0
    by_position = _acceptance(reached, acc_pos)
    # the model: continuation rates a_i (stops count as rejections) and the mean costs of the rounds as run;
    # for a draft that always proposes gamma tokens, a_i = alpha_i, k = k(gamma), c = c(gamma)
    alphas = continuation_rates(hist, gamma)
    # a model draft pays per forward pass; a draft without a model (prompt lookup) one search per round
    per_round = (steps / rounds if isinstance(draft, ModelDraft) else gamma) if rounds else 0.0
    mean = round_costs(costs, widths, per_round, gamma)
    c, k, o_round = mean["c_per_position"], mean["k"], mean["o_round"]
    tokens = expected_tokens_by_position(alphas, gamma)
    n_new = totals["plain"][0] / len(prompts)  # new tokens per prompt (fewer than max_new_tokens where eos came first)
    alpha = alpha_sum / alpha_n if alpha_n else float("nan")
    t_target_g = costs.passes[gamma + 1]
    return {
        "pair": name,
        "device": str(device),
        "dtype": str(next(target.parameters()).dtype).replace("torch.", ""),
        "threads": torch.get_num_threads(),
        "gamma": gamma,
        "gamma_calibration": calibration,
        "decode_options": {k: v for k, v in options.items() if k != "accept_reject"},
        "verify": verify,
        "sampling": {"temperature": sampling.temperature, "top_k": sampling.top_k, "top_p": sampling.top_p},
        "prompts": len(prompts),
        "max_new_tokens": max_new_tokens,
        "new_tokens": {k: n for k, (n, _) in totals.items()},
        "seconds": {k: t for k, (_, t) in totals.items()},
        "tokens_per_s": rate,
        "alpha": alpha,
        "acceptance_by_position": by_position,
        "continuation_by_position": alphas,
        "rounds_by_width": widths,
        "drafts_per_round": drafted / rounds if rounds else None,
        "cost_ratio_c_per_draft": costs.c(gamma),
        "k_gamma": costs.k(gamma),
        "mean_tokens_per_round": (accepted + rounds) / rounds if rounds else None,
        "predicted_tokens_per_round": tokens,
        "cost_ratio_c": c,
        "k": k,
        "o_round": o_round,
        "o_plain": costs.o_plain,
        "prefill_units": {"target": prefill / len(prompts), "draft": draft_prefill / len(prompts)},
        "costs": costs.to_json(gammas),
        "target_forward_s": {"1_token": costs.t1, f"{gamma + 1}_tokens": t_target_g, "ratio": t_target_g / costs.t1},
        "predicted_speedup_k1": cost_model_speedup(alphas, gamma, c),
        "predicted_speedup_asymptotic": cost_model_speedup(alphas, gamma, c, k, o_round, costs.o_plain),
        # the workload as run: prefill P, then n new tokens per prompt
        "predicted_speedup": cost_model_speedup(alphas, gamma, c, k, o_round, costs.o_plain, n_new,
                                                prefill / len(prompts), draft_prefill / len(prompts)),
        "measured_speedup_vs_plain": rate["speculative"] / rate["plain"],
        "speedup_vs_hf_assisted": rate["speculative"] / rate["hf_assisted"] if hf else None,
    }
