"""Block verification over a batch of drafted blocks (Sun et al. 2024): never fewer accepted tokens than token-wise.

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)).
Row b drafted x_0..x_{n-1} (n = n_b <= gamma) with laws q_0..q_{n-1}; one target pass gave p_0..p_n
(p_i = the target's law of the token after x_0..x_{i-1}). Token-wise verification
(``accept_reject``) stops at the first position whose coin min(1, p_i(x_i)/q_i(x_i)) fails. Block
verification looks at the whole block before deciding how much of it to keep:

    w_0 = 1,  w_{i+1} = min(1, w_i p_i(x_i) / q_i(x_i))          how much of the path's draft mass p still covers
    r_i(x) = max(0, w_i p_i(x) - q_i(x))                          the target mass the draft under-covers at i
    h_i = |r_i| / (|r_i| + 1 - w_i)  for 1 <= i < n,   h_n = w_n
    tau = the largest i in 1..n whose coin h_i comes up (coins flipped from the end), 0 if none
    emit x_0..x_{tau-1}, then y ~ norm(r_tau) if tau < n, the bonus y ~ p_n if tau = n.

With n = 1 it is the token-wise step (h_1 = w_1 = min(1, p/q)). Sun et al. prove that every emitted
sequence keeps the target's law and that no verifier seeing only the drafted path's laws accepts more
in expectation. ``specmath.speculative.block`` checks exactly, for toy laws, the first claim
(``block_generation_law == autoregressive_law``) and the weaker half of the second (never fewer
accepted tokens than token-wise; the paper's example: 11/9 against 10/9); this module is the batched float version of the same algorithm, checked against
that one (the same h and residuals) and by G-tests in tests/lm.

One-hot drafts (prompt lookup, q = None): q_i is the point mass on x_i, so w_{i+1} = min(1, w_i p_i(x_i))
and r_i = w_i p_i with x_i removed.

Floating point: h_i = 0 where |r_i| + 1 - w_i = 0 (then |r_i| = 0 too). Choosing tau < n with an
all-zero residual has probability 0 in exact arithmetic (|r_0| = 0 forces p_0 = q_0, hence w_1 = 1
and a later coin that surely comes up), but rounding can produce it; the row then resamples from
p_tau and is flagged in ``zero_residual_rows``, as in ``accept_reject``.

Reference: Z. Sun, U. Mendlovic, Y. Leviathan, A. Aharoni, A. Beirami, J. H. Ro, A. T. Suresh,
"Block verification accelerates speculative decoding", ICLR 2025, arXiv 2403.10444.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from specmath.choices import VERIFY
from specmath.lm.accept_reject import AcceptReject, accept_reject, check_block_shapes, emission_law
from specmath.lm.generation import Draws
from specmath.validation import check_choice

__all__ = ["block_accept_reject", "block_stop_probabilities", "expected_accepted", "VERIFIERS", "verifier"]


def _draft_ratio(p: torch.Tensor, q: torch.Tensor | None, drafts: torch.Tensor) -> torch.Tensor:
    """(B, gamma): p_i(x_i) / q_i(x_i) (one-hot q: p_i(x_i)); q_i(x_i) > 0 where x_i was drawn from q_i."""
    p_x = p[:, : drafts.shape[1]].gather(-1, drafts.unsqueeze(-1)).squeeze(-1)
    return p_x if q is None else p_x / q.gather(-1, drafts.unsqueeze(-1)).squeeze(-1)


def block_stop_probabilities(
    p: torch.Tensor, q: torch.Tensor | None, drafts: torch.Tensor, lengths: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(w (B, gamma + 1), h (B, gamma + 1), r (B, gamma, V)): the weights, stop probabilities and residuals.

    ``h[b, i]`` is the probability that the coin of position i comes up (h[:, 0] = 0: tau = 0 is the
    default, not a coin); positions a row did not propose (i > n_b) get h = 0. ``r[b, i]`` is the
    unnormalised residual max(0, w_i p_i - q_i).
    """
    check_block_shapes(p, q, drafts, lengths)
    B, gamma = drafts.shape
    idx = drafts.unsqueeze(-1)
    ratio = _draft_ratio(p, q, drafts)
    weights = [p.new_ones(B)]  # w_0 = 1 (also when no row proposed anything: gamma = 0)
    for i in range(gamma):
        weights.append(torch.clamp(weights[-1] * ratio[:, i], max=1.0))  # w_{i+1} = min(1, w_i p_i(x_i)/q_i(x_i))
    w = torch.stack(weights, dim=1)  # (B, gamma + 1)
    scaled = w[:, :gamma, None] * p[:, :gamma]  # w_i p_i
    if q is None:
        residual = scaled.scatter(-1, idx, 0.0)  # max(0, w_i p_i - 1[x = x_i]): w_i p_i(x_i) <= 1
    else:
        residual = torch.clamp(scaled - q, min=0.0)
    mass = residual.sum(-1)  # (B, gamma) |r_i|
    denominator = mass + 1 - w[:, :gamma]
    inner = torch.where(denominator > 0, mass / denominator.clamp(min=torch.finfo(mass.dtype).tiny), torch.zeros_like(mass))
    n = torch.full((B,), gamma, device=p.device) if lengths is None else lengths
    positions = torch.arange(gamma + 1, device=p.device)[None, :]
    h = torch.cat([inner, inner.new_zeros(B, 1)], dim=1)  # (B, gamma + 1): h_i at column i, h_n set below
    h = torch.where(positions == n[:, None], w, h)  # h_n = w_n
    h = torch.where((positions == 0) | (positions > n[:, None]), torch.zeros_like(h), h)
    return w, h, residual


