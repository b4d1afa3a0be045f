"""Next-token probabilities from logits, with the sampling warps applied identically to p and q.

Speculative sampling is lossless for the *warped* target law: if the user samples from
p' = warp(p), the draft law must be q' = warp(q) with the same warp, and accept/reject compares
p'(x) with q'(x) (HF transformers, ``_speculative_sampling``, does the same). ``warped_probs`` is the one
function both sides call; the warp is the torch-free record ``specmath.sampling_options.SamplingOptions``,
of which the torch path implements temperature, top-k and top-p (the others are refused by name).

* temperature T > 0: p'(x) = softmax(z / T)(x); T = 0 is greedy: the one-hot law on argmax z
  (ties: the smallest token id, as torch.argmax).
* top-k: keep the k largest logits (ties at the k-th value are all kept), renormalise.
* top-p: keep the smallest set of most likely tokens whose mass reaches top_p, renormalise.

Logits that are NaN or +inf are an error (ValueError naming the row), never a silent token;
-inf marks a forbidden token and is allowed as long as one token per row stays finite.
``check_logits`` raises at once (host syncs); a decoding loop instead folds ``logits_ok`` (a 0-d
bool tensor on the device) into the one host transfer of its round, and calls ``check_logits`` for
the message only when that flag is false, before any token of the round is kept.
"""

from __future__ import annotations

import functools

import torch

from specmath.sampling_options import WARP_OPTIONS, SamplingOptions

__all__ = ["warped_probs", "warp", "law_dtype", "check_warp", "check_logits", "logits_ok", "DEFAULT_SAMPLING", "TOP_K_20"]


def check_logits(logits: torch.Tensor, what: str = "logits") -> None:
    """Raise ValueError if ``logits`` (..., V) holds NaN or +inf, or a row that is all -inf."""
    if torch.isnan(logits).any():
        rows = torch.isnan(logits).any(-1).nonzero().tolist()
        raise ValueError(f"{what} contain NaN (rows {rows[:5]}): the model produced invalid scores")
    if torch.isposinf(logits).any():
        raise ValueError(f"{what} contain +inf: a softmax over them is undefined")
    if torch.isneginf(logits).all(-1).any():
        raise ValueError(f"{what} have a row where every token is -inf: no token can be sampled")


def logits_ok(logits: torch.Tensor) -> torch.Tensor:
    """0-d bool tensor: no NaN, no +inf, and a finite logit in every row (what ``check_logits`` checks), no sync."""
    finite_or_neg_inf = ~(torch.isnan(logits) | torch.isposinf(logits))
    return finite_or_neg_inf.all() & torch.isfinite(logits).any(-1).all()


@functools.lru_cache(maxsize=256)
def check_warp(sampling: SamplingOptions) -> None:
    # once per options record: the decode loop calls warped_probs every round
    sampling.check_only(WARP_OPTIONS, "the torch decoder")


def warped_probs(logits: torch.Tensor, sampling: SamplingOptions, check: bool = True) -> torch.Tensor:
    """(..., V) logits -> (..., V) probabilities of the warped law: float64 for float64 logits, else float32.

    ``check=False`` skips ``check_logits`` (the caller checks ``logits_ok`` itself).
    """
    check_warp(sampling)
    if check:
        check_logits(logits)
    return warp(logits, sampling)


def law_dtype(logits_dtype: torch.dtype) -> torch.dtype:
    """The dtype of the laws ``warp`` returns for logits of ``logits_dtype``: float64 stays, any other is float32."""
    return torch.float64 if logits_dtype == torch.float64 else torch.float32


def warp(logits: torch.Tensor, sampling: SamplingOptions) -> torch.Tensor:
    """``warped_probs`` without its checks: pure tensor operations on (..., V), so a compiled graph can hold it
    (``draft_graph``); the caller checks the options once and the logits' validity on the device."""
    z = logits.to(law_dtype(logits.dtype))
    if sampling.greedy:
        # T -> 0 limit of softmax(z / T): all mass on the argmax (ties: the lowest token id)
        return torch.nn.functional.one_hot(z.argmax(-1), z.shape[-1]).to(z.dtype)
    z = z / float(sampling.temperature)
    if sampling.top_k is not None and sampling.top_k < z.shape[-1]:
        # keep tokens whose logit is >= the k-th largest
        kth = torch.topk(z, sampling.top_k, dim=-1).values[..., -1:]
        z = z.masked_fill(z < kth, float("-inf"))
    probs = torch.softmax(z, dim=-1)
    if sampling.top_p is not None and sampling.top_p < 1:
        sorted_p, order = torch.sort(probs, dim=-1, descending=True)
        # a token stays if the mass strictly before it is < top_p (so the first always stays)
        before = torch.cumsum(sorted_p, dim=-1) - sorted_p
        keep_sorted = before < float(sampling.top_p)
        keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
        probs = probs * keep
        probs = probs / probs.sum(-1, keepdim=True)
    return probs


#: T = 1, no truncation: the model's own law
DEFAULT_SAMPLING = SamplingOptions()
#: T = 1, top-k 20: bounded support, used for two-token histograms
TOP_K_20 = SamplingOptions(top_k=20)
