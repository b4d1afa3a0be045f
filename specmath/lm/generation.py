"""What a decoding run returns, where its randomness comes from, and the helpers plain and speculative decoding share.

Randomness (``Draws``): every random choice of a decoding run (draft tokens, accept uniforms,
residual / bonus tokens) comes from explicit ``torch.Generator`` objects, never the global RNG.
``seed=int`` (or one Generator) draws for the whole batch at once; ``seed=[s_1, ..., s_B]`` gives
row b its own generator, so the draws row b consumes, and hence its tokens, do not depend on the
other rows of the batch (vLLM's per-request seeds).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields

import torch

from specmath.validation import check_seed

__all__ = ["Generation", "combined", "Draws", "make_generator", "check_prompts", "finish_rows"]


@dataclass
class Generation:
    """New tokens per row plus the counters the speedup model needs.

    position_reached[i] / position_accepted[i]: how often draft position i reached accept/reject with a
    correct prefix, and accepted; alpha_mean = mean over those of sum_x min(p(x), q(x)).
    width_hist[g]: rounds whose target pass verified g drafts (g < gamma where an adaptive draft proposed
    fewer, 0 for a round that is one plain step); drafted: draft tokens proposed, summed over rows;
    draft_steps: draft forward passes made by the rounds (a model draft that stops early still ran the
    forward that gave the q it stopped on).
    """

    tokens: list[list[int]]
    rounds: int = 0
    target_forwards: int = 0
    draft_forwards: int = 0
    accepted_hist: list[int] = field(default_factory=list)  # rounds (x rows) by number accepted, 0..gamma
    position_reached: list[int] = field(default_factory=list)
    position_accepted: list[int] = field(default_factory=list)
    width_hist: list[int] = field(default_factory=list)
    drafted: int = 0
    draft_steps: int = 0
    alpha_sum: float = 0.0
    alpha_count: int = 0
    zero_residual: int = 0
    profile: dict[str, float] | None = None  # seconds per part of the rounds (``speculative_generate(profile=True)``)

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


def combined(runs: Sequence[Generation]) -> Generation:
    """One ``Generation`` holding several runs: their rows one after another, every counter added up.

    Counter lists of different lengths (runs with different gammas or round widths) are added position
    by position, the shorter ones read as 0 beyond their end; profiles add up part by part.
    """
    if not runs:
        raise ValueError("combined needs at least one run")
    total = Generation([])
    for run in runs:
        total.tokens += run.tokens
        for f in fields(Generation):
            if f.name in ("tokens", "profile"):
                continue
            mine, theirs = getattr(total, f.name), getattr(run, f.name)
            if isinstance(mine, list):
                mine.extend([0] * (len(theirs) - len(mine)))
                for i, n in enumerate(theirs):
                    mine[i] += n
            else:
                setattr(total, f.name, mine + theirs)
        if run.profile is not None:
            total.profile = {part: (total.profile or {}).get(part, 0.0) + s for part, s in run.profile.items()}
    return total


def make_generator(seed: int | torch.Generator, device: torch.device | str) -> torch.Generator:
    """An explicit torch.Generator on ``device`` (same seed, same tokens); never the global RNG."""
    if isinstance(seed, torch.Generator):
        if seed.device.type != torch.device(device).type:
            raise ValueError(f"the generator lives on {seed.device}, the model on {device}")
        return seed
    return torch.Generator(device=device).manual_seed(check_seed(seed, "seed (an int >= 0 or a torch.Generator)"))


class Draws:
    """The random draws of a decoding run: one generator for the batch, or one generator per row.

    * ``uniform(B, gamma, lengths)`` -> (B, gamma) float32 uniforms in [0, 1): the accept coins;
    * ``categorical(probs, rows)`` -> (B,) token ids, row b ~ probs[b] (``torch.multinomial``);
    * ``categorical_noise(B, V, dtype)`` -> the noise the next ``categorical`` consumes, drawn ahead (a compiled
      graph samples argmax(probs / noise): the same tokens).

    Shared: one ``torch.rand`` / ``torch.multinomial`` call for the batch. Per row: row b draws only
    its own ``lengths[b]`` uniforms and its own token from its own generator, exactly the calls a
    batch of one makes, so a row's draws do not depend on its batch. ``rows`` (per row only) marks
    the rows that draw at all (a draft row that stopped proposing draws nothing; its token is 0).
    """

    def __init__(self, generators: Sequence[torch.Generator], per_row: bool) -> None:
        if not generators:
            raise ValueError("Draws needs at least one generator")
        self.generators = list(generators)
        self.per_row = per_row
        self.device = self.generators[0].device

    @classmethod
    def of(cls, generator: torch.Generator | Draws, batch: int) -> Draws:
        """``generator`` itself if it is a Draws (checked against the batch), else one generator shared by the batch."""
        if isinstance(generator, Draws):
            if generator.per_row and len(generator.generators) != batch:
                raise ValueError(f"{len(generator.generators)} per-row generators for a batch of {batch} rows")
            return generator
        if not isinstance(generator, torch.Generator):
            raise ValueError(f"expected a torch.Generator or Draws, got {type(generator).__name__}")
        return cls([generator], per_row=False)

    @classmethod
    def from_seed(cls, seed: int | torch.Generator | Sequence[int], batch: int, device: torch.device | str) -> Draws:
        """``seed``: an int or a Generator (shared by the batch), or one int per row."""
        if isinstance(seed, (list, tuple)):
            if len(seed) != batch:
                raise ValueError(f"seed lists {len(seed)} seeds for {batch} prompts: give one seed per row")
            return cls([make_generator(s, device) for s in seed], per_row=True)
        return cls([make_generator(seed, device)], per_row=False)

    def uniform(self, batch: int, gamma: int, lengths: torch.Tensor | Sequence[int] | None = None) -> torch.Tensor:
        if not self.per_row:
            return torch.rand((batch, gamma), generator=self.generators[0], device=self.device)
        counts = [gamma] * batch if lengths is None else [int(n) for n in (lengths.tolist() if isinstance(lengths, torch.Tensor) else lengths)]
        u = torch.ones((batch, gamma), device=self.device)  # positions a row did not propose: never read
        for b, (g, n) in enumerate(zip(self.generators, counts, strict=True)):
            if n:
                u[b, :n] = torch.rand((1, n), generator=g, device=self.device)[0]
        return u

    def categorical_noise(self, batch: int, vocab: int, dtype: torch.dtype) -> torch.Tensor:
        """(B, V) Exp(1) noise e such that argmax_x probs[b, x] / e[b, x] is the token ``categorical(probs)`` would draw
        next from the same generators (every row drawing): torch.multinomial draws one sample exactly so (its
        one-sample path: ``empty_like(probs).exponential_(1)``, then the argmax of probs / noise; the Gumbel-max
        trick, since -log e is Gumbel). Drawn ahead, the noise lets a compiled graph sample the very tokens the
        eager calls would."""
        if not self.per_row:
            return torch.empty((batch, vocab), dtype=dtype, device=self.device).exponential_(1, generator=self.generators[0])
        return torch.cat([torch.empty((1, vocab), dtype=dtype, device=self.device).exponential_(1, generator=g)
                          for g in self.generators])

    def categorical(self, probs: torch.Tensor, rows: Sequence[bool] | None = None) -> torch.Tensor:
        try:
            if not self.per_row:
                return torch.multinomial(probs, 1, generator=self.generators[0]).squeeze(-1)
            out = torch.zeros(probs.shape[0], dtype=torch.long, device=probs.device)
            for b, g in enumerate(self.generators):
                if rows is None or rows[b]:
                    out[b] = torch.multinomial(probs[b : b + 1], 1, generator=g)[0, 0]
            return out
        except RuntimeError as e:
            # torch refuses NaN, inf or negative probabilities: name the problem as bad input
            raise ValueError(f"cannot sample from invalid probabilities (NaN, inf or negative): {e}") from None


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