def expected_accepted(
    p: torch.Tensor, q: torch.Tensor | None, drafts: torch.Tensor, lengths: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """(token-wise (B,), block (B,)): E[accepted drafts | the drafted block] under each verifier.

    Token-wise: sum_{i=1..n} prod_{j<i} min(1, p_j(x_j)/q_j(x_j)). Block: E[tau] = sum_i i h_i
    prod_{j>i} (1 - h_j). Averaged over blocks drafted from q, each is that verifier's E[accepted]; on
    the same blocks the difference has far less variance than two separate runs (Sun et al. prove the
    block mean is never the smaller; a single block may go either way).
    """
    _, h, _ = block_stop_probabilities(p, q, drafts, lengths)
    B, gamma = drafts.shape
    coins = h[:, 1:]  # (B, gamma)
    # P(no coin after i comes up) = prod_{j>i} (1 - h_j): a reversed cumulative product, shifted by one
    later = torch.flip(torch.cumprod(torch.flip(1 - coins, [1]), 1), [1])
    later = torch.cat([later[:, 1:], torch.ones_like(later[:, :1])], 1)
    block = (coins * later * torch.arange(1, gamma + 1, device=p.device)).sum(1)
    ratio = torch.clamp(_draft_ratio(p, q, drafts), max=1.0)
    if lengths is not None:
        # unproposed positions are never accepted (where, not a product: padding may hold 0/0)
        ratio = torch.where(torch.arange(gamma, device=p.device)[None, :] < lengths[:, None], ratio, torch.zeros_like(ratio))
    token_wise = torch.cumprod(ratio, 1).sum(1)
    return token_wise, block


def block_accept_reject(p: torch.Tensor, q: torch.Tensor | None, drafts: torch.Tensor, generator: torch.Generator | Draws,
                        lengths: torch.Tensor | None = None) -> AcceptReject:
    """Drop-in for ``accept_reject`` (same arguments and result) that verifies each row's block jointly.

    ``n_accepted`` is tau, ``next_token`` the residual or bonus token, ``accept_probability`` the
    token-wise min(1, p_i(x_i)/q_i(x_i)) (for comparison; the decision uses h). Pass it to
    ``DecodeOptions(verify="block")`` (``speculative_generate`` then calls it in place of ``accept_reject``).
    """
    w, h, residual = block_stop_probabilities(p, q, drafts, lengths)
    B, gamma = drafts.shape
    draws = Draws.of(generator, B)
    # one uniform per proposed position i = 1..n_b (the coin of h_i), as many as token-wise verification
    # draws; positions past n_b have h = 0 and never come up
    u = draws.uniform(B, gamma, lengths)
    comes_up = u < h[:, 1:]  # (B, gamma): independent coins; flipping from the end keeps the largest
    index = torch.arange(1, gamma + 1, device=p.device)[None, :]
    tau = (comes_up * index).amax(1) if gamma else torch.zeros(B, dtype=torch.long, device=p.device)
    n = torch.full_like(tau, gamma) if lengths is None else lengths
    rows = torch.arange(B, device=p.device)
    rejected = tau < n
    p_tau = p[rows, tau]
    if gamma:
        r_tau = residual[rows, tau.clamp(max=gamma - 1)]
    else:
        r_tau = torch.zeros_like(p_tau)
    law, zero_residual_rows = emission_law(p_tau, r_tau, rejected)  # norm(r_tau), or p_n after the whole block
    return AcceptReject(tau, draws.categorical(law), torch.clamp(_draft_ratio(p, q, drafts), max=1.0), zero_residual_rows)


#: the lossless verifiers by name (``specmath bench --verify``, ``DecodeOptions(verify=...)``): the names of
#: ``choices.VERIFY`` ("token", "block"), in its order
VERIFIERS: dict[str, Callable[..., AcceptReject]] = dict(zip(VERIFY, (accept_reject, block_accept_reject), strict=True))


def verifier(name: str) -> Callable[..., AcceptReject]:
    """The accept/reject step called ``name``: "token" (Leviathan et al.) or "block" (Sun et al.)."""
    return VERIFIERS[check_choice(name, "verifier", VERIFY)]
