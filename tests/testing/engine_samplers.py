"""Speculative samplers written the ways engines write them: 7 correct, 11 lossy, each batched.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

Every sampler here has the batched interface of vLLM's and FlashInfer's chain rejection samplers:

    sample_rounds(target_probs [N, gamma+1, V], draft_probs [N, gamma, V], draft_tokens [N, gamma],
                  generator) -> [N, gamma+1] token ids, -1 after each row's last emitted token

and ``one_round(sample_rounds)`` is the same sampler with the one-round interface (a batch of one,
padding stripped). None of them is specmath's own code: they are the shapes a user brings.

The lossy ones each change one block of the correct vectorised round (``_round``); the comment on
each says how it goes wrong and which audit cases can see it.
"""

from __future__ import annotations

import numpy as np

TOP_K = 2  # the k of the top-k samplers (audited with top_k=TOP_K)


# -- blocks shared by the numpy samplers ------------------------------------------------------------

def _gather(probs: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    """probs[n, i, tokens[n, i]]: (N, gamma)."""
    return np.take_along_axis(probs, tokens[..., None], axis=-1)[..., 0]


def _inverse_cdf(law: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Row-wise inverse CDF: the number of cumulative weights <= u * total (zero weights are never drawn)."""
    cdf = np.cumsum(law, axis=1)
    return np.minimum((cdf <= (u * cdf[:, -1])[:, None]).sum(axis=1), law.shape[1] - 1)


def _emit(draft_tokens: np.ndarray, n_accepted: np.ndarray, last: np.ndarray) -> np.ndarray:
    """[N, gamma+1]: the accepted drafts, then ``last``, then -1 (vLLM's placeholder)."""
    n, gamma = draft_tokens.shape
    out = np.full((n, gamma + 1), -1, dtype=np.int64)
    keep = np.arange(gamma)[None, :] < n_accepted[:, None]
    out[:, :gamma][keep] = draft_tokens[keep]
    out[np.arange(n), n_accepted] = last
    return out


def _top_k(probs: np.ndarray, k: int = TOP_K) -> np.ndarray:
    """Keep the k largest entries of each row (ties: lower token id first), renormalise."""
    order = np.argsort(-probs, axis=-1, kind="stable")
    keep = np.zeros(probs.shape, dtype=bool)
    np.put_along_axis(keep, order[..., :k], True, axis=-1)
    kept = np.where(keep, probs, 0.0)
    return kept / kept.sum(axis=-1, keepdims=True)


def _round(tp, dp, dt, rng, *, uniforms=None, accept=None, gather_p=None, residual=None, residual_q_row=None,
           bonus_row=None, draw=None):
    """The correct vectorised round; each keyword swaps one block (the lossy samplers below)."""
    tp, dp, dt = np.asarray(tp), np.asarray(dp), np.asarray(dt)
    n, gamma = dt.shape
    rows = np.arange(n)
    u = rng.random((n, gamma)) if uniforms is None else uniforms(n, gamma, rng)
    p_x = _gather(tp[:, :gamma], dt) if gather_p is None else gather_p(tp, dp, dt)
    q_x = _gather(dp, dt)
    # accept x_i with probability min(1, p_i(x_i) / q_i(x_i)): u q < p, no division
    accepted = u * q_x < p_x if accept is None else accept(u, p_x, q_x)
    # the leading run of acceptances: cumprod turns [1, 1, 0, 1] into [1, 1, 0, 0]
    n_accepted = np.cumprod(accepted, axis=1).sum(axis=1)
    rejected = n_accepted < gamma
    at = np.minimum(n_accepted, gamma - 1)
    p_n = tp[rows, n_accepted]
    q_n = dp[rows, at if residual_q_row is None else residual_q_row(at, gamma)]
    if bonus_row is not None:
        p_n = np.where(rejected[:, None], p_n, tp[rows, bonus_row(gamma)])
    excess = np.maximum(p_n - q_n, 0.0) if residual is None else residual(p_n, q_n, n_accepted)
    law = np.where(rejected[:, None], excess, p_n)
    last = _inverse_cdf(law, rng.random(n)) if draw is None else draw(law, rng)
    return _emit(dt, n_accepted, last)


# -- correct ------------------------------------------------------------------------------------------

def vectorised_uniforms(tp, dp, dt, rng):
    """All uniforms of the batch in one draw, accept u q < p, inverse-CDF resample (correct)."""
    return _round(tp, dp, dt, rng)


def _gumbel_max(law, rng):
    # argmax_y log law(y) + G_y, G ~ Gumbel(0, 1) i.i.d., has law norm(law); log 0 = -inf is never chosen
    with np.errstate(divide="ignore"):
        return np.argmax(np.log(law) + rng.gumbel(size=law.shape), axis=1)


def gumbel_max_residual(tp, dp, dt, rng):
    """The residual and the bonus drawn by the Gumbel-max trick (correct)."""
    return _round(tp, dp, dt, rng, draw=_gumbel_max)


def _searchsorted_rows(law, rng):
    u = rng.random(law.shape[0])
    out = np.empty(law.shape[0], dtype=np.int64)
    for r in range(law.shape[0]):
        cdf = np.cumsum(law[r])
        out[r] = min(int(np.searchsorted(cdf, u[r] * cdf[-1], side="right")), law.shape[1] - 1)
    return out


def cumsum_searchsorted(tp, dp, dt, rng):
    """A row loop of cumsum + searchsorted for the residual and the bonus (correct)."""
    return _round(tp, dp, dt, rng, draw=_searchsorted_rows)


def ratio_with_open_zero_uniform(tp, dp, dt, rng):
    """u <= p/q with u = 1 - U in (0, 1]: P(u <= r) = min(1, r) and u = 0 never happens (correct)."""
    return _round(tp, dp, dt, rng, uniforms=lambda n, g, r: 1.0 - r.random((n, g)),
                  accept=lambda u, p_x, q_x: u <= p_x / q_x)


def _torch_round(tp, dp, dt, generator, dtype, fallback: bool):
    import torch

    p = torch.as_tensor(tp).to(dtype)  # (N, gamma+1, V)
    q = torch.as_tensor(dp).to(dtype)  # (N, gamma, V)
    x = torch.as_tensor(dt).long()  # (N, gamma)
    n, gamma = x.shape
    rows = torch.arange(n)
    u = torch.rand((n, gamma), generator=generator)  # float32 uniforms, as engines draw them
    p_x = p[:, :gamma].gather(-1, x[..., None])[..., 0]
    q_x = q.gather(-1, x[..., None])[..., 0]
    n_accepted = torch.cumprod((u * q_x < p_x).long(), dim=1).sum(1)
    rejected = n_accepted < gamma
    p_n = p[rows, n_accepted]
    excess = torch.clamp(p_n - q[rows, n_accepted.clamp(max=gamma - 1)], min=0.0)
    usable = rejected[:, None]
    if fallback:
        # a zero residual (p <= q everywhere, by rounding): resample from p, its limit
        usable = usable & (excess.sum(-1, keepdim=True) > 0)
    law = torch.where(usable, excess, p_n)
    last = torch.multinomial(law, 1, generator=generator)[:, 0]
    out = torch.full((n, gamma + 1), -1, dtype=torch.long)
    keep = torch.arange(gamma)[None, :] < n_accepted[:, None]
    out[:, :gamma][keep] = x[keep]
    out[rows, n_accepted] = last
    return out


def torch_multinomial(tp, dp, dt, generator):
    """torch float64 tensors, torch.rand uniforms and torch.multinomial from a torch.Generator (correct)."""
    import torch

    return _torch_round(tp, dp, dt, generator, torch.float64, fallback=False)


def float32_with_zero_residual_fallback(tp, dp, dt, generator):
    """A float32 engine: an all-zero float residual falls back to p (correct up to float32 rounding)."""
    import torch

    return _torch_round(tp, dp, dt, generator, torch.float32, fallback=True)


def top_k_both_sides(tp, dp, dt, rng):
    """top-k applied to p and to q, then the standard round: lossless for the warped target (correct)."""
    return _round(_top_k(np.asarray(tp)), _top_k(np.asarray(dp)), dt, rng)


# -- lossy --------------------------------------------------------------------------------------------

def bonus_from_wrong_row(tp, dp, dt, rng):
    """The bonus token drawn from row gamma - 1 instead of row gamma (lossy: every context case)."""
    return _round(tp, dp, dt, rng, bonus_row=lambda gamma: gamma - 1)


def _sum_p_residual_draw(law, rng):
    # the "residual" max(0, p - q) / sum(p) sums to 1 - alpha < 1: the inverse CDF with an unscaled u
    # runs off its end, and the leftover mass lands on the last token
    cdf = np.cumsum(law, axis=1)
    return np.minimum((cdf <= rng.random(law.shape[0])[:, None]).sum(axis=1), law.shape[1] - 1)


def residual_normalised_by_p(tp, dp, dt, rng):
    """The residual divided by sum(p) = 1 instead of its own mass 1 - alpha (lossy)."""
    return _round(tp, dp, dt, rng, residual=lambda p_n, q_n, k: np.maximum(p_n - q_n, 0.0) / p_n.sum(-1, keepdims=True),
                  draw=lambda law, rng: _sum_p_residual_draw(law, rng))


def residual_with_next_q(tp, dp, dt, rng):
    """The residual max(0, p_i - q_{i+1}): the draft row one position late (lossy)."""
    return _round(tp, dp, dt, rng, residual_q_row=lambda at, gamma: np.minimum(at + 1, gamma - 1))


def swapped_ratio(tp, dp, dt, rng):
    """Accept with min(1, q(x)/p(x)): the ratio upside down (lossy)."""
    return _round(tp, dp, dt, rng, accept=lambda u, p_x, q_x: u * p_x < q_x)


def one_uniform_reused(tp, dp, dt, rng):
    """One uniform per round, compared at every position (lossy: the positions are correlated)."""
    return _round(tp, dp, dt, rng, uniforms=lambda n, g, r: np.repeat(r.random((n, 1)), g, axis=1))


def small_residual_floor(tp, dp, dt, rng):
    """A 'stability' floor: max(0, p - q) + 1e-3, so the residual never sums to zero (lossy: it can
    emit tokens the target forbids)."""
    return _round(tp, dp, dt, rng, residual=lambda p_n, q_n, k: np.maximum(p_n - q_n, 0.0) + 1e-3)


def resample_from_p_at_first_position(tp, dp, dt, rng):
    """A rejection at position 0 resamples from p instead of the residual (lossy)."""
    return _round(tp, dp, dt, rng, residual=lambda p_n, q_n, k: np.where(
        (k == 0)[:, None], p_n, np.maximum(p_n - q_n, 0.0)))


def float16_ratio(tp, dp, dt, rng):
    """The ratio p(x)/q(x) rounded to float16 before u < ratio (lossy by at most 2^-11 relative per
    accept probability: a TV far below what N = 20000 rounds detect)."""
    return _round(tp, dp, dt, rng, accept=lambda u, p_x, q_x: u < (p_x / q_x).astype(np.float16))


def top_k_target_only(tp, dp, dt, rng):
    """top-k applied to p but not to q (lossy)."""
    return _round(_top_k(np.asarray(tp)), dp, dt, rng)


def p_gathered_at_argmax(tp, dp, dt, rng):
    """p read at argmax q_i instead of at the draft token x_i (lossy: an indexing slip)."""
    def gather(tp_, dp_, dt_):
        return _gather(tp_[:, : dt_.shape[1]], np.argmax(dp_, axis=-1))

    return _round(tp, dp, dt, rng, gather_p=gather)


def ratio_with_closed_zero_uniform(tp, dp, dt, rng):
    """u <= p/q with u in [0, 1): u = 0 accepts a token of target probability 0 (lossy, probability
    2^-53 per draw: only the edge probe sees it)."""
    return _round(tp, dp, dt, rng, accept=lambda u, p_x, q_x: u <= p_x / q_x)


#: name -> (batched sampler, generator kind, warp keywords)
CORRECT = {
    "vectorised-uniforms": (vectorised_uniforms, "numpy", {}),
    "gumbel-max-residual": (gumbel_max_residual, "numpy", {}),
    "cumsum-searchsorted": (cumsum_searchsorted, "numpy", {}),
    "u-le-ratio-open-zero": (ratio_with_open_zero_uniform, "numpy", {}),
    "torch-multinomial": (torch_multinomial, "torch", {}),
    "float32-zero-residual-fallback": (float32_with_zero_residual_fallback, "torch", {}),
    "top-k-both-sides": (top_k_both_sides, "numpy", {"top_k": TOP_K}),
}
LOSSY = {
    "bonus-from-wrong-row": (bonus_from_wrong_row, "numpy", {}),
    "residual-normalised-by-p": (residual_normalised_by_p, "numpy", {}),
    "residual-with-next-q": (residual_with_next_q, "numpy", {}),
    "swapped-ratio": (swapped_ratio, "numpy", {}),
    "one-uniform-reused": (one_uniform_reused, "numpy", {}),
    "small-residual-floor": (small_residual_floor, "numpy", {}),
    "resample-from-p-at-position-0": (resample_from_p_at_first_position, "numpy", {}),
    "float16-ratio": (float16_ratio, "numpy", {}),
    "top-k-target-only": (top_k_target_only, "numpy", {"top_k": TOP_K}),
    "p-gathered-at-argmax": (p_gathered_at_argmax, "numpy", {}),
    "u-le-ratio-closed-zero": (ratio_with_closed_zero_uniform, "numpy", {}),
}


def one_round(sample_rounds):
    """The one-round interface of a batched sampler: a batch of one, the -1 padding stripped."""
    def sample_round(target_probs, draft_probs, draft_tokens, generator):
        row = sample_rounds(target_probs[None], draft_probs[None], draft_tokens[None], generator)[0]
        return [int(t) for t in row if int(t) >= 0]

    sample_round.__name__ = sample_round.__qualname__ = f"one_round({sample_rounds.__name__})"
    sample_round.__doc__ = sample_rounds.__doc__
    return sample_round
