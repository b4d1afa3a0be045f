"""The costs of the speedup model, measured on this machine: t_1, k(gamma), c, o_round, o_plain, prefill.

Notation: p = target law, q = draft law, gamma = draft tokens per round. Every cost is measured apart
from the timed runs, with the KV cache at the workload's length (``workload_context``), one ``Stopwatch``
reading every time, in units of t_1 = one cached target pass over 1 token:

    c          = (one draft ``propose`` of gamma tokens + its rollback) / (gamma t_1): forwards, warps, sampling
    k(gamma)   = (target pass over gamma + 1 tokens) / t_1, timed right after a draft proposal as in a round
                 (for small models the draft's work evicts the target's weights from the CPU caches)
    o_round    = (warp of the gamma + 1 target laws, accept/reject, ``round_bookkeeping.read_round`` with its
                 host transfer, cache rollback) / t_1
    o_plain    = (warp of one law, sampling, host transfer) / t_1    (a plain step outside its pass)
    P, P_d     = prefilling one prompt into the target, into the draft's cache, / t_1

t_1 is timed as plain decoding runs it (a 1-token pass right after another) in the same repeats as the
draft's proposal and the verify pass; k(gamma) and c are medians of per-repeat ratios to that repeat's
t_1, so a change of machine speed between repeats cancels instead of moving every cost at once. The
target alone gives ``k_alone``, for comparison. The result is a ``measured_costs.Costs``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from statistics import median

import torch

from specmath.lm.cache import RowCache
from specmath.lm.decode_options import DecodeOptions
from specmath.lm.drafts import PromptLookupDraft, Proposal, draft_for
from specmath.lm.generation import Draws, Generation
from specmath.lm.measured_costs import Costs
from specmath.lm.round_bookkeeping import count_round, read_round
from specmath.lm.static_cache import cache_class_for
from specmath.lm.stopwatch import Stopwatch, device_of
from specmath.lm.warps import warped_probs
from specmath.sampling_options import SamplingOptions
from specmath.validation import check_integer

__all__ = ["GAMMAS", "measure_costs", "forward_cost", "prefill_seconds", "workload_context"]

#: the gammas ``--k-table`` and ``--gamma auto`` consider
GAMMAS = tuple(range(1, 9))
#: a cost is the median of at least ``repeats`` timings, more while they add up to less than this
MIN_SECONDS = 1.0


def workload_context(prompts: Sequence[Sequence[int]], max_new_tokens: int) -> int:
    """The KV cache length in the middle of a run: the mean prompt length plus half the new tokens."""
    return round(sum(map(len, prompts)) / len(prompts)) + max_new_tokens // 2


def _tiled(prompt: Sequence[int], length: int | None) -> list[int]:
    """``prompt`` repeated (or cut) to ``length`` tokens (None: as it is): a KV cache as long as the workload's."""
    prompt = list(prompt)
    return (prompt * (length // len(prompt) + 1))[:length] if length else prompt


def _repeats(repeats: int, watch: Stopwatch, min_seconds: float | None = None) -> Iterator[int]:
    """Repeat indices 0, 1, ...: at least ``repeats`` + 1 (index 0 warms kernels and the allocator and is
    not kept), more (up to 8x) while the laps add up to under ``min_seconds`` (None: MIN_SECONDS): a fast
    model's millisecond passes need many samples for a stable median on a shared machine."""
    least = MIN_SECONDS if min_seconds is None else min_seconds
    r = 0
    while r <= repeats or (watch.total < least and r <= 8 * repeats):
        yield r
        r += 1


@torch.inference_mode()
def _pass_times(model: torch.nn.Module, context: list[int], sizes: Sequence[int], repeats: int,
                min_seconds: float | None = None, cache_class=RowCache) -> tuple[dict[int, float], torch.Tensor]:
    """Median seconds of a cached pass over n tokens for each n in sizes, and the logits of a pass over max(sizes).

    The sizes are interleaved within each repeat, so a change of machine load hits every size alike.
    """
    cache = cache_class(model, 1)
    cache.prefill([context[:-1]])
    base = cache.lengths[0]
    watch = Stopwatch(cache.device)
    passes: dict[int, list[float]] = {n: [] for n in sizes}
    logits = None
    for r in _repeats(repeats, watch, min_seconds):
        for n in sizes:
            watch.restart()
            out = cache.feed([_tiled(context[-n:], n)])
            seconds = watch.lap("pass")
            cache.keep([base])
            watch.lap("rollback")
            if r:
                passes[n].append(seconds)
            if n == max(sizes):
                logits = out
    return {n: median(t) for n, t in passes.items()}, logits


def _median_seconds(work: Callable[[], object], repeats: int, device: torch.device) -> float:
    """Median seconds of ``work()`` over ``repeats`` runs, after one run that warms kernels and the allocator."""
    watch = Stopwatch(device)
    times = []
    for _ in range(repeats + 1):
        watch.restart()
        work()
        times.append(watch.lap("work"))
    return median(times[1:])


@torch.inference_mode()
def _round_times(target: torch.nn.Module, draft, context: list[int], gammas: Sequence[int], sampling: SamplingOptions,
                 repeats: int, min_seconds: float | None = None, cache_class=RowCache) -> tuple[dict, dict, dict, float]:
    """A round's model work timed in the order a round runs it, for each gamma, in units of a plain pass.

    The draft proposes gamma tokens (``propose``, host read, ``commit`` of a round that kept nothing),
    then the target passes over the gamma + 1 tokens, then its cache is rolled back. Each repeat also
    times t_1 as plain decoding runs it (the second of two 1-token passes, the target's data warm), and
    divides the draft and verify times by *that repeat's* t_1 before the median is taken.
    Returns (draft / t_1 by gamma, verify pass / t_1 by gamma + 1, rollback seconds by gamma + 1, median t_1).
    """
    cache = cache_class(target, 1)
    cache.prefill([context[:-1]])
    base = cache.lengths[0]
    draws = Draws.of(torch.Generator(device=cache.device).manual_seed(0), 1)
    draft.start([context])
    watch = Stopwatch(cache.device)
    drafting = {g: [] for g in gammas}
    verifying = {g + 1: [] for g in gammas}
    rollbacks = {g + 1: [] for g in gammas}
    plain = []
    for r in _repeats(repeats, watch, min_seconds):
        times = {}
        for g in gammas:
            watch.restart()
            proposal = draft.propose([context], g, sampling, draws)
            proposed = proposal.tokens[0, : proposal.lengths[0]].tolist()  # the decoder reads the drafts on the host
            draft.commit([len(context) - 1])
            d = watch.lap("draft")
            cache.feed([[context[-1], *proposed]])
            v = watch.lap("verify")
            cache.keep([base])
            times[g] = (d, v, watch.lap("rollback"))
        for _ in range(2):
            watch.restart()
            cache.feed([[context[-1]]])
            single = watch.lap("plain")
            cache.keep([base])
        if r:
            plain.append(single)
            for g, (d, v, b) in times.items():
                drafting[g].append(d / single)
                verifying[g + 1].append(v / single)
                rollbacks[g + 1].append(b)
    return ({g: median(t) for g, t in drafting.items()}, {n: median(t) for n, t in verifying.items()},
            {n: median(t) for n, t in rollbacks.items()}, median(plain))


@torch.inference_mode()
def _round_overhead_seconds(logits: torch.Tensor, gamma: int, one_hot: bool, sampling: SamplingOptions, repeats: int,
                            accept_reject) -> float:
    """Median seconds of what a round does besides the model passes, on real target logits (1, >= gamma + 1, V).

    The same calls as ``speculative_generate``'s round: warp the gamma + 1 target laws, accept/reject,
    ``read_round`` (the counters and the one host transfer) and ``count_round`` (the cache rollback is
    timed with the passes).
    """
    z = logits[:, : gamma + 1]
    draws = Draws.of(torch.Generator(device=z.device).manual_seed(0), 1)
    drafts = z[:, :gamma].argmax(-1)  # (1, gamma) realistic proposals: the target's own favourites
    q = None if one_hot else warped_probs(z[:, :gamma], sampling)
    proposal = Proposal(drafts, [gamma], torch.tensor([gamma], device=z.device), q)
    counters = Generation([[]])

    def round_work() -> None:
        p = warped_probs(z, sampling)  # (1, gamma + 1, V)
        count_round(counters, read_round(p, proposal, accept_reject(p, q, drafts, draws), z), proposal.lengths, 0)

    return _median_seconds(round_work, repeats, z.device)


@torch.inference_mode()
def _plain_overhead_seconds(logits: torch.Tensor, sampling: SamplingOptions, repeats: int) -> float:
    """Median seconds of a plain step besides the pass: pick the last logits, warp, sample, read the token."""
    generator = torch.Generator(device=logits.device).manual_seed(0)

    def step_work() -> None:
        last = torch.tensor([logits.shape[1] - 1], device=logits.device)
        p = warped_probs(logits[torch.arange(1, device=logits.device), last], sampling)  # (1, V)
        torch.multinomial(p, 1, generator=generator).squeeze(-1).tolist()

    return _median_seconds(step_work, repeats, logits.device)


def measure_costs(target: torch.nn.Module, draft, prompt: Sequence[int], gammas: Sequence[int], *,
                  options: DecodeOptions = DecodeOptions(), context: int | None = None, repeats: int = 7,
                  min_seconds: float | None = None) -> Costs:
    """Measure t_1, the target pass over gamma + 1 tokens, the draft's round, and the overheads, for each gamma.

    ``prompt`` is tiled to ``context`` tokens (``workload_context``). From ``options``: ``sampling``, the
    warp every law gets, ``verify``, the round's accept/reject step timed in o_round (gamma comes
    from ``gammas``), and ``compile``, the caches and steps the passes run (``static_cache``).
    ``min_seconds``: each timing loop repeats until its laps add up to this (None: MIN_SECONDS).
    """
    check_integer(repeats, "repeats", min_value=1)
    sampling, accept_reject = options.sampling, options.accept_reject
    ctx = _tiled(prompt, context)
    sizes = sorted({1} | {g + 1 for g in gammas})
    cache_class = cache_class_for(options)
    draft = draft_for(draft, options)
    alone, logits = _pass_times(target, ctx, sizes, repeats, min_seconds, cache_class)
    draft_ratio, verify_ratio, rollback, t1 = _round_times(target, draft, ctx, sorted(gammas), sampling, repeats,
                                                           min_seconds, cache_class)
    one_hot = isinstance(draft, PromptLookupDraft)  # q None; model and table drafts carry a dense q
    # sub-millisecond: more samples
    round_extra = {g: _round_overhead_seconds(logits, g, one_hot, sampling, 4 * repeats, accept_reject) for g in gammas}
    plain_extra = _plain_overhead_seconds(logits[:, :1], sampling, 4 * repeats)
    # seconds at the median t_1, from the per-repeat ratios (so k(gamma) and c are those ratios' medians)
    passes = {n: ratio * t1 for n, ratio in verify_ratio.items()}
    draft_round = {g: ratio * t1 for g, ratio in draft_ratio.items()}
    return Costs(t1, {1: t1, **passes}, rollback, draft_round, round_extra, plain_extra, len(ctx), alone)


def forward_cost(model: torch.nn.Module, prompt: Sequence[int], n_tokens: int, *, repeats: int = 10,
                 context: int | None = None) -> float:
    """Seconds for one cached forward of ``n_tokens`` new tokens after ``prompt`` (tiled to ``context`` tokens)."""
    check_integer(n_tokens, "n_tokens", min_value=1)
    passes, _ = _pass_times(model, _tiled(prompt, context), [n_tokens], check_integer(repeats, "repeats", min_value=1))
    return passes[n_tokens]


@torch.inference_mode()
def prefill_seconds(prompts: Sequence[Sequence[int]], *, target: torch.nn.Module | None = None, draft=None,
                    options: DecodeOptions = DecodeOptions()) -> float:
    """Seconds to prefill every prompt (all but its last token) into ``target``, or to ``start`` the ``draft``.

    ``options.compile``: the static cache the compiled decoders prefill (``static_cache``)."""
    if (target is None) == (draft is None):
        raise TypeError("prefill_seconds times either the target or the draft: give exactly one")
    cache_class = cache_class_for(options)
    draft = None if draft is None else draft_for(draft, options)
    model = target if target is not None else getattr(draft, "model", None)  # a draft without a model runs on the host
    watch = Stopwatch(device_of(model) if model is not None else None)
    for ids in prompts:
        watch.restart()
        if target is None:
            draft.start([list(ids)])
        elif len(ids) > 1:
            cache_class(target, 1).prefill([list(ids)[:-1]])
        watch.lap("prefill")
    return watch.total
