"""A draft model's whole proposal as one pass function: gamma autoregressive steps, each warped and sampled.

Notation: q = draft law, gamma = draft tokens per round, B = rows, V = vocabulary, e = Exp(1) noise.

``ModelDraft.propose`` on a static cache without a confidence threshold calls ``draft_steps`` once per round
instead of gamma separate passes with a sampling call between them. Compiled (``compiled_steps``), the round's
gamma passes, warps and draws are ONE graph: on a CPU a compiled call pays a fixed cost (Dynamo's guard check,
the wrapper, the library kernels' set-up) that is most of a 1-layer draft's pass, so gamma steps in one call pay
it once instead of gamma times.

Sampling inside the graph draws nothing: the caller hands it the noise e_1..e_gamma (``Draws.categorical_noise``,
drawn in the order the eager steps would draw), and step i takes

    x_i = argmax_x q_i(x) / e_i(x),

which is exactly the token ``torch.multinomial(q_i, 1)`` gives with the same generator (its one-sample path is
this Gumbel-max form). So the fused proposal emits the same tokens as the step-by-step one for the same seed,
up to the pass's summation order (a near-tie of q_i / e_i; the tests compare in float64).

An invalid draft law (NaN or inf logits) would give argmax a silent token; the graph returns the flag
``ok`` = every q_i finite, read with the round's one host transfer (``round_bookkeeping``) before any token of
the round is kept.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from specmath.lm.cache import padded_rows
from specmath.lm.compiled_steps import compiled, kept
from specmath.lm.lean_llama import LeanLlama
from specmath.lm.static_cache import PassKV, StaticRowCache, pass_kv, static_pass
from specmath.lm.warps import warp
from specmath.sampling_options import SamplingOptions

__all__ = ["draft_steps", "fused_proposal"]


def draft_steps(lean: LeanLlama, kv: PassKV, ids: torch.Tensor, positions: torch.Tensor, last: torch.Tensor,
                noise: torch.Tensor, sampling: SamplingOptions, vocab_size: int | None
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(tokens (B, gamma), q (B, gamma, V), ok (0-d bool)) after feeding ``ids`` (B, n) at ``positions`` (B, n).

    Row b's pending tokens end at column ``last[b]``; its draft i (i = 0..gamma-1, gamma = noise.shape[0]) is fed
    at position positions[b, last[b]] + 1 + i, writing over the padding columns of a shorter row.
    """
    rows = torch.arange(ids.shape[0], device=ids.device)
    step = static_pass(lean, kv, ids, positions)[rows, last]  # (B, V') the logits after each row's last token
    at = positions[rows, last][:, None]  # (B, 1) the position of that token
    tokens, laws = [], []
    for i in range(noise.shape[0]):
        q = warp(step[:, :vocab_size] if vocab_size is not None else step, sampling)  # (B, V)
        x = (q / noise[i]).argmax(-1)  # (B,) ~ q, the multinomial draw of the same noise
        tokens.append(x)
        laws.append(q)
        if i + 1 < noise.shape[0]:
            step = static_pass(lean, kv, x[:, None], at + 1 + i)[:, -1]
    q = torch.stack(laws, dim=1)
    return torch.stack(tokens, dim=1), q, torch.isfinite(q).all()


def fused_proposal(cache: StaticRowCache, rows: Sequence[Sequence[int]], noise: torch.Tensor,
                   sampling: SamplingOptions) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``draft_steps`` on ``cache`` (compiled where the cache is): feed row b's pending tokens ``rows[b]`` and draft
    gamma = noise.shape[0] tokens; the cache then holds each row's pending tokens and its first gamma - 1 drafts
    (what gamma eager steps leave), and counts gamma forwards."""
    ids, counts = padded_rows(rows, cache.batch, cache.pad_id)
    gamma, n = noise.shape[0], ids.shape[1]
    cache.reserve(max(cache.lengths) + n + gamma - 1)
    positions = cache.positions(n)
    last = torch.tensor([c - 1 for c in counts], device=cache.device)
    run = compiled(draft_steps, cache.device.type, cache.frozen) if cache.compiled else draft_steps
    kv = pass_kv(cache.kv, cache.frozen)
    out = run(cache.lean, kv, ids.to(cache.device), positions, last, noise, sampling, cache.vocab_size)
    if cache.compiled:
        out = kept(out, cache.device)  # the proposal is read after the target's graph, until the next round's replay
    cache.forwards += gamma
    cache.lengths = [length + c + gamma - 1 for length, c in zip(cache.lengths, counts, strict=True)]
    return out
