"""The correct speculative round on a whole batch of rounds at once: the batched references.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

The interface is the one vLLM's and FlashInfer's chain rejection samplers have:

    sample_rounds(target_probs [N, gamma+1, V], draft_probs [N, gamma, V], draft_tokens [N, gamma],
                  generator) -> [N, gamma+1] token ids, -1 after each row's last emitted token

Row n, position i: target_probs[n, i] = p(. | x_<i) (i = gamma: the bonus position), draft_probs[n, i]
= q(. | x_<i). For every row at once (shape comments: N rows, gamma positions, V tokens):

1. u [N, gamma] uniform; accept x_i iff u_i q_i(x_i) < p_i(x_i): probability min(1, p_i(x_i)/q_i(x_i)),
   no division, and u = 0 never accepts a token with p = 0;
2. n = the leading run of acceptances (cumprod turns [1, 1, 0, 1] into [1, 1, 0, 0]);
3. emit x_1..x_n, then y ~ norm(max(0, p_n - q_n)) if n < gamma (the residual), else y ~ p_gamma
   (the bonus), by inverse CDF on one more uniform per row.

``reference_sample_rounds`` is that round in numpy (float64; a warp w, if given, applied to both p and
q as ``reference_sample_round`` does). It draws only from the generator it is handed and passes the audit (tests/audit); the audit's
``specmath-torch-batched`` adapter runs specmath's torch step on the same interface.

References: Leviathan et al., ICML 2023, Algorithm 1; vLLM ``vllm/v1/sample/rejection_sampler.py``
(PLACEHOLDER_TOKEN_ID = -1); FlashInfer ``chain_speculative_sampling``.
"""

from __future__ import annotations

import numpy as np

from specmath.sampling_options import SamplingOptions
from specmath.speculative.reference_round import check_round_arrays, numpy_warp
from specmath.validation import check_generator

__all__ = ["reference_sample_rounds", "padded_rounds"]


def padded_rounds(draft_tokens, n_accepted, last):
    """[N, gamma+1]: row n is x_1..x_{n_accepted}, then ``last``, then -1 (numpy arrays or torch tensors)."""
    n, gamma = draft_tokens.shape
    if isinstance(draft_tokens, np.ndarray):
        out = np.full((n, gamma + 1), -1, dtype=np.int64)
        positions = np.arange(gamma)
    else:
        import torch

        out = torch.full((n, gamma + 1), -1, dtype=torch.long)
        positions = torch.arange(gamma)
    accepted = positions[None, :] < n_accepted[:, None]  # (N, gamma)
    out[:, :gamma][accepted] = draft_tokens[accepted]
    out[np.arange(n) if isinstance(out, np.ndarray) else torch.arange(n), n_accepted] = last
    return out


def reference_sample_rounds(target_probs, draft_probs, draft_tokens, rng: np.random.Generator,
                            warp: SamplingOptions | None = None) -> np.ndarray:
    """The correct round on every row at once (numpy, float64): [N, gamma+1] ids padded with -1."""
    check_generator(rng)
    p, q, x = check_round_arrays(target_probs, draft_probs, draft_tokens, batched=True)
    if warp is not None:
        p, q = numpy_warp(p.reshape(-1, p.shape[2]), warp).reshape(p.shape), numpy_warp(q.reshape(-1, q.shape[2]), warp).reshape(q.shape)
    n, gamma = x.shape
    rows = np.arange(n)
    p_x = np.take_along_axis(p[:, :gamma], x[..., None], axis=-1)[..., 0]  # (N, gamma)
    q_x = np.take_along_axis(q, x[..., None], axis=-1)[..., 0]  # (N, gamma)
    if np.any(q_x <= 0):
        raise ValueError("a draft token has draft probability 0: it cannot have been drawn")
    # accept x_i with probability min(1, p_i(x_i) / q_i(x_i)):  u q < p
    accepted = rng.random((n, gamma)) * q_x < p_x
    n_accepted = np.cumprod(accepted, axis=1).sum(axis=1)  # (N,) leading run
    rejected = n_accepted < gamma
    p_n = p[rows, n_accepted]  # (N, V): the resample position, or the bonus position
    residual = np.maximum(p_n - q[rows, np.minimum(n_accepted, gamma - 1)], 0.0) if gamma else np.zeros_like(p_n)
    law = np.where(rejected[:, None], residual, p_n)  # (N, V) unnormalised
    cdf = np.cumsum(law, axis=1)
    if np.any(cdf[:, -1] <= 0):
        raise ValueError("the residual max(0, p - q) is zero: the round rejected a token although p <= q nowhere")
    # inverse CDF: the number of cumulative weights <= u * total (a zero weight is never drawn)
    last = np.minimum((cdf <= (rng.random(n) * cdf[:, -1])[:, None]).sum(axis=1), p.shape[2] - 1)
    return padded_rounds(x, n_accepted, last)
