"""The work after a compiled pass as one graph: a round's warps, accept/reject, bonus and counters; a plain step's draw.

Notation: p = target law, q = draft law, g = the round's width, B = rows, V = vocabulary, u = the
accept coins, e = Exp(1) noise.

After the target's pass a round warps its g + 1 laws, flips the coins (accept x_i iff u_i q_i(x_i) <
p_i(x_i)), forms the residual norm(max(0, p_n - q_n)) or takes the bonus law p_n, draws the next token,
computes the round's counters and flattens them for the one host transfer. Each of these is small, but
eagerly each is a dispatched kernel call, some forty a round: on a CPU, where a compiled one-token pass of a
small model takes well under a millisecond, they cost a good part of a pass (the cost model's o_round). Here
they are pure functions of the logits and the round's draws, which ``compiled_steps`` compiles into one graph
per shape:

* ``round_steps``: ``warps.warp``, ``accept_reject.prefix_of_coins``, ``rejection_laws``, ``emission_law``,
  the draw, and ``round_bookkeeping.round_tensors`` flattened by ``host_transfer.flat_of``: the same functions
  the eager round calls, so the two cannot differ but by the order of a sum;
* ``plain_sample``: a plain step's warp, draw and validity flag.

Randomness stays outside the graph. The caller draws the coins (``Draws.uniform``) and then the noise
(``Draws.categorical_noise``), in the order the eager step draws them, and the graph takes

    y = argmax_x law(x) / e(x),

the token ``torch.multinomial(law, 1)`` draws from the same generator (its one-sample path; see
``draft_graph``). So a compiled run emits the tokens an eager run emits for the same seed, up to the
summation order of the warps (a near-tie of law / e; the tests compare in float64). An invalid law cannot
give a silent token: the logits' validity flag travels in the same transfer and is checked before any token
of the step is kept, as in the eager path.

Only the token-by-token verifier runs here (``speculative_decode.verify_round`` chooses); block verification
and an injected accept/reject step (the tests' lossy controls) stay eager.
"""

from __future__ import annotations

import functools

import torch

from specmath.lm.accept_reject import AcceptReject, emission_law, prefix_of_coins, rejection_laws
from specmath.lm.compiled_steps import compiled, kept
from specmath.lm.drafts import Proposal
from specmath.lm.generation import Draws
from specmath.lm.host_transfer import flat_of, read_flat
from specmath.lm.round_bookkeeping import RoundRecord, round_tensors
from specmath.lm.warps import law_dtype, logits_ok, warp
from specmath.sampling_options import SamplingOptions

__all__ = ["round_steps", "compiled_round", "plain_sample", "compiled_plain_step"]


def round_steps(logits: torch.Tensor, drafts: torch.Tensor, q: torch.Tensor | None, lengths: torch.Tensor,
                u: torch.Tensor, noise: torch.Tensor, draft_ok: torch.Tensor, sampling: SamplingOptions
                ) -> tuple[torch.Tensor, ...]:
    """(flat, n_accepted, next_token, accept_probability, zero_residual_rows) of one round, from the target's
    logits (B, g + 1, V), the drafts (B, g) with their laws q (B, g, V) or None (one-hot), the drafts each row
    proposed (B,), the coins u (B, g) and the noise e (B, V). ``flat`` is ``RoundRecord``'s tensors flattened."""
    p = warp(logits, sampling)  # (B, g + 1, V): p_1..p_{g+1}
    n_accepted, accept_probability = prefix_of_coins(p, q, drafts, u, lengths)
    p_n, residual, rejected = rejection_laws(p, q, drafts, n_accepted, lengths)
    law, zero_residual_rows = emission_law(p_n, residual, rejected)
    next_token = (law / noise).argmax(-1)  # (B,) ~ law: torch.multinomial's draw of the same noise
    tensors = round_tensors(p, drafts, q, lengths, n_accepted, next_token, zero_residual_rows, logits, draft_ok)
    return flat_of(tensors.values()), n_accepted, next_token, accept_probability, zero_residual_rows


def compiled_round(logits: torch.Tensor, proposal: Proposal, sampling: SamplingOptions, draws: Draws
                   ) -> tuple[AcceptReject, RoundRecord]:
    """``accept_reject`` and ``read_round`` as one compiled call, the draws taken first in the eager order."""
    B, g = proposal.tokens.shape
    full = min(proposal.lengths) == g
    u = draws.uniform(B, g, None if full else proposal.lengths)
    noise = draws.categorical_noise(B, logits.shape[-1], law_dtype(logits.dtype))
    out = compiled(round_steps, logits.device.type)(logits, proposal.tokens, proposal.q, proposal.length_tensor,
                                                    u, noise, proposal.ok_flag, sampling)
    flat, n_accepted, next_token, accept_probability, zero_residual_rows = kept(out, logits.device)  # next round
    result = AcceptReject(n_accepted, next_token, accept_probability, zero_residual_rows)
    layout = _record_layout(B, g, logits.shape[-1], proposal.q is None, proposal.tokens.dtype, logits.dtype)
    return result, read_flat(RoundRecord, flat, **layout)


@functools.lru_cache(maxsize=64)
def _record_layout(B: int, g: int, V: int, one_hot: bool, token_dtype: torch.dtype, logits_dtype: torch.dtype
                   ) -> dict[str, torch.Tensor]:
    """``round_tensors`` of a round of this shape on the meta device: each field's name, shape and type, no data
    (what ``read_flat`` needs to split the flat tensor the graph returns), computed once per shape."""
    def meta(shape: tuple, dtype: torch.dtype) -> torch.Tensor:
        return torch.empty(shape, dtype=dtype, device="meta")

    p_dtype = law_dtype(logits_dtype)
    rows = meta((B,), torch.long)
    return round_tensors(meta((B, g + 1, V), p_dtype), meta((B, g), token_dtype),
                         None if one_hot else meta((B, g, V), p_dtype), rows, rows, rows, meta((B,), torch.bool),
                         meta((B, g + 1, V), logits_dtype), meta((), torch.bool))


def plain_sample(logits: torch.Tensor, noise: torch.Tensor, sampling: SamplingOptions) -> tuple[torch.Tensor, torch.Tensor]:
    """(x (B,), flat [x, logits_ok]) for logits (B, V) and noise e (B, V): x = argmax p / e, p = warp(logits)."""
    x = (warp(logits, sampling) / noise).argmax(-1)
    return x, flat_of([x, logits_ok(logits)])


def compiled_plain_step(logits: torch.Tensor, sampling: SamplingOptions, draws: Draws) -> tuple[torch.Tensor, torch.Tensor]:
    """(x (B,) on the device, flat) of ``plain_sample`` compiled, its noise drawn as ``Draws.categorical`` would."""
    noise = draws.categorical_noise(logits.shape[0], logits.shape[-1], law_dtype(logits.dtype))
    return kept(compiled(plain_sample, logits.device.type)(logits, noise, sampling), logits.device)
