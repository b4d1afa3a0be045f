"""Draft proposers: who guesses the next gamma tokens, and with which law q.

* ``ModelDraft``: a smaller causal LM sharing the target's vocabulary (SmolLM2-135M for 1.7B, a
  Qwen2.5-0.5B for 1.5B, the bundled pair, a layer-skip self-draft). It samples x_i ~ q_i =
  warp(softmax(draft logits)) autoregressively, gamma forwards of one token per round, with its own
  ``RowCache`` rolled back to the accepted prefix after verification.
* ``PromptLookupDraft``: no model (Saxena 2023, "prompt lookup decoding"; HF
  ``prompt_lookup_num_tokens``): find the latest earlier occurrence of the last n tokens and propose
  the gamma tokens that followed it. q is the point mass on the proposal (``q = None`` in
  ``accept_reject``), so the accept probability is p(x) and the cost ratio c is ~0.

Interface: ``start(prompts)``, ``propose(tokens, gamma, sampling, generator) -> (drafts (B, gamma), q or None)``,
``commit(kept)`` where kept[b] = tokens of row b known correct after verification.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from specmath.lm.cache import RowCache
from specmath.lm.warps import Sampling

__all__ = ["ModelDraft", "PromptLookupDraft"]


class ModelDraft:
    """A draft model q with a KV cache; ``vocab_size`` truncates padded logits (see models.shared_vocab_size)."""

    def __init__(self, model: torch.nn.Module, vocab_size: int | None = None) -> None:
        self.model = model
        self.vocab_size = vocab_size
        self.cache: RowCache | None = None

    @property
    def forwards(self) -> int:
        return self.cache.forwards if self.cache else 0

    def start(self, prompts: Sequence[Sequence[int]]) -> None:
        self.cache = RowCache(self.model, len(prompts), self.vocab_size)
        if any(len(p) > 1 for p in prompts):
            self.cache.prefill([list(p)[:-1] for p in prompts])

    @torch.inference_mode()
    def propose(
        self, tokens: Sequence[Sequence[int]], gamma: int, sampling: Sampling, generator: torch.Generator
    ) -> tuple[torch.Tensor, torch.Tensor]:
        cache = self.cache
        pending = [t[n:] for t, n in zip(tokens, cache.lengths, strict=True)]  # tokens the draft has not seen yet
        logits = cache.feed(pending)  # (B, n, V)
        last = torch.tensor([len(r) - 1 for r in pending], device=logits.device)
        step_logits = logits[torch.arange(len(pending), device=logits.device), last]  # (B, V)
        drafts, qs = [], []
        for i in range(gamma):
            # x_i ~ q_i = warp(softmax(draft logits)), the same warp the target gets
            q_i = sampling.probs(step_logits)
            x_i = torch.multinomial(q_i, 1, generator=generator)  # (B, 1)
            drafts.append(x_i)
            qs.append(q_i)
            if i + 1 < gamma:
                step_logits = cache.feed(x_i.tolist())[:, -1]
        return torch.cat(drafts, dim=1), torch.stack(qs, dim=1)  # (B, gamma), (B, gamma, V)

    def commit(self, kept: Sequence[int]) -> None:
        # the draft fed at most gamma - 1 of its own tokens; keep what verification confirmed
        self.cache.keep([min(k, n) for k, n in zip(kept, self.cache.lengths, strict=True)])


class PromptLookupDraft:
    """One-hot drafts copied from earlier in the sequence (n-gram match, longest n first)."""

    def __init__(self, max_ngram: int = 3, min_ngram: int = 1, device: str | torch.device = "cpu") -> None:
        if not 1 <= min_ngram <= max_ngram:
            raise ValueError(f"need 1 <= min_ngram <= max_ngram, got {min_ngram}, {max_ngram}")
        self.max_ngram, self.min_ngram, self.device = max_ngram, min_ngram, torch.device(device)
        self.forwards = 0

    def start(self, prompts: Sequence[Sequence[int]]) -> None:
        pass

    def lookup(self, seq: Sequence[int], gamma: int) -> list[int]:
        """The gamma tokens that followed the latest earlier match of seq's last n tokens (padded by repetition)."""
        seq = list(seq)
        for n in range(min(self.max_ngram, len(seq) - 1), self.min_ngram - 1, -1):
            tail = seq[-n:]
            for start in range(len(seq) - n - 1, -1, -1):
                if seq[start : start + n] == tail:
                    follow = seq[start + n : start + n + gamma]
                    return follow + [follow[-1]] * (gamma - len(follow))
        return [seq[-1]] * gamma  # no match: any proposal is correct, this one is just cheap

    def propose(
        self, tokens: Sequence[Sequence[int]], gamma: int, sampling: Sampling, generator: torch.Generator
    ) -> tuple[torch.Tensor, None]:
        drafts = [self.lookup(t, gamma) for t in tokens]
        return torch.tensor(drafts, dtype=torch.long, device=self.device), None

    def commit(self, kept: Sequence[int]) -> None:
        pass
