"""A bench run's result (``BenchResult``, the one place its JSON fields are documented), and its parts.

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)),
t_1 = one cached target pass over 1 token (the unit of every cost), a_i = the continuation rate of
draft position i (``bench.continuation_rates``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from statistics import median
from typing import Generic, TypeVar

from specmath.lm.cost_measure import GAMMAS
from specmath.lm.decode_options import DecodeOptions
from specmath.lm.measured_costs import Costs
from specmath.lm.roofline import Roofline
from specmath.sampling_options import SamplingOptions
from specmath.theory import RoundCosts, cost_model_speedup, expected_tokens_by_position

__all__ = ["PerDecoder", "Calibration", "RoundProfile", "RepeatTimes", "BenchResult", "load_average", "cpu_burners"]

T = TypeVar("T")


@dataclass(frozen=True)
class PerDecoder(Generic[T]):
    """One value for each decoder of a bench run (None where HF assisted generation did not run)."""

    plain: T
    speculative: T
    hf_assisted: T

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Calibration:
    """``--gamma auto``: the continuation rates of one run at gamma = 8, the costs for gamma 1..8, the model's choice."""

    gamma: int  # the gamma with the largest predicted speedup
    continuation: list[float]  # a_1..a_8
    costs: Costs  # measured for GAMMAS
    scores: dict[int, float]  # gamma -> predicted speedup (no prefill, n -> infinity)

    def to_json(self) -> dict:
        """acceptance_by_position (a_1..a_8), predicted_speedup by gamma, then ``Costs.to_json`` for gamma 1..8."""
        return {"acceptance_by_position": self.continuation, "predicted_speedup": self.scores, **self.costs.to_json(GAMMAS)}


@dataclass(frozen=True)
class RoundProfile:
    """Seconds per part of ``speculative_generate``'s rounds (``PROFILE_PARTS``), summed over the prompts."""

    rounds: int
    seconds: dict[str, float]

    def to_json(self) -> dict:
        """rounds; prefill_ms (all prompts); ms_per_round by part (draft, target, accept_reject, cache, other)."""
        per_round = {part: 1e3 * s / max(self.rounds, 1) for part, s in self.seconds.items() if part not in ("prefill", "total")}
        return {"rounds": self.rounds, "prefill_ms": 1e3 * self.seconds["prefill"], "ms_per_round": per_round}


@contextmanager
def cpu_burners(n: int, settle_s: float = 5.0) -> Iterator[list[subprocess.Popen]]:
    """``n`` CPU-bound processes (``while True: pass``) beside the block, as other jobs on a busy machine are,
    killed after it; the block starts ``settle_s`` seconds after them, so that the load average sees them."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        if burners:
            time.sleep(settle_s)
        yield burners
    finally:
        for process in burners:
            process.kill()
            process.wait()


def load_average() -> float | None:
    """The machine's 1-minute load average (runnable processes), None where the OS does not tell."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):  # pragma: no cover - not on Linux / macOS
        return None


@dataclass(frozen=True)
class RepeatTimes:
    """One interleaved repeat of the bench: seconds per decoder over all prompts, the model's prediction, the load."""

    plain: float
    speculative: float
    hf_assisted: float
    predicted_speedup: float = float("nan")  # from the costs measured in this repeat
    load_average: tuple[float | None, float | None] = (None, None)  # 1-minute load average before and after
    bandwidth: float = float("nan")  # bytes/s of the copy loop, right after the repeat (``roofline.memory_bandwidth``)

    @property
    def measured_speedup(self) -> float:
        """Speculative over plain tokens/s in this repeat (the same tokens: plain seconds / speculative seconds)."""
        return self.plain / self.speculative

    def to_json(self) -> dict:
        return {"seconds": {"plain": self.plain, "speculative": self.speculative, "hf_assisted": self.hf_assisted},
                "measured_speedup": self.measured_speedup, "predicted_speedup": self.predicted_speedup,
                "load_average": list(self.load_average), "bandwidth_GB_per_s": self.bandwidth / 1e9}


def _spread(values: list[float]) -> dict:
    """median, min, max and (max - min) / median of a few repeats' ratios."""
    mid = median(values)
    return {"median": mid, "min": min(values), "max": max(values), "relative_range": (max(values) - min(values)) / mid}


