"""The target's accept/reject step over a batch of drafted blocks: accept a prefix, then resample or bonus.

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)).
For row b, draft position i < n_b (n_b = the tokens row b proposed, 0..gamma; x_i ~ q_i; p_i, q_i
warped alike):

1. accept x_i with probability min(1, p_i(x_i) / q_i(x_i)); stop at the first rejection;
2. on rejection at i, emit y ~ norm(max(0, p_i - q_i)) (the residual) and drop x_{i+1..};
3. if all n_b are accepted, emit a bonus token y ~ p_{n_b} (the target's next law, free).

So each round emits n_accepted + 1 tokens, and each emitted token has law p_i exactly
(Leviathan et al. 2023, Theorem 1; proved exactly for toy laws in ``specmath.speculative``). A row
that proposes n_b = 0 tokens takes one plain target step, y ~ p_0.

A *one-hot draft* (prompt lookup, greedy drafts) passes ``q = None``: q_i is the point mass on
x_i, so the accept probability is p_i(x_i) and the residual is p_i with x_i removed. At T = 0 the
target law is one-hot on its argmax too, so a draft token is accepted iff it is the argmax.

Zero residual: max(0, p - q) sums to 0 only when p == q, where rejection has probability 0 in
exact arithmetic. In floating point a rejection can still happen by rounding when p and q agree to
the last bit but one; we then resample from p_i itself, the limit of the residual as p - q -> 0
in that case, and flag the row in ``AcceptReject.zero_residual_rows`` (tested in tests/lm).

The building blocks ``accept_prefix`` and ``rejection_laws`` are public so that the negative
controls of ``specmath.lm.lossy_controls`` change only the resample law and keep the rest.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from specmath.lm.generation import Draws

__all__ = ["AcceptReject", "accept_reject", "accept_prefix", "prefix_of_coins", "rejection_laws", "emission_law",
           "check_block_shapes"]


@dataclass
class AcceptReject:
    n_accepted: torch.Tensor  # (B,) leading drafts accepted, 0..n_b
    next_token: torch.Tensor  # (B,) the residual or bonus token emitted after them
    accept_probability: torch.Tensor  # (B, gamma) min(1, p(x)/q(x)) at each draft position
    zero_residual_rows: torch.Tensor  # (B,) bool: rejected where max(0, p - q) was all zero

    @property
    def zero_residual(self) -> int:
        """Rows rejected with an all-zero residual (resampled from p instead)."""
        return int(self.zero_residual_rows.sum())


def check_block_shapes(
    p: torch.Tensor, q: torch.Tensor | None, drafts: torch.Tensor, lengths: torch.Tensor | None = None
) -> None:
    """p (B, gamma+1, V), q (B, gamma, V) or None, drafts (B, gamma), lengths (B,) or None: ValueError naming the mismatch."""
    B, gamma = drafts.shape
    if p.dim() != 3 or p.shape[:2] != (B, gamma + 1):
        raise ValueError(f"p has shape {tuple(p.shape)}, expected ({B}, {gamma + 1}, V)")
    if q is not None and q.shape != (B, gamma, p.shape[-1]):
        raise ValueError(f"q has shape {tuple(q.shape)}, expected ({B}, {gamma}, {p.shape[-1]}): vocabularies differ?")
    if lengths is not None and (not isinstance(lengths, torch.Tensor) or lengths.shape != (B,)):
        raise ValueError(f"lengths must be a ({B},) tensor of proposed tokens per row, got {lengths!r}")


def accept_prefix(
    p: torch.Tensor, q: torch.Tensor | None, drafts: torch.Tensor, draws: Draws, lengths: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """(n_accepted (B,), accept_probability (B, gamma)): the leading run of accepted draft tokens.

    Row b draws one uniform u_i per proposed position i < lengths[b] (``Draws.uniform``), then ``prefix_of_coins``.
    """
    B, gamma = drafts.shape
    return prefix_of_coins(p, q, drafts, draws.uniform(B, gamma, lengths), lengths)


def prefix_of_coins(
    p: torch.Tensor, q: torch.Tensor | None, drafts: torch.Tensor, u: torch.Tensor, lengths: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """``accept_prefix`` with its uniforms u (B, gamma) given: pure tensor operations, so a compiled graph can hold it.

    x_i is accepted iff u_i q_i(x_i) < p_i(x_i), i.e. with probability min(1, p_i(x_i)/q_i(x_i)) (no
    division by q, and u = 0 never accepts a token with p = 0).
    """
    gamma = drafts.shape[1]
    idx = drafts.unsqueeze(-1)
    p_x = p[:, :gamma].gather(-1, idx).squeeze(-1)  # (B, gamma)
    q_x = torch.ones_like(p_x) if q is None else q.gather(-1, idx).squeeze(-1)
    accepted = u * q_x < p_x
    if lengths is not None:
        # positions a row did not propose are never accepted
        accepted &= torch.arange(gamma, device=p.device)[None, :] < lengths[:, None]
    accept_probability = torch.clamp(p_x / q_x, max=1.0)
    # leading run of acceptances: cumprod turns [1, 1, 0, 1] into [1, 1, 0, 0]
    n_accepted = torch.cumprod(accepted.long(), dim=1).sum(1)
    return n_accepted, accept_probability


def rejection_laws(
    p: torch.Tensor, q: torch.Tensor | None, drafts: torch.Tensor, n_accepted: torch.Tensor, lengths: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(p_n (B, V), residual (B, V) unnormalised, rejected (B,) bool) at each row's first unaccepted position.

    p_n = p at position n_accepted (the resample position, or the bonus position if all were
    accepted); residual = max(0, p_n - q_n) (one-hot q: p_n with the drafted token removed).
    """
    B, gamma = drafts.shape
    rows = torch.arange(B, device=p.device)
    p_n = p[rows, n_accepted]
    proposed = lengths if lengths is not None else torch.full_like(n_accepted, gamma)
    rejected = n_accepted < proposed
    if gamma == 0:
        return p_n, torch.zeros_like(p_n), rejected
    at = n_accepted.clamp(max=gamma - 1)
    if q is None:
        # one-hot q: max(0, p - q) = p with the drafted token removed
        residual = p_n.scatter(-1, drafts[rows, at].unsqueeze(-1), 0.0)
    else:
        residual = torch.clamp(p_n - q[rows, at], min=0.0)
    return p_n, residual, rejected


