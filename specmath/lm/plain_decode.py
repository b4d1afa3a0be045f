"""Plain autoregressive decoding on the same code path as speculative decoding (the baseline).

x_t ~ warp(softmax(target logits at t)), one target forward of one token per step, through the same
``RowCache`` and ``Sampling.probs`` the speculative decoder uses, so timing differences come from the
algorithm and not from two implementations. ``seed`` is an int / Generator for the batch or one int
per row (``generation.Draws``), as in ``speculative_generate``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from tqdm.auto import tqdm

from specmath.lm.cache import RowCache
from specmath.lm.generation import Draws, Generation, check_prompts, finish_rows, model_vocab_size
from specmath.lm.warps import DEFAULT_SAMPLING, Sampling, check_logits, logits_ok

__all__ = ["plain_generate"]


@torch.inference_mode()
def plain_generate(
    target: torch.nn.Module,
    prompts: Sequence[Sequence[int]] | torch.Tensor,
    max_new_tokens: int,
    sampling: Sampling = DEFAULT_SAMPLING,
    seed: int | torch.Generator | Sequence[int] = 0,
    eos_token_id: int | None = None,
    vocab_size: int | None = None,
    progress: bool = False,
) -> Generation:
    """Sample max_new_tokens tokens per prompt: x_t ~ p_t = warp(softmax(target(x_<t))) (batched)."""
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
    vocab = vocab_size or model_vocab_size(target)
    tokens = check_prompts(prompts, vocab)
    cache = RowCache(target, len(tokens), vocab_size)
    draws = Draws.from_seed(seed, len(tokens), cache.device)
    if any(len(t) > 1 for t in tokens):
        cache.prefill([t[:-1] for t in tokens])  # all but the last prompt token
    new: list[list[int]] = [[] for _ in tokens]
    x = torch.tensor([t[-1] for t in tokens], device=cache.device)  # (B,) the pending input token
    for step in tqdm(range(max_new_tokens), disable=not progress, desc="plain", leave=False):
        logits = cache.feed_block(x[:, None])[:, -1]  # (B, V)
        if step == 0:
            check_logits(logits, "target logits")
        x = draws.categorical(sampling.probs(logits, check=False))  # (B,)
        # one host transfer per step: the tokens and the validity flag of the logits
        host = torch.cat([x, logits_ok(logits).long().reshape(1)]).tolist()
        if not host[-1]:
            check_logits(logits, "target logits")  # raises, naming the problem
        for b, tok in enumerate(host[:-1]):
            new[b].append(tok)
        if eos_token_id is not None and all(eos_token_id in r for r in new):
            break
    return Generation(finish_rows(new, max_new_tokens, eos_token_id), target_forwards=cache.forwards)