@dataclass(frozen=True)
class BenchResult:
    """Plain, speculative and HF assisted decoding of one pair on the same prompts and seeds, and the model.

    ``to_json`` writes these fields, in this order (``specmath bench --json`` prints a list of them):

    * ``pair``, ``device``, ``dtype``, ``threads``: what ran where (torch CPU threads);
    * ``gamma``: draft tokens per round (chosen by the calibration for ``--gamma auto``);
      ``gamma_calibration``: that calibration (``Calibration.to_json``), or null;
    * ``decode_options``: the decoder options that differ from their defaults and have no key of their own
      (``DecodeOptions.to_json``: the draft's confidence stop, a seed other than 0);
      ``verify``: "token" or "block"; ``sampling``: temperature, top_k, top_p;
    * ``prompts``: how many prompts; ``max_new_tokens``: the most new tokens per prompt;
    * ``new_tokens``, ``seconds``, ``tokens_per_s``: per decoder (plain, speculative, hf_assisted), tokens
      emitted, seconds by ``clock`` and their ratio, summed over the prompts (HF not run: 0, 0.0 and null);
    * ``clock``: what the runs and the costs were timed by: "wall", or "cpu" (this process's CPU time,
      ``stopwatch.timed_by``; the warm-up is wall time either way);
    * ``alpha``: the mean over reached draft positions of sum_x min(p(x), q(x));
      ``acceptance_by_position``: alpha_i = accepted / reached at position i (null where never reached);
      ``continuation_by_position``: a_i, which counts a position the draft did not propose as rejected;
    * ``rounds_by_width``: rounds by the number g of drafts they verified, g = 0..gamma;
      ``drafts_per_round``: drafted tokens per round;
    * ``cost_ratio_c_per_draft``, ``k_gamma``: c(gamma) and k(gamma), measured at gamma;
    * ``mean_tokens_per_round``: tokens emitted per round, measured; ``predicted_tokens_per_round``:
      1 + sum_i prod_{j<=i} a_j;
    * ``cost_ratio_c``, ``k``, ``o_round``, ``o_plain``: the model's costs in t_1, for the rounds as they ran
      (``Costs.model_of_rounds``); ``prefill_units``: P (target) and P_d (draft) per prompt, in t_1;
    * ``costs``: ``Costs.to_json`` at gamma; ``target_forward_s``: seconds of the target pass over 1 and
      over gamma + 1 tokens (keys "1_token", "<gamma + 1>_tokens") and their ratio k(gamma);
    * ``predicted_speedup_k1``: the model with k = 1 and no overheads (Leviathan et al.'s premise);
      ``predicted_speedup_asymptotic``: with the measured costs, n -> infinity; ``predicted_speedup``:
      with the measured costs for the workload as run (prefill, then the mean new tokens per prompt);
    * ``measured_speedup_vs_plain``: speculative tokens/s over plain tokens/s; ``speedup_vs_hf_assisted``:
      over HF assisted generation's (null where HF did not run);
    * ``profile`` (only with ``profile=True``): ``RoundProfile.to_json``;
    * ``compile``: whether plain and speculative decoding ran compiled static-cache steps; ``warmup_s``:
      seconds of the untimed warm-up runs (with ``compile``: the compile time, graphs for every width met);
    * ``repeats``: each interleaved repeat (``RepeatTimes.to_json``: seconds, measured and predicted
      speedup, the load average before and after it); ``measured_speedup``, ``predicted_speedup_repeats``:
      median, min, max and relative range of those ratios over the repeats; ``model_error``: median
      measured / median predicted - 1;
    * ``roofline`` (``roofline.Roofline.to_json``): the weight bytes W a pass reads, the bandwidth B the
      copy loop measured (median over the repeats), the floor B / W tokens/s, plain decoding's tokens/s
      and its fraction of the floor.

    ``seconds`` are medians over the repeats and ``new_tokens`` one repeat's (every repeat emits the same
    tokens); ``measured_speedup_vs_plain`` is the median of the repeats' ratios, and the costs, the model
    and ``predicted_speedup`` are those of the repeat whose prediction is the median.
    """

    pair: str
    device: str
    dtype: str
    threads: int
    calibration: Calibration | None
    options: DecodeOptions  # as speculative decoding ran (gamma the calibrated one for --gamma auto), the pair's eos aside
    prompts: int
    max_new_tokens: int
    new_tokens: PerDecoder[int]
    seconds: PerDecoder[float]
    hf_ran: bool
    alpha: float
    acceptance_by_position: list[float | None]
    continuation_by_position: list[float]
    rounds_by_width: list[int]
    drafts_per_round: float | None
    mean_tokens_per_round: float | None
    costs: Costs
    model: RoundCosts  # the rounds as run, prefill per prompt included
    profile: RoundProfile | None = None
    repeats: list[RepeatTimes] | None = None  # the interleaved repeats (None: one run, as the seconds say)
    warmup_seconds: float = 0.0
    clock: str = "wall"  # what the runs and costs were timed by (``stopwatch.CLOCKS``)
    roofline: Roofline | None = None  # plain decoding against the bandwidth floor (medians over the repeats)

    @property
    def gamma(self) -> int:
        """Draft tokens per round."""
        return self.options.gamma

    @property
    def sampling(self) -> SamplingOptions:
        """The warp of p and q, the same for every decoder."""
        return self.options.sampling

    @property
    def tokens_per_s(self) -> PerDecoder[float | None]:
        rate = {name: (n / t if t else None) for (name, n), t in zip(asdict(self.new_tokens).items(),
                                                                   asdict(self.seconds).values(), strict=True)}
        return PerDecoder(**rate)

    @property
    def predicted_tokens_per_round(self) -> float:
        return expected_tokens_by_position(self.continuation_by_position, self.gamma)

    @property
    def new_tokens_per_prompt(self) -> float:
        """n: plain decoding's new tokens per prompt (fewer than max_new_tokens where eos came first)."""
        return self.new_tokens.plain / self.prompts

    @property
    def predicted_speedup_k1(self) -> float:
        return cost_model_speedup(self.continuation_by_position, self.gamma, RoundCosts(self.model.c))

    @property
    def predicted_speedup_asymptotic(self) -> float:
        return cost_model_speedup(self.continuation_by_position, self.gamma, self.model)

    @property
    def predicted_speedup(self) -> float:
        return cost_model_speedup(self.continuation_by_position, self.gamma, self.model, new_tokens=self.new_tokens_per_prompt)

    @property
    def measured_speedup_vs_plain(self) -> float:
        """The median over the repeats of speculative over plain tokens/s (one run: that run's ratio)."""
        if self.repeats:
            return median(r.measured_speedup for r in self.repeats)
        rate = self.tokens_per_s
        return rate.speculative / rate.plain

    @property
    def speedup_vs_hf_assisted(self) -> float | None:
        rate = self.tokens_per_s
        return rate.speculative / rate.hf_assisted if self.hf_ran else None

    def to_json(self) -> dict:
        """The fields of the class docstring, in its order (JSON-ready: dicts, lists, numbers, strings, None)."""
        g, costs = self.gamma, self.costs
        out = {
            "pair": self.pair, "device": self.device, "dtype": self.dtype, "threads": self.threads, "gamma": g,
            "gamma_calibration": None if self.calibration is None else self.calibration.to_json(),
            "decode_options": self.options.to_json(), "verify": self.options.verify, "sampling": {"temperature": float(self.sampling.temperature), "top_k": self.sampling.top_k,
                         "top_p": None if self.sampling.top_p is None else float(self.sampling.top_p)},
            "prompts": self.prompts, "max_new_tokens": self.max_new_tokens,
            "new_tokens": self.new_tokens.to_json(), "seconds": self.seconds.to_json(),
            "tokens_per_s": self.tokens_per_s.to_json(), "clock": self.clock, "alpha": self.alpha,
            "acceptance_by_position": self.acceptance_by_position, "continuation_by_position": self.continuation_by_position,
            "rounds_by_width": self.rounds_by_width, "drafts_per_round": self.drafts_per_round,
            "cost_ratio_c_per_draft": costs.c(g), "k_gamma": costs.k(g),
            "mean_tokens_per_round": self.mean_tokens_per_round, "predicted_tokens_per_round": self.predicted_tokens_per_round,
            "cost_ratio_c": self.model.c, "k": self.model.k, "o_round": self.model.o_round, "o_plain": self.model.o_plain,
            "prefill_units": {"target": self.model.prefill, "draft": self.model.draft_prefill},
            "costs": costs.to_json((g,)),
            "target_forward_s": {"1_token": costs.t1, f"{g + 1}_tokens": costs.passes[g + 1], "ratio": costs.k(g)},
            "predicted_speedup_k1": self.predicted_speedup_k1,
            "predicted_speedup_asymptotic": self.predicted_speedup_asymptotic,
            "predicted_speedup": self.predicted_speedup,
            "measured_speedup_vs_plain": self.measured_speedup_vs_plain,
            "speedup_vs_hf_assisted": self.speedup_vs_hf_assisted,
        }
        if self.profile is not None:
            out["profile"] = self.profile.to_json()
        out["compile"] = self.options.compile
        out["warmup_s"] = self.warmup_seconds
        if self.repeats:
            out["repeats"] = [r.to_json() for r in self.repeats]
            out["measured_speedup"] = _spread([r.measured_speedup for r in self.repeats])
            out["predicted_speedup_repeats"] = _spread([r.predicted_speedup for r in self.repeats])
            out["model_error"] = out["measured_speedup"]["median"] / out["predicted_speedup_repeats"]["median"] - 1
        if self.roofline is not None:
            out["roofline"] = self.roofline.to_json()
        return out
