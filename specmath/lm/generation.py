"""What a decoding run returns, and the helpers plain and speculative decoding share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

__all__ = ["Generation", "make_generator", "check_prompts", "finish_rows"]


@dataclass
class Generation:
    """New tokens per row plus the counters the speedup model needs.

    position_reached[i] / position_accepted[i]: how often draft position i was verified with a
    correct prefix, and accepted; alpha_mean = mean over those of sum_x min(p(x), q(x)).
    """

    tokens: list[list[int]]
    rounds: int = 0
    target_forwards: int = 0
    draft_forwards: int = 0
    accepted_hist: list[int] = field(default_factory=list)  # rounds (x rows) by number accepted, 0..gamma
    position_reached: list[int] = field(default_factory=list)
    position_accepted: list[int] = field(default_factory=list)
    alpha_sum: float = 0.0
    alpha_count: int = 0
    zero_residual: int = 0

    @property
    def alpha_mean(self) -> float:
        return self.alpha_sum / self.alpha_count if self.alpha_count else float("nan")

    @property
    def tokens_per_round(self) -> float:
        """Mean tokens emitted per (row, round): (1 - alpha^(gamma+1)) / (1 - alpha) under i.i.d. alpha."""
        rounds = sum(self.accepted_hist)
        return sum((n + 1) * c for n, c in enumerate(self.accepted_hist)) / rounds if rounds else float("nan")

    @property
    def acceptance_by_position(self) -> list[float]:
        return [a / r if r else float("nan") for a, r in zip(self.position_accepted, self.position_reached, strict=True)]


def make_generator(seed: int | torch.Generator, device: torch.device | str) -> torch.Generator:
    """An explicit torch.Generator on ``device`` (same seed, same tokens); never the global RNG."""
    if isinstance(seed, torch.Generator):
        if seed.device.type != torch.device(device).type:
            raise ValueError(f"the generator lives on {seed.device}, the model on {device}")
        return seed
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ValueError(f"seed must be an int or a torch.Generator, got {seed!r}")
    return torch.Generator(device=device).manual_seed(seed)


def check_prompts(prompts: Sequence[Sequence[int]] | torch.Tensor, vocab_size: int) -> list[list[int]]:
    """Prompts as lists of token ids; each non-empty and inside the vocabulary."""
    if isinstance(prompts, torch.Tensor):
        prompts = prompts.tolist() if prompts.dim() == 2 else [prompts.tolist()]
    rows = [list(map(int, p)) for p in prompts]
    if not rows:
        raise ValueError("no prompts given")
    for b, r in enumerate(rows):
        if not r:
            raise ValueError(f"prompt {b} is empty: the first token needs a context")
        bad = [t for t in r if not 0 <= t < vocab_size]
        if bad:
            raise ValueError(f"prompt {b} has token ids {bad[:5]} outside the vocabulary [0, {vocab_size})")
    return rows


def finish_rows(new: list[list[int]], max_new_tokens: int, eos_token_id: int | None) -> list[list[int]]:
    """Cut each row at max_new_tokens and just after its first eos."""
    out = []
    for row in new:
        row = row[:max_new_tokens]
        if eos_token_id is not None and eos_token_id in row:
            row = row[: row.index(eos_token_id) + 1]
        out.append(row)
    return out


def model_vocab_size(model: torch.nn.Module) -> int:
    """Width of the model's logits (the output embedding rows, padding included)."""
    head = model.get_output_embeddings()
    # an int8 (dynamically quantised) head has out_features but a weight() method
    return int(getattr(head, "out_features", None) or head.weight.shape[0])
