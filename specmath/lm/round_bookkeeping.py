"""Internal: What one speculative round hands the host, and how it adds to the run's counters.

Notation: p = target law, q = draft law, g = the round's width (the most drafts a row proposed),
alpha_i = sum_x min(p_i(x), q_i(x)) (one-hot q: p_i(x_i)).

``round_tensors`` is the round's bookkeeping, written once: it computes the counters on the device, and
``read_round`` reads them, with the accepted counts, the emitted and drafted tokens, the zero-residual flags
and the validity flags of the target's logits and the draft's laws, in ONE host transfer
(``host_transfer.read_together``). An eager round calls ``read_round``; a compiled one computes
``round_tensors`` inside its graph (``round_graph``) and reads the same record. The cost measurement times the
decoder's own round (``speculative_decode.verify_round``) for o_round (``cost_measure``), so the two cannot
drift apart.

Position i of row b is *reached* when the row proposed it and accepted x_1..x_{i-1}; there alpha_i
is the chance the draft at i is accepted, and the mean of alpha over reached positions is the run's
alpha (``Generation.alpha_mean``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from specmath.lm.accept_reject import AcceptReject
from specmath.lm.drafts import Proposal
from specmath.lm.generation import Generation
from specmath.lm.host_transfer import read_together
from specmath.lm.warps import logits_ok

__all__ = ["RoundRecord", "read_round", "round_tensors", "count_round"]


@dataclass(frozen=True)
class RoundRecord:
    """One round as the host sees it, for a batch of B rows and a round of width g."""

    n_accepted: list[int]  # (B,) leading drafts accepted, 0..n_b
    next_token: list[int]  # (B,) the residual or bonus token emitted after them
    drafts: list[list[int]]  # (B, g) drafted tokens; row b's first n_b are its proposal
    zero_residual: list[bool]  # (B,) rejected where max(0, p - q) was all zero (resampled from p)
    logits_ok: bool  # the target's logits hold no NaN, no +inf, no all -inf row
    draft_ok: bool  # the draft's laws q were valid (``Proposal.ok``; True where the draft checked them itself)
    reached: list[int]  # (g,) rows that reached draft position i
    accepted: list[int]  # (g,) rows that accepted draft position i
    alpha_sum: float  # sum of alpha_i over the reached positions
    alpha_count: int  # the reached positions

    def emitted(self, row: int) -> list[int]:
        """Row ``row``'s tokens of this round: its accepted drafts, then the residual or bonus token."""
        return self.drafts[row][: self.n_accepted[row]] + [self.next_token[row]]


def read_round(p: torch.Tensor, proposal: Proposal, result: AcceptReject, logits: torch.Tensor) -> RoundRecord:
    """The round's counters computed on the device from p (B, g + 1, V), then everything read in one transfer."""
    return read_together(RoundRecord, **round_tensors(p, proposal.tokens, proposal.q, proposal.length_tensor,
                                                       result.n_accepted, result.next_token,
                                                       result.zero_residual_rows, logits, proposal.ok_flag))


def round_tensors(p: torch.Tensor, drafts: torch.Tensor, q: torch.Tensor | None, lengths: torch.Tensor,
                  n_accepted: torch.Tensor, next_token: torch.Tensor, zero_residual_rows: torch.Tensor,
                  logits: torch.Tensor, draft_ok: torch.Tensor) -> dict[str, torch.Tensor]:
    """``RoundRecord``'s fields as device tensors, by name (pure tensor operations: a compiled graph can hold it).

    drafts (B, g), q (B, g, V) or None (one-hot), lengths (B,) the drafts each row proposed; n_accepted,
    next_token and zero_residual_rows (B,) the accept/reject step's (``AcceptReject``).
    """
    g = drafts.shape[1]
    positions = torch.arange(g, device=p.device)[None, :]  # (1, g)
    n_acc = n_accepted[:, None]  # (B, 1)
    reached = (positions <= n_acc) & (positions < lengths[:, None])  # (B, g)
    if q is None:
        alpha = p[:, :g].gather(-1, drafts.unsqueeze(-1)).squeeze(-1)  # one-hot q: p_i(x_i)
    else:
        alpha = torch.minimum(p[:, :g], q).sum(-1)  # sum_x min(p_i(x), q_i(x))
    return dict(
        n_accepted=n_accepted, next_token=next_token, drafts=drafts,
        zero_residual=zero_residual_rows, logits_ok=logits_ok(logits), draft_ok=draft_ok,
        reached=reached.sum(0), accepted=(positions < n_acc).sum(0),
        alpha_sum=torch.where(reached, alpha, torch.zeros_like(alpha)).sum(), alpha_count=reached.sum(),
    )


def count_round(out: Generation, record: RoundRecord, proposed: Sequence[int], draft_steps: int) -> None:
    """Add one round to the run's counters; lists grow to the widest round and the largest count.

    ``proposed``: drafts each row proposed (n_b); ``draft_steps``: the draft's forward passes this round.
    """
    width = len(record.reached)
    _grow(out.width_hist, width + 1)
    out.width_hist[width] += 1
    out.drafted += sum(proposed)
    out.draft_steps += draft_steps
    for n in record.n_accepted:
        _grow(out.accepted_hist, n + 1)
        out.accepted_hist[n] += 1
    _grow(out.position_reached, width)
    _grow(out.position_accepted, width)
    for i in range(width):
        out.position_reached[i] += record.reached[i]
        out.position_accepted[i] += record.accepted[i]
    out.alpha_sum += record.alpha_sum
    out.alpha_count += record.alpha_count
    out.zero_residual += sum(record.zero_residual)
    out.rounds += 1


def _grow(counts: list[int], length: int) -> None:
    counts.extend([0] * (length - len(counts)))
