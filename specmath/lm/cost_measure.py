"""The costs of the speedup model, measured on this machine: t_1, k(gamma), c, o_round, o_plain, prefill.

Notation: p = target law, q = draft law, gamma = draft tokens per round. Every cost is measured apart
from the timed runs, with the KV cache at the workload's length (``workload_context``), one ``Stopwatch``
reading every time, in units of t_1 = one cached target pass over 1 token:

    c          = (one draft ``propose`` of gamma tokens + its rollback) / (gamma t_1): forwards, warps, sampling
    k(gamma)   = (target pass over gamma + 1 tokens) / t_1, timed right after a draft proposal as in a round
                 (for small models the draft's work evicts the target's weights from the CPU caches)
    o_round    = (``speculative_decode.verify_round``: warp of the gamma + 1 target laws, accept/reject,
                 the round's counters with its host transfer, one compiled graph where the decoder compiles
                 (``round_graph``); then the cache rollback) / t_1
    o_plain    = ``plain_decode.plain_step`` (warp of one law, sampling, host transfer; compiled likewise) / t_1
    P, P_d     = prefilling one prompt into the target, into the draft's cache, / t_1

t_1 is timed as plain decoding runs it (1-token passes one after another) in the same repeats as the
rounds; each part of a round and of a plain step is timed right after the pass before it, as the
decoders run them, by the functions they call, and only once rounds, or plain steps, have run back to back
(one round; several plain steps, ``SETTLE``, ``SETTLE_SECONDS``): a compiled plain step that follows other
graphs runs slower for several calls. On a 2-core AMD EPYC (family 25, 1 thread, 2026-12-07, ``python benchmarks/settling.py``,
three runs), the bundled target's compiled plain step (its pass and ``plain_step``) took 1.8-2.2 ms right
after a round, 1.7-2.0 ms as the second call and 1.2-1.5 ms from about the eighth call on, while rounds run
back to back showed no such trend (3.7-4.8 ms); a model that timed the second plain step after a round
predicted plain decoding 15-20% slower than the bench measured it. k(gamma), c, o_round and o_plain are medians of
per-repeat ratios to that repeat's t_1, so a change of machine speed between repeats cancels instead
of moving every cost at once. The target alone gives ``k_alone``, for comparison. The result is a
``measured_costs.Costs``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from statistics import median

import torch

from specmath.lm.cache import RowCache
from specmath.lm.decode_options import DecodeOptions
from specmath.lm.drafts import draft_for
from specmath.lm.generation import Draws
from specmath.lm.measured_costs import Costs
from specmath.lm.plain_decode import plain_step
from specmath.lm.speculative_decode import verify_round
from specmath.lm.static_cache import cache_class_for
from specmath.lm.stopwatch import Stopwatch, device_of
from specmath.validation import check_integer

__all__ = ["GAMMAS", "TimedCalls", "measure_costs", "forward_cost", "prefill_seconds", "workload_context"]

#: the gammas ``--k-table`` and ``--gamma auto`` consider
GAMMAS = tuple(range(1, 9))
#: a cost is the median of at least ``repeats`` timings, more while they add up to less than this
MIN_SECONDS = 1.0
#: plain steps run back to back before the ones that are timed, at most ``SETTLE`` or for ``SETTLE_SECONDS`` (a slow
#: model's passes settle within one call, a fast one's within several): plain decoding's steady state. A round
#: settles in one (``benchmarks/settling.py``: rounds run back to back keep one time from the first on)
SETTLE, SETTLE_SECONDS = 16, 0.02
#: rounds (plain steps) timed after those, back to back, in each repeat; their median is the repeat's timing
TIMED = 3


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
                min_seconds: float | None = None, cache_class=RowCache) -> dict[int, float]:
    """Median seconds of a cached pass over n tokens for each n in sizes, the model alone.

    The sizes are interleaved within each repeat, so a change of machine load hits every size alike.
    """
    cache = cache_class(model, 1)
    cache.prefill([context[:-1]])
    base = cache.lengths[0]
    watch = Stopwatch(cache.device)
    passes: dict[int, list[float]] = {n: [] for n in sizes}
    for r in _repeats(repeats, watch, min_seconds):
        for n in sizes:
            watch.restart()
            cache.feed([_tiled(context[-n:], n)])
            seconds = watch.lap("pass")
            cache.keep([base])
            watch.lap("rollback")
            if r:
                passes[n].append(seconds)
    return {n: median(t) for n, t in passes.items()}


def _settled(run: Callable[[], tuple[float, ...]], settle: int | None = None) -> tuple[float, ...]:
    """The median over ``TIMED`` calls of ``run`` (one round or one plain step; it returns its parts' seconds),
    made after ``settle`` (None: ``SETTLE``) calls back to back, fewer where those take ``SETTLE_SECONDS``, which
    are not kept."""
    spent = 0.0
    for _ in range(SETTLE if settle is None else settle):
        spent += sum(run())
        if spent >= SETTLE_SECONDS:
            break
    return tuple(median(t) for t in zip(*(run() for _ in range(TIMED)), strict=True))


@dataclass(frozen=True)
class _RoundRatios:
    """``_round_times``' medians of per-repeat ratios to that repeat's t_1, and the median t_1 (seconds)."""

    draft: dict[int, float]  # gamma -> propose + commit
    verify: dict[int, float]  # gamma + 1 -> the target's pass over gamma + 1 tokens
    extra: dict[int, float]  # gamma -> ``verify_round`` on that pass's logits
    rollback: dict[int, float]  # gamma + 1 -> the target cache's rollback
    plain_extra: float  # ``plain_step`` after a 1-token pass
    t1: float


class TimedCalls:
    """One row's rounds and plain steps, run as the decoders run them and timed by parts; each call leaves both
    caches as it found them, so calls can follow each other at one cache length.

    Set up as a decoder is mid-run: ``prompt`` tiled to ``context`` tokens (None: as it is), the target's cache
    holding all but its last token, which is pending, the draft started on all of it, one generator. Every
    timing is read off ``watch``.
    """

    @torch.inference_mode()
    def __init__(self, target: torch.nn.Module, draft, prompt: Sequence[int], options: DecodeOptions,
                 context: int | None = None, cache_class=RowCache) -> None:
        self.context = _tiled(prompt, context)
        self.draft, self.options = draft, options
        self.cache = cache_class(target, 1)
        self.cache.prefill([self.context[:-1]])
        self.base = self.cache.lengths[0]
        self.draws = Draws.of(torch.Generator(device=self.cache.device).manual_seed(0), 1)
        draft.start([self.context])
        self.last = torch.tensor([[self.context[-1]]], device=self.cache.device)  # (1, 1) the pending token
        self.watch = Stopwatch(self.cache.device)

    @torch.inference_mode()
    def round(self, gamma: int) -> tuple[float, float, float, float]:
        """Seconds of (draft, verify, extra, rollback) in one round: the draft proposes gamma tokens; the target
        passes over [pending token, drafts] (``feed_block``); ``verify_round`` warps the gamma + 1 laws,
        accepts/rejects and reads the round on the host; the target's cache rolls back and the draft's
        ``commit`` keeps none of the round (counted in draft)."""
        watch, sampling = self.watch, self.options.sampling
        watch.restart()
        proposal = self.draft.propose([self.context], gamma, sampling, self.draws)
        d = watch.lap("draft")
        full = min(proposal.lengths) == proposal.width
        logits = self.cache.feed_block(torch.cat([self.last, proposal.tokens], dim=1),
                                       None if full else [1 + n for n in proposal.lengths])
        v = watch.lap("verify")
        verify_round(logits, proposal, sampling, self.options.accept_reject, self.draws, self.options.compile)
        e = watch.lap("extra")
        self.cache.keep([self.base])
        b = watch.lap("rollback")
        self.draft.commit([len(self.context) - 1])
        return d + watch.lap("draft"), v, e, b

    @torch.inference_mode()
    def plain_step(self) -> tuple[float, float]:
        """Seconds of (pass, step) in one plain step: a 1-token pass, then ``plain_step`` on its law (the rollback
        after it is not timed)."""
        watch = self.watch
        watch.restart()
        step_logits = self.cache.feed_block(self.last)[:, -1]
        single = watch.lap("plain")
        plain_step(step_logits, self.options.sampling, self.draws, self.options.compile)
        extra = watch.lap("plain_extra")
        self.cache.keep([self.base])
        return single, extra


@torch.inference_mode()
def _round_times(target: torch.nn.Module, draft, context: list[int], gammas: Sequence[int], options: DecodeOptions,
                 repeats: int, min_seconds: float | None = None, cache_class=RowCache) -> _RoundRatios:
    """Rounds and plain steps timed as the decoders run them (``TimedCalls``), each part in units of that
    repeat's t_1.

    For each gamma, 1 + ``TIMED`` rounds back to back; then up to ``SETTLE`` + ``TIMED`` plain steps. Only the
    last ``TIMED`` of each run are kept (their median, ``_settled``): a decoder runs its rounds, or its plain
    steps, one after another, and a compiled plain step that follows other work runs slower for several
    calls. The round's own work is timed on that pass's logits, right after it, because a small model's
    pass leaves the CPU caches full of its weights and the warps pay for it (timed apart on warm data, the
    same work comes out well below what the decoder's rounds spend). Each part is divided by *that
    repeat's* t_1 before the median is taken, so a change of machine speed between repeats cancels.
    """
    calls = TimedCalls(target, draft, context, options, cache_class=cache_class)
    parts = ("draft", "verify", "extra", "rollback")
    ratios: dict[str, dict[int, list[float]]] = {part: {} for part in parts}
    plain, plain_extra = [], []
    for r in _repeats(repeats, calls.watch, min_seconds):
        times = {g: _settled(partial(calls.round, g), settle=1) for g in gammas}
        single, extra = _settled(calls.plain_step)
        if r:
            plain.append(single)
            plain_extra.append(extra / single)
            for g, seconds in times.items():
                for part, key, t in zip(parts, (g, g + 1, g, g + 1), seconds, strict=True):
                    ratios[part].setdefault(key, []).append(t / single)
    t1 = median(plain)
    return _RoundRatios(*({key: median(v) for key, v in ratios[part].items()} for part in parts),
                        plain_extra=median(plain_extra), t1=t1)


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
    ctx = _tiled(prompt, context)
    sizes = sorted({1} | {g + 1 for g in gammas})
    cache_class = cache_class_for(options)
    draft = draft_for(draft, options)
    alone = _pass_times(target, ctx, sizes, repeats, min_seconds, cache_class)
    ratios = _round_times(target, draft, ctx, sorted(gammas), options, repeats, min_seconds, cache_class)
    t1 = ratios.t1

    def seconds(by_key: dict[int, float]) -> dict[int, float]:  # at the median t_1, from the per-repeat ratios
        return {key: ratio * t1 for key, ratio in by_key.items()}

    return Costs(t1, {1: t1, **seconds(ratios.verify)}, seconds(ratios.rollback), seconds(ratios.draft),
                 seconds(ratios.extra), ratios.plain_extra * t1, len(ctx), alone)


def forward_cost(model: torch.nn.Module, prompt: Sequence[int], n_tokens: int, *, repeats: int = 10,
                 context: int | None = None) -> float:
    """Seconds for one cached forward of ``n_tokens`` new tokens after ``prompt`` (tiled to ``context`` tokens)."""
    check_integer(n_tokens, "n_tokens", min_value=1)
    passes = _pass_times(model, _tiled(prompt, context), [n_tokens], check_integer(repeats, "repeats", min_value=1))
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
