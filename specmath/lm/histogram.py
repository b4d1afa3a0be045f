"""Empirical histograms of speculative decoding against the exact target law, with the power stated.

For a fixed prompt we draw N speculative samples (a batch of rows) of the first token and of the
first two tokens, and compare them with the law they must follow:

* first token:   P(x1) = p(x1 | prompt), from one target forward;
* first two:     P(x1, x2) = p(x1 | prompt) p(x2 | prompt, x1), from one batched target forward over
  every x1 in the support of p(. | prompt) (so use a top-k warp for large vocabularies).

p is warped exactly as the sampler is configured, and taken from the same probabilities the
sampler uses, converted exactly to Fractions (``specmath.laws``) and renormalised.

``specmath.stats`` then gives the G-test (cells pooled to expected count >= 5) and its p-value,
the empirical TV with a 99% upper confidence bound, and the power: the smallest TV that the test at
the audit's level (the family level of ``specmath.settings``, 1e-6) detects with the audit's power
(0.99) at this N. A ``HistogramCheck`` is that ``specmath.stats.GTest`` with the TV bound and the
counts. A negative control runs in the same call: a lossy accept/reject step from
``specmath.lm.lossy_controls``, injected into the same decoder ("residual-softmax":
softmax(max(0, p - q)) instead of norm(max(0, p - q)); "target": resample from p), must be rejected
at p < 1e-6 at the same N, showing the test can fail. The decoder runs with one
``decode_options.DecodeOptions``, its N and level come from one ``specmath.settings.AuditSettings``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from fractions import Fraction

import torch

from specmath.laws import Law
from specmath.lm.decode_options import DecodeOptions
from specmath.lm.lossy_controls import TORCH_CONTROLS
from specmath.lm.speculative_decode import speculative_generate
from specmath.lm.warps import DEFAULT_SAMPLING, TOP_K_20, warped_probs
from specmath.sampling_options import SamplingOptions
from specmath.settings import CI, AuditSettings, as_settings
from specmath.stats import GTest, detectable_tv, g_test, tv_confidence_bound
from specmath.validation import check_choice, check_integer, check_seed

__all__ = ["first_token_law", "two_token_law", "sample_prefixes", "HistogramCheck", "histogram_check", "lossless_report"]

MAX_TWO_TOKEN_SUPPORT = 1024


def _law_from_probs(probs: torch.Tensor, keys=None) -> Law:
    """Law over the positive entries of a probability vector, floats converted exactly and renormalised."""
    probs = probs.double().cpu()
    nz = torch.nonzero(probs > 0).flatten().tolist()
    vals = probs[nz].tolist()
    # Fraction(v) is the double's exact binary value (a Python float would be read as its decimal)
    return Law.from_weights({(keys[i] if keys else i): Fraction(v) for i, v in zip(nz, vals, strict=True)}, name="target law")


@torch.no_grad()
def _next_probs(target, rows: list[list[int]], sampling: SamplingOptions, vocab_size: int | None) -> torch.Tensor:
    device = next(target.parameters()).device
    logits = target(input_ids=torch.tensor(rows, device=device)).logits[:, -1]  # (R, V)
    if vocab_size is not None:
        logits = logits[..., :vocab_size]
    return warped_probs(logits, sampling)


def first_token_law(target, prompt: Sequence[int], sampling: SamplingOptions = DEFAULT_SAMPLING, vocab_size: int | None = None) -> Law:
    """P(x1) = warp(p)(x1 | prompt) as an exact Law over token ids."""
    return _law_from_probs(_next_probs(target, [list(prompt)], sampling, vocab_size)[0])


def two_token_law(target, prompt: Sequence[int], sampling: SamplingOptions = DEFAULT_SAMPLING, vocab_size: int | None = None) -> Law:
    """P(x1, x2) = p(x1 | prompt) p(x2 | prompt, x1) over pairs, exactly from the warped probabilities the sampler uses."""
    p1 = _next_probs(target, [list(prompt)], sampling, vocab_size)[0]
    support = torch.nonzero(p1 > 0).flatten().tolist()
    if len(support) > MAX_TWO_TOKEN_SUPPORT:
        raise ValueError(
            f"p(x1 | prompt) has {len(support)} possible tokens (> {MAX_TWO_TOKEN_SUPPORT}): use a top_k warp "
            "so the two-token law needs a bounded number of target rows"
        )
    p2 = _next_probs(target, [list(prompt) + [x] for x in support], sampling, vocab_size).double().cpu()  # (S, V)
    weights = {}
    for row, x1 in enumerate(support):
        w1 = float(p1[x1])
        for x2 in torch.nonzero(p2[row] > 0).flatten().tolist():
            # P(x1, x2) = p(x1) p(x2 | x1)
            weights[(x1, x2)] = Fraction(w1) * Fraction(float(p2[row, x2]))
    return Law.from_weights(weights, name="two-token target law")


def sample_prefixes(
    target, draft, prompt: Sequence[int], n: int, n_tokens: int = 2, options: DecodeOptions = DecodeOptions(), *,
    accept_reject: Callable | None = None, batch_size: int = 1024,
) -> list[tuple[int, ...]]:
    """N speculative samples of the first n_tokens tokens after ``prompt``, in batches of identical rows.

    ``options``: the decoder's (``speculative_generate``); its int ``seed`` seeds one generator that
    the batches draw from in turn. ``accept_reject``: a lossy accept/reject step in place of the one
    ``options.verify`` names (a negative control from ``specmath.lm.lossy_controls``, to show the test
    can fail).
    """
    check_integer(n, "n (samples)", min_value=1)
    device = next(target.parameters()).device
    generator = torch.Generator(device=device).manual_seed(_one_seed(options))
    batches = options.replace(seed=generator)
    out: list[tuple[int, ...]] = []
    while len(out) < n:
        rows = min(batch_size, n - len(out))
        gen = speculative_generate(target, draft, [list(prompt)] * rows, n_tokens, batches, accept_reject=accept_reject)
        out.extend(tuple(t[:n_tokens]) for t in gen.tokens)
    return out


def _one_seed(options: DecodeOptions) -> int:
    """The int seed of every batch's generator (not one seed per row: the rows here are N samples of one law)."""
    return check_seed(options.seed, "options.seed (one int: the batches draw from one generator)")


