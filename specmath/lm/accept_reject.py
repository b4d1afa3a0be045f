"""Verify gamma drafted tokens against the target in one batch: accept, resample, bonus.

For row b and draft position i (draft token x_i ~ q_i, target law p_i, both warped alike):

1. accept x_i with probability min(1, p_i(x_i) / q_i(x_i)); stop at the first rejection;
2. on rejection at i, emit y ~ norm(max(0, p_i - q_i)) (the residual) and drop x_{i+1..};
3. if all gamma are accepted, emit a bonus token y ~ p_gamma (the target's next law, free).

So each round emits n_accepted + 1 tokens, and each emitted token has law p_i exactly
(Leviathan et al. 2023, Theorem 1; proved exactly for toy laws in ``specmath.speculative``).

A *one-hot draft* (prompt lookup, greedy drafts) passes ``q = None``: q_i is the point mass on
x_i, so the accept probability is p_i(x_i) and the residual is p_i with x_i removed.

Zero residual: max(0, p - q) sums to 0 only when p == q, where rejection has probability 0 in
exact arithmetic. In floating point a rejection can still happen by rounding when p and q agree to
the last bit but one; we then resample from p_i itself, the limit of the residual as p - q -> 0
in that case, and count it in ``VerifyResult.zero_residual`` (tested in tests/lm).

``residual`` selects the lossless rule ("standard") or a deliberately lossy one, used as the
negative control of the histogram test: "residual-softmax" (``specmath.bugzoo``, same name: the
residual is softmax(max(0, p - q)), close to uniform over the vocabulary) and "target" (resample
from p instead of the residual, giving law min(p, q) + (1 - alpha) p != p).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = ["VerifyResult", "accept_reject", "RESIDUAL_RULES"]

RESIDUAL_RULES = ("standard", "residual-softmax", "target")


@dataclass
class VerifyResult:
    n_accepted: torch.Tensor  # (B,) leading drafts accepted, 0..gamma
    next_token: torch.Tensor  # (B,) the residual or bonus token emitted after them
    accept_probability: torch.Tensor  # (B, gamma) min(1, p(x)/q(x)) at each draft position
    zero_residual: int  # rows that were rejected where max(0, p - q) was all zero


def accept_reject(
    p: torch.Tensor,
    q: torch.Tensor | None,
    drafts: torch.Tensor,
    generator: torch.Generator,
    residual: str = "standard",
) -> VerifyResult:
    """p (B, gamma+1, V) target probs, q (B, gamma, V) draft probs or None (one-hot), drafts (B, gamma)."""
    if residual not in RESIDUAL_RULES:
        raise ValueError(f"residual must be one of {RESIDUAL_RULES}, got {residual!r}")
    B, gamma = drafts.shape
    if p.shape[:2] != (B, gamma + 1):
        raise ValueError(f"p has shape {tuple(p.shape)}, expected ({B}, {gamma + 1}, V)")
    if q is not None and q.shape != (B, gamma, p.shape[-1]):
        raise ValueError(f"q has shape {tuple(q.shape)}, expected ({B}, {gamma}, {p.shape[-1]}): vocabularies differ?")
    idx = drafts.unsqueeze(-1)
    p_x = p[:, :gamma].gather(-1, idx).squeeze(-1)  # (B, gamma)
    q_x = torch.ones_like(p_x) if q is None else q.gather(-1, idx).squeeze(-1)
    # accept with probability min(1, p(x)/q(x)):  u < p/q  <=>  u q < p   (no division by q)
    u = torch.rand(p_x.shape, generator=generator, device=p.device)
    accepted = u * q_x < p_x
    accept_probability = torch.clamp(p_x / q_x, max=1.0)
    # leading run of acceptances: cumprod turns [1, 1, 0, 1] into [1, 1, 0, 0]
    n_accepted = torch.cumprod(accepted.long(), dim=1).sum(1)  # (B,)

    rows = torch.arange(B, device=p.device)
    p_n = p[rows, n_accepted]  # (B, V) target law at the first rejected (or bonus) position
    law = p_n.clone()
    rejected = n_accepted < gamma
    zero = 0
    if rejected.any() and residual != "target":
        at = n_accepted.clamp(max=gamma - 1)
        if q is None:
            # one-hot q: max(0, p - q) = p with the drafted token removed
            res = p_n.scatter(-1, drafts[rows, at].unsqueeze(-1), 0.0)
        else:
            # residual max(0, p - q), normalised below
            res = torch.clamp(p_n - q[rows, at], min=0.0)
        if residual == "residual-softmax":
            # the bug: softmax(max(0, p - q)) instead of max(0, p - q) / sum
            law = torch.where(rejected.unsqueeze(-1), torch.softmax(res, -1), p_n)
        else:
            mass = res.sum(-1)
            usable = rejected & (mass > 0)
            zero = int((rejected & ~(mass > 0)).sum())
            law = torch.where(usable.unsqueeze(-1), res / mass.clamp(min=torch.finfo(res.dtype).tiny).unsqueeze(-1), p_n)
    next_token = torch.multinomial(law, 1, generator=generator).squeeze(-1)
    return VerifyResult(n_accepted, next_token, accept_probability, zero)