def accept_reject(
    p: torch.Tensor,
    q: torch.Tensor | None,
    drafts: torch.Tensor,
    generator: torch.Generator | Draws,
    lengths: torch.Tensor | None = None,
) -> AcceptReject:
    """p (B, gamma+1, V) target probs, q (B, gamma, V) draft probs or None (one-hot), drafts (B, gamma).

    ``lengths`` (B,): tokens row b proposed (the rest of its draft row is padding); None = gamma each.
    ``generator``: one torch.Generator for the batch, or ``Draws`` (one generator per row).
    """
    check_block_shapes(p, q, drafts, lengths)
    draws = Draws.of(generator, drafts.shape[0])
    n_accepted, accept_probability = accept_prefix(p, q, drafts, draws, lengths)
    p_n, residual, rejected = rejection_laws(p, q, drafts, n_accepted, lengths)
    law, zero_residual_rows = emission_law(p_n, residual, rejected)
    return AcceptReject(n_accepted, draws.categorical(law), accept_probability, zero_residual_rows)


def emission_law(p_n: torch.Tensor, residual: torch.Tensor, rejected: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(law (B, V), zero_residual_rows (B,)): norm(residual) for a rejected row, p_n for the bonus.

    A rejected row whose residual is all zero (possible only by rounding) falls back to p_n and is flagged.
    """
    mass = residual.sum(-1, keepdim=True)
    usable = rejected.unsqueeze(-1) & (mass > 0)
    law = torch.where(usable, residual / mass.clamp(min=torch.finfo(residual.dtype).tiny), p_n)
    return law, rejected & ~usable.squeeze(-1)
