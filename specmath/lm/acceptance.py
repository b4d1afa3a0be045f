"""Acceptance along the target's own samples: how alpha changes with the position in an answer.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha_t = sum_x min(p_t(x), q_t(x)) at new-token position t (= 1 - TV(p_t, q_t)), the probability that a
draft token sampled from q_t is accepted there.

Speculative decoding sees the contexts the target itself writes. ``alpha_along_samples`` samples
answers from the target (plain decoding, the given warp), scores each whole sequence once with the
target and once with the draft, and returns alpha_t for every sample and position: a draft (or a
pair) that is good for short answers and poor for long ones shows it here, while a single mean over a
short benchmark hides it.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from specmath.lm.plain_decode import plain_generate
from specmath.lm.warps import DEFAULT_SAMPLING, warped_probs
from specmath.sampling_options import SamplingOptions
from specmath.validation import InvalidArgument, check_integer

__all__ = ["alpha_along_samples", "stretch_means"]


@torch.inference_mode()
def alpha_along_samples(target: torch.nn.Module, draft: torch.nn.Module, prompts: Sequence[Sequence[int]],
                        new_tokens: int, seeds: Sequence[int] = (0,), sampling: SamplingOptions = DEFAULT_SAMPLING,
                        vocab_size: int | None = None) -> torch.Tensor:
    """(len(seeds) * len(prompts), new_tokens) float64: alpha_t along each sampled answer (no eos stop).

    Row s * len(prompts) + i is prompt i's answer sampled with seeds[s]. Column t holds
    sum_x min(p(x | prefix), q(x | prefix)) for the prefix ending just before new token t, both laws
    warped by ``sampling`` (the laws speculative decoding would compare there).
    """
    check_integer(new_tokens, "new_tokens", min_value=1)
    if not prompts or not seeds:
        raise InvalidArgument("give at least one prompt and one seed")
    rows = []
    device = next(target.parameters()).device
    for seed in seeds:
        answers = plain_generate(target, prompts, new_tokens, sampling=sampling, seed=seed, vocab_size=vocab_size).tokens
        for prompt, answer in zip(prompts, answers, strict=True):
            ids = torch.tensor([list(prompt) + list(answer)], device=device)
            # the laws that predict new tokens 1..n sit at positions len(prompt) - 1 .. len(prompt) + n - 2
            span = slice(len(prompt) - 1, len(prompt) - 1 + new_tokens)
            laws = []
            for model in (target, draft):
                logits = model(input_ids=ids).logits[0, span]
                laws.append(warped_probs(logits[..., :vocab_size] if vocab_size else logits, sampling).double())
            rows.append(torch.minimum(*laws).sum(-1))
    return torch.stack(rows)


def stretch_means(alpha: torch.Tensor, stretch: int) -> list[tuple[int, int, float]]:
    """(first, last, mean alpha) over consecutive stretches of ``stretch`` new-token positions."""
    check_integer(stretch, "stretch", min_value=1)
    n = alpha.shape[1]
    return [(lo, min(lo + stretch, n) - 1, float(alpha[:, lo : lo + stretch].mean())) for lo in range(0, n, stretch)]