@dataclass(frozen=True, kw_only=True)
class HistogramCheck(GTest):
    """One G-test of N samples against an exact law (``GTest``), with a 99% upper bound on the TV, and the counts."""

    tv_upper_99: float  # TV(sampler's law, law) <= this with probability 0.99 (``stats.tv_confidence_bound``)
    counts: Counter = field(compare=False)
    law: Law = field(compare=False)

    def to_json(self) -> dict:
        """what, n, G, dof, p_value, tv, tv_upper_99 and the detectable TV, keyed by its level and power."""
        key = f"detectable_tv_at_{_short(self.level)}_power_{_short(self.power)}"
        return {"what": self.name, "n": self.n, "G": self.statistic, "dof": self.dof, "p_value": self.p_value,
                "tv": self.measured_tv, "tv_upper_99": self.tv_upper_99, key: self.detectable_tv}


def _short(x: float) -> str:
    """1e-06 as 1e-6, 0.99 as 0.99: a number as the JSON key names it."""
    return f"{x:g}".replace("e-0", "e-")


def histogram_check(name: str, samples: Sequence, law: Law, settings: AuditSettings = CI) -> HistogramCheck:
    """G-test at level settings.family_level, TV with a 99% bound, and the TV the test detects at settings.power."""
    counts = Counter(samples)
    gof = g_test(counts, law)
    tv, upper = tv_confidence_bound(counts, law, 0.99)
    level, power = settings.family_level, settings.power
    judged = gof.judged(name, level, power, detectable_tv(law, len(samples), level, power), measured_tv=tv)
    return HistogramCheck(**{f.name: getattr(judged, f.name) for f in fields(GTest)}, tv_upper_99=upper, counts=counts,
                          law=law)


def lossless_report(
    target, draft, prompt: Sequence[int], options: DecodeOptions | None = None, *,
    settings: AuditSettings | str | None = None, batch_size: int = 1024, control: str | Callable = "residual-softmax",
) -> dict[str, HistogramCheck]:
    """First token and first two tokens vs the exact law, and the lossy negative control at the same N.

    ``options``: the decoder's (default: top-k 20, so the two-token law needs a bounded number of target
    rows); the control runs with seed + 1. ``settings``: N = settings.n samples per sampler, each check at
    the family level with its detectable TV at the power (default: the ci profile, N = 20000).
    ``control``: a name in ``specmath.lm.lossy_controls.TORCH_CONTROLS`` or a lossy accept/reject callable.
    """
    options = DecodeOptions(sampling=TOP_K_20) if options is None else options
    settings = as_settings(settings)
    if isinstance(control, str):
        name, control = control, TORCH_CONTROLS[check_choice(control, "negative control", TORCH_CONTROLS)]
    else:
        name = getattr(control, "__name__", "custom control")
    law1 = first_token_law(target, prompt, options.sampling, options.vocab_size)
    law2 = two_token_law(target, prompt, options.sampling, options.vocab_size)
    good = sample_prefixes(target, draft, prompt, settings.n, 2, options, batch_size=batch_size)
    bad = sample_prefixes(target, draft, prompt, settings.n, 2, options.replace(seed=_one_seed(options) + 1),
                          accept_reject=control, batch_size=batch_size)
    return {
        "first_token": histogram_check("first token", [s[0] for s in good], law1, settings),
        "first_two_tokens": histogram_check("first two tokens", good, law2, settings),
        "negative_control_first_token": histogram_check(f"lossy rule {name}, first token", [s[0] for s in bad], law1,
                                                        settings),
        "negative_control_first_two_tokens": histogram_check(f"lossy rule {name}, first two tokens", bad, law2,
                                                             settings),
    }
