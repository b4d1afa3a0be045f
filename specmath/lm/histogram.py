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
level 1e-6 detects with probability 0.99 at this N. A negative control runs in the same call: a
lossy accept/reject step from ``specmath.lm.lossy_controls``, injected into the same decoder
("residual-softmax": softmax(max(0, p - q)) instead of norm(max(0, p - q)); "target": resample
from p), must be rejected at p < 1e-6 at the same N, showing the test can fail.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import torch

from specmath.laws import Law
from specmath.lm.accept_reject import accept_reject as standard_accept_reject
from specmath.lm.lossy_controls import TORCH_CONTROLS
from specmath.lm.speculative_decode import speculative_generate
from specmath.lm.warps import DEFAULT_SAMPLING, TOP_K_20, warped_probs
from specmath.sampling_options import SamplingOptions
from specmath.stats import detectable_tv, g_test, tv_confidence_bound
from specmath.validation import check_choice

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
    target, draft, prompt: Sequence[int], n: int, n_tokens: int = 2, *, gamma: int = 4, sampling: SamplingOptions = DEFAULT_SAMPLING,
    seed: int = 0, accept_reject: Callable = standard_accept_reject, batch_size: int = 1024, vocab_size: int | None = None,
    progress: bool = False, draft_threshold: float = 0.0,
) -> list[tuple[int, ...]]:
    """N speculative samples of the first n_tokens tokens after ``prompt``, in batches of identical rows.

    ``accept_reject``: the decoder's accept/reject step (a negative control from
    ``specmath.lm.lossy_controls`` to show the test can fail); ``draft_threshold``: the model
    draft's confidence stop, as in ``speculative_generate``.
    """
    device = next(target.parameters()).device
    generator = torch.Generator(device=device).manual_seed(seed)
    out: list[tuple[int, ...]] = []
    while len(out) < n:
        rows = min(batch_size, n - len(out))
        gen = speculative_generate(target, draft, [list(prompt)] * rows, n_tokens, gamma=gamma, sampling=sampling, seed=generator,
                                   vocab_size=vocab_size, progress=progress, accept_reject=accept_reject,
                                   draft_threshold=draft_threshold)
        out.extend(tuple(t[:n_tokens]) for t in gen.tokens)
    return out


@dataclass
class HistogramCheck:
    """One goodness-of-fit check of N samples against an exact law."""

    what: str
    n: int
    statistic: float
    dof: int
    p_value: float
    tv: float
    tv_upper_99: float
    detectable_tv: float  # power: TV detected with prob 0.99 by the test at level 1e-6
    counts: Counter
    law: Law

    def to_json(self) -> dict:
        return {"what": self.what, "n": self.n, "G": self.statistic, "dof": self.dof, "p_value": self.p_value,
                "tv": self.tv, "tv_upper_99": self.tv_upper_99, "detectable_tv_at_1e-6_power_0.99": self.detectable_tv}


def histogram_check(what: str, samples: Sequence, law: Law) -> HistogramCheck:
    """G-test, TV with a 99% bound, and the power of the test, for samples against law."""
    counts = Counter(samples)
    gof = g_test(counts, law)
    tv, upper = tv_confidence_bound(counts, law, 0.99)
    return HistogramCheck(what, len(samples), gof.statistic, gof.dof, gof.p_value, tv, upper,
                          detectable_tv(law, len(samples)), counts, law)


def lossless_report(
    target, draft, prompt: Sequence[int], n: int = 20000, *, gamma: int = 4, sampling: SamplingOptions = TOP_K_20,
    seed: int = 0, batch_size: int = 1024, vocab_size: int | None = None, progress: bool = False,
    control: str | Callable = "residual-softmax",
) -> dict[str, HistogramCheck]:
    """First token and first two tokens vs the exact law, and the lossy negative control at the same N.

    ``control``: a name in ``specmath.lm.lossy_controls.TORCH_CONTROLS`` or a lossy accept/reject callable.
    """
    if isinstance(control, str):
        name, control = control, TORCH_CONTROLS[check_choice(control, "negative control", TORCH_CONTROLS)]
    else:
        name = getattr(control, "__name__", "custom control")
    law1 = first_token_law(target, prompt, sampling, vocab_size)
    law2 = two_token_law(target, prompt, sampling, vocab_size)
    kw = dict(gamma=gamma, sampling=sampling, batch_size=batch_size, vocab_size=vocab_size, progress=progress)
    good = sample_prefixes(target, draft, prompt, n, 2, seed=seed, **kw)
    bad = sample_prefixes(target, draft, prompt, n, 2, seed=seed + 1, accept_reject=control, **kw)
    return {
        "first_token": histogram_check("first token", [s[0] for s in good], law1),
        "first_two_tokens": histogram_check("first two tokens", good, law2),
        "negative_control_first_token": histogram_check(f"lossy rule {name}, first token", [s[0] for s in bad], law1),
        "negative_control_first_two_tokens": histogram_check(f"lossy rule {name}, first two tokens", bad, law2),
    }
