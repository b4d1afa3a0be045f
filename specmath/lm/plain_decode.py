"""Plain autoregressive decoding on the same code path as speculative decoding (the baseline).

x_t ~ warp(softmax(target logits at t)), one target forward of one token per step, through the same
``RowCache`` and ``warped_probs`` the speculative decoder uses, so timing differences come from the
algorithm and not from two implementations. It takes the ``DecodeOptions`` speculative decoding takes
and reads ``sampling``, ``seed`` (an int / Generator for the batch or one int per row,
``generation.Draws``), ``eos_token_id``, ``vocab_size`` and ``compile`` (the pass on a static KV cache,
compiled: ``static_cache``); drafting and verifying options do not apply.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from tqdm.auto import tqdm

from specmath.lm.decode_options import DecodeOptions
from specmath.lm.generation import Draws, Generation, check_prompts, finish_rows, model_vocab_size
from specmath.lm.host_transfer import read_flat, read_together
from specmath.lm.round_graph import compiled_plain_step
from specmath.lm.static_cache import cache_class_for
from specmath.lm.warps import check_logits, logits_ok, warped_probs
from specmath.sampling_options import SamplingOptions
from specmath.validation import InvalidArgument, check_integer

__all__ = ["plain_generate", "plain_step"]


@dataclass(frozen=True)
class _Step:
    """What the host reads after a plain step, in one transfer."""

    tokens: list[int]  # (B,) the sampled tokens
    logits_ok: bool  # the logits hold no NaN, no +inf, no all -inf row


def plain_step(logits: torch.Tensor, sampling: SamplingOptions, draws: Draws, compiled: bool = False
               ) -> tuple[torch.Tensor, _Step]:
    """A plain step after its pass: warp the logits (B, V), sample x ~ p, read tokens and validity in one transfer.

    ``compiled`` (the decoder's ``DecodeOptions.compile``): the warp and the draw run as one compiled graph
    (``round_graph.plain_sample``), the same token for the same draws. ``cost_measure`` times this same
    function for o_plain, so the model's plain step is the decoder's.
    """
    if compiled:
        x, flat = compiled_plain_step(logits, sampling, draws)
        return x, read_flat(_Step, flat, tokens=x, logits_ok=_FLAG_LAYOUT)
    x = draws.categorical(warped_probs(logits, sampling, check=False))  # (B,)
    return x, read_together(_Step, tokens=x, logits_ok=logits_ok(logits))  # one host transfer per step


#: the validity flag's layout for ``read_flat``: a 0-d bool, no data
_FLAG_LAYOUT = torch.empty((), dtype=torch.bool, device="meta")


@torch.inference_mode()
def plain_generate(
    target: torch.nn.Module,
    prompts: Sequence[Sequence[int]] | torch.Tensor,
    max_new_tokens: int,
    options: DecodeOptions = DecodeOptions(),
    *,
    progress: bool = False,
) -> Generation:
    """Sample max_new_tokens tokens per prompt: x_t ~ p_t = warp(softmax(target(x_<t))) (batched).

    ``options``: ``sampling`` (the warp), ``seed``, ``eos_token_id`` (a row ends after it; the batch
    stops when every row has), ``vocab_size`` (the first columns of padded logits that are tokens,
    ``models.shared_vocab_size``).
    """
    check_integer(max_new_tokens, "max_new_tokens", min_value=1)
    if not isinstance(options, DecodeOptions):
        raise InvalidArgument(f"options must be a DecodeOptions, got {type(options).__name__}")
    sampling, eos_token_id, vocab_size = options.sampling, options.eos_token_id, options.vocab_size
    vocab = vocab_size or model_vocab_size(target)
    tokens = check_prompts(prompts, vocab)
    cache = cache_class_for(options)(target, len(tokens), vocab_size)
    draws = Draws.from_seed(options.seed, len(tokens), cache.device)
    if any(len(t) > 1 for t in tokens):
        cache.prefill([t[:-1] for t in tokens])  # all but the last prompt token
    new: list[list[int]] = [[] for _ in tokens]
    x = torch.tensor([t[-1] for t in tokens], device=cache.device)  # (B,) the pending input token
    for step in tqdm(range(max_new_tokens), disable=not progress, desc="plain", leave=False):
        logits = cache.feed_block(x[:, None])[:, -1]  # (B, V)
        if step == 0:
            check_logits(logits, "target logits")
        x, host = plain_step(logits, sampling, draws, options.compile)
        if not host.logits_ok:
            check_logits(logits, "target logits")  # raises, naming the problem
        for row, token in zip(new, host.tokens, strict=True):
            row.append(token)
        if eos_token_id is not None and all(eos_token_id in r for r in new):
            break
    return Generation(finish_rows(new, max_new_tokens, eos_token_id), target_forwards=cache.forwards)
