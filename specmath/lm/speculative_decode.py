"""Speculative decoding of a real target model p with a draft q (Leviathan et al. 2023, Algorithm 2).

Each round, for every row of the batch:

1. the draft proposes gamma tokens x_1..x_gamma with laws q_1..q_gamma (``drafts``);
2. ONE target forward over [last token, x_1..x_gamma] gives p_1..p_{gamma+1};
3. ``accept_reject`` accepts a prefix with min(1, p/q), then emits a residual or bonus token;
4. both KV caches keep the accepted prefix and drop the rest (``RowCache.keep``: crop + holes).

Rows accept different numbers of tokens and go on independently (HF assisted generation refuses
batch > 1). Every emitted token has law p given its prefix, so the output law equals that of
``plain_generate``; the exact proof for toy laws is ``specmath.speculative``, the empirical check
for real models is ``specmath.lm.histogram``.

References: Leviathan, Kalman, Matias, "Fast Inference from Transformers via Speculative
Decoding" (2023); Chen et al., "Accelerating LLM Decoding with Speculative Sampling" (2023).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from tqdm.auto import tqdm

from specmath.lm.accept_reject import accept_reject
from specmath.lm.cache import RowCache
from specmath.lm.drafts import ModelDraft, PromptLookupDraft
from specmath.lm.generation import Generation, check_prompts, finish_rows, make_generator, model_vocab_size
from specmath.lm.warps import DEFAULT_SAMPLING, Sampling

__all__ = ["speculative_generate"]


@torch.inference_mode()
def speculative_generate(
    target: torch.nn.Module,
    draft: ModelDraft | PromptLookupDraft | torch.nn.Module,
    prompts: Sequence[Sequence[int]] | torch.Tensor,
    max_new_tokens: int,
    gamma: int = 4,
    sampling: Sampling = DEFAULT_SAMPLING,
    seed: int | torch.Generator = 0,
    eos_token_id: int | None = None,
    vocab_size: int | None = None,
    residual: str = "standard",
    progress: bool = False,
) -> Generation:
    """Sample max_new_tokens tokens per prompt from the warped target law p, drafting gamma per round.

    ``draft``: a ModelDraft/PromptLookupDraft, or a causal LM (wrapped in ModelDraft). ``vocab_size``:
    the shared vocabulary when the two models' logits are padded to different widths
    (``models.shared_vocab_size``). ``residual="target"`` is the lossy negative control.
    """
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
    if not isinstance(gamma, int) or gamma < 1:
        raise ValueError(f"gamma (draft tokens per round) must be an int >= 1, got {gamma!r}")
    if isinstance(draft, torch.nn.Module):
        draft = ModelDraft(draft, vocab_size)
    vocab = vocab_size or model_vocab_size(target)
    if isinstance(draft, ModelDraft):
        width = draft.vocab_size or model_vocab_size(draft.model)
        if width != vocab:
            raise ValueError(
                f"the target scores {vocab} tokens and the draft {width}: pass vocab_size="
                "models.shared_vocab_size(target, draft, tokenizer) to compare them on the shared vocabulary"
            )
    tokens = check_prompts(prompts, vocab)
    B = len(tokens)
    cache = RowCache(target, B, vocab_size)
    generator = make_generator(seed, cache.device)
    if isinstance(draft, PromptLookupDraft):
        draft.device = cache.device
    draft.start(tokens)
    if any(len(t) > 1 for t in tokens):
        cache.prefill([t[:-1] for t in tokens])  # all but the last prompt token
    out = Generation([[] for _ in tokens], accepted_hist=[0] * (gamma + 1),
                     position_reached=[0] * gamma, position_accepted=[0] * gamma)
    bar = tqdm(total=max_new_tokens, disable=not progress, desc=f"speculative gamma={gamma}", leave=False)
    while min(len(r) for r in out.tokens) < max_new_tokens:
        if eos_token_id is not None and all(eos_token_id in r for r in out.tokens):
            break
        drafts, q = draft.propose(tokens, gamma, sampling, generator)  # (B, gamma), (B, gamma, V) | None
        # the target sees its one pending token (the last emitted) followed by the gamma drafts
        fed = [t[n:] + d for t, n, d in zip(tokens, cache.lengths, drafts.tolist(), strict=True)]
        if any(len(f) != gamma + 1 for f in fed):
            raise RuntimeError(f"target cache out of step: fed lengths {[len(f) for f in fed]}")
        p = sampling.probs(cache.feed(fed))  # (B, gamma + 1, V): p_1..p_{gamma+1}
        result = accept_reject(p, q, drafts, generator, residual)
        kept = []
        for b, n in enumerate(result.n_accepted.tolist()):
            kept.append(len(tokens[b]) + n)  # prefix + accepted drafts are now known-good
            emitted = drafts[b, :n].tolist() + [int(result.next_token[b])]
            tokens[b].extend(emitted)
            out.tokens[b].extend(emitted)
            out.accepted_hist[n] += 1
        cache.keep(kept)
        draft.commit(kept)
        _count_positions(out, p, q, drafts, result.n_accepted)
        out.rounds += 1
        out.zero_residual += result.zero_residual
        bar.update(min(min(len(r) for r in out.tokens), max_new_tokens) - bar.n)
    bar.close()
    out.tokens = finish_rows(out.tokens, max_new_tokens, eos_token_id)
    out.target_forwards, out.draft_forwards = cache.forwards, draft.forwards
    return out


def _count_positions(out: Generation, p: torch.Tensor, q: torch.Tensor | None, drafts: torch.Tensor, n_acc: torch.Tensor) -> None:
    """Acceptance per draft position and alpha_i = sum_x min(p_i(x), q_i(x)) where the prefix was correct."""
    gamma = drafts.shape[1]
    positions = torch.arange(gamma, device=n_acc.device)
    reached = positions[None, :] <= n_acc[:, None]  # (B, gamma): position i verified with a correct prefix
    accepted = positions[None, :] < n_acc[:, None]
    if q is None:
        # one-hot q: alpha_i = min(p_i(x_i), 1) = p_i(x_i)
        alpha = p[:, :gamma].gather(-1, drafts.unsqueeze(-1)).squeeze(-1)
    else:
        alpha = torch.minimum(p[:, :gamma], q).sum(-1)
    # one transfer for all counters: reached per position, accepted per position, alpha sum, count
    stats = torch.cat([reached.sum(0).double(), accepted.sum(0).double(),
                       alpha[reached].sum().double().reshape(1), reached.sum().double().reshape(1)]).tolist()
    for i in range(gamma):
        out.position_reached[i] += int(stats[i])
        out.position_accepted[i] += int(stats[gamma + i])
    out.alpha_sum += stats[2 * gamma]
    out.alpha_count += int(stats[2 * gamma + 1])
