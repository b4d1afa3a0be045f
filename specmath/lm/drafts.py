"""Draft proposers: who guesses the next tokens, how many, and with which law q.

Notation: p = target law, q = draft law, gamma = the most draft tokens a round may propose.

Every draft implements the ``Draft`` protocol, and the decoder knows nothing else about it:

* ``start(prompts, device, vocab_size)``: once per call, before the first round; prompts are the
  token lists of the batch (B rows); tensors the draft returns must live on ``device`` (the
  target's) and its laws q must have ``vocab_size`` columns (ValueError otherwise);
* ``propose(tokens, gamma, sampling, draws, confidence_threshold=0.0) -> Proposal``: ``tokens[b]``
  is row b's whole sequence so far (prompt + emitted); row b proposes n_b <= gamma tokens;
* ``commit(kept)``: after accept/reject, kept[b] = tokens of row b known correct (its prefix
  before the round plus the accepted drafts); a draft with a cache rolls back to it;
* ``forwards``: draft forward passes so far (0 for a draft without a model).

A ``Proposal`` holds ``tokens`` (B, g) with g = max_b n_b (row b's first n_b entries are drafts,
the rest padding), ``lengths`` (n_b as host ints and as a (B,) tensor) and ``q`` (B, g, V), the law
each draft token was drawn from, or None for one-hot drafts (q_i = point mass on x_i).

Adaptive lengths stay lossless because the decision to stop depends only on the draft's side:

* ``ModelDraft``: a smaller causal LM sharing the target's vocabulary (the bundled pair, an int8 or
  layer-skip self-draft). It samples x_i ~ q_i = warp(softmax(draft logits)) autoregressively and
  stops before position i when its confidence max_x q_i(x) < ``confidence_threshold`` (a function
  of q_i alone, decided before x_i is drawn, so the law accept/reject uses for x_i is still q_i; proved
  exactly on toy LMs in ``specmath.speculative.confidence_stop``).
* ``PromptLookupDraft``: no model (Saxena 2023, "prompt lookup decoding"; HF
  ``prompt_lookup_num_tokens``): find the latest earlier occurrence of the last n tokens and propose
  the tokens that followed it, at most gamma, and none when nothing matches (the round is then one
  plain target step). q is the point mass on the proposal, so the accept probability is p(x).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import torch

from specmath.lm.cache import RowCache
from specmath.lm.draft_graph import fused_proposal
from specmath.lm.generation import Draws, model_vocab_size
from specmath.lm.static_cache import StaticRowCache, cache_class_for, static_unsupported
from specmath.lm.warps import check_warp, law_dtype, warped_probs
from specmath.sampling_options import SamplingOptions
from specmath.validation import check_integer

__all__ = ["Draft", "Proposal", "ModelDraft", "PromptLookupDraft", "draft_for", "compiles_by_default"]


@dataclass
class Proposal:
    """Row b proposes ``tokens[b, :lengths[b]]`` with laws ``q[b, :lengths[b]]`` (q None: one-hot)."""

    tokens: torch.Tensor  # (B, g) long, padding after each row's length
    lengths: list[int]  # n_b per row, 0..gamma
    length_tensor: torch.Tensor  # (B,) the same on the device
    q: torch.Tensor | None  # (B, g, V) or None
    #: 0-d bool on the device: the laws q were valid (a draft that samples inside a graph checks them there), or None
    ok: torch.Tensor | None = None

    @property
    def width(self) -> int:
        return self.tokens.shape[1]

    @property
    def ok_flag(self) -> torch.Tensor:
        """``ok`` as a 0-d bool on the device: True where the draft checked nothing itself (its laws are checked
        where they are used)."""
        return torch.ones((), dtype=torch.bool, device=self.tokens.device) if self.ok is None else self.ok


@runtime_checkable
class Draft(Protocol):
    """What the speculative decoder asks of a draft (see the module docstring for the contract)."""

    forwards: int

    def start(self, prompts: Sequence[Sequence[int]], device: torch.device, vocab_size: int) -> None: ...

    def propose(
        self, tokens: Sequence[Sequence[int]], gamma: int, sampling: SamplingOptions, draws: Draws,
        confidence_threshold: float = 0.0,
    ) -> Proposal: ...

    def commit(self, kept: Sequence[int]) -> None: ...


class ModelDraft:
    """A draft model q with a KV cache; ``vocab_size`` truncates padded logits (see models.shared_vocab_size)."""

    def __init__(self, model: torch.nn.Module, vocab_size: int | None = None, cache_class=RowCache) -> None:
        self.model = model
        self.vocab_size = vocab_size
        self.cache_class = cache_class  # RowCache, or static_cache.StaticRowCache for the compiled decoders
        self.cache: RowCache | None = None

    @property
    def forwards(self) -> int:
        return self.cache.forwards if self.cache else 0

    def start(self, prompts: Sequence[Sequence[int]], device: torch.device | None = None, vocab_size: int | None = None) -> None:
        width = self.vocab_size or model_vocab_size(self.model)
        if vocab_size is not None and width != vocab_size:
            raise ValueError(
                f"the target scores {vocab_size} tokens and the draft {width}: pass vocab_size="
                "models.shared_vocab_size(target, draft, tokenizer) to compare them on the shared vocabulary"
            )
        self.cache = self.cache_class(self.model, len(prompts), self.vocab_size)
        if device is not None and self.cache.device != torch.device(device):
            raise ValueError(f"the draft model lives on {self.cache.device}, the target on {device}")
        if any(len(p) > 1 for p in prompts):
            self.cache.prefill([list(p)[:-1] for p in prompts])

    @torch.inference_mode()
    def propose(
        self, tokens: Sequence[Sequence[int]], gamma: int, sampling: SamplingOptions, draws: Draws,
        confidence_threshold: float = 0.0,
    ) -> Proposal:
        cache = self.cache
        B = len(tokens)
        pending = [t[n:] for t, n in zip(tokens, cache.lengths, strict=True)]  # tokens the draft has not seen yet
        if isinstance(cache, StaticRowCache) and confidence_threshold == 0 and gamma >= 1:
            return self._propose_at_once(cache, pending, gamma, sampling, draws)
        logits = cache.feed(pending)  # (B, n, V)
        last = torch.tensor([len(r) - 1 for r in pending], device=logits.device)
        step_logits = logits[torch.arange(B, device=logits.device), last]  # (B, V)
        drafts, qs = [], []
        lengths = torch.zeros(B, dtype=torch.long, device=logits.device)
        active = torch.ones(B, dtype=torch.bool, device=logits.device)  # rows still drafting
        active_rows: list[bool] | None = None
        for i in range(gamma):
            # x_i ~ q_i = warp(softmax(draft logits)), the same warp the target gets
            q_i = warped_probs(step_logits, sampling, check=False)
            if confidence_threshold > 0:
                # stop a row before position i when max_x q_i(x) < threshold: a function of q alone
                confident = q_i.max(-1).values >= confidence_threshold
                active = active & confident
                active_rows = active.tolist()
                if not any(active_rows):
                    break
                lengths += active
            x_i = draws.categorical(q_i, active_rows)  # (B,)
            drafts.append(x_i)
            qs.append(q_i)
            if i + 1 < gamma:
                step_logits = cache.feed_block(x_i[:, None])[:, -1]
        if confidence_threshold > 0:
            host = lengths.tolist()
        else:
            lengths.fill_(len(drafts))
            host = [len(drafts)] * B
        if not drafts:
            # every row stopped before its first draft: the round is one plain target step
            empty = torch.zeros(B, 0, dtype=torch.long, device=logits.device)
            return Proposal(empty, host, lengths, torch.zeros(B, 0, logits.shape[-1], device=logits.device))
        return Proposal(torch.stack(drafts, dim=1), host, lengths, torch.stack(qs, dim=1))  # (B, g), (B, g, V)

    def _propose_at_once(self, cache: StaticRowCache, pending: list, gamma: int, sampling: SamplingOptions,
                         draws: Draws) -> Proposal:
        """All gamma steps in one pass function (``draft_graph``): the noise of the gamma draws is drawn first, in
        the order the step-by-step loop draws it, so the tokens are the ones that loop samples."""
        check_warp(sampling)
        width = self.vocab_size or model_vocab_size(self.model)
        dtype = law_dtype(cache.dtype)  # the dtype warp gives q
        noise = torch.stack([draws.categorical_noise(len(pending), width, dtype) for _ in range(gamma)])
        tokens, q, ok = fused_proposal(cache, pending, noise, sampling)
        lengths = torch.full((len(pending),), gamma, dtype=torch.long, device=tokens.device)
        return Proposal(tokens, [gamma] * len(pending), lengths, q, ok)

    def commit(self, kept: Sequence[int]) -> None:
        # the draft fed at most gamma - 1 of its own tokens; keep what accept/reject confirmed
        self.cache.keep([min(k, n) for k, n in zip(kept, self.cache.lengths, strict=True)])


class PromptLookupDraft:
    """One-hot drafts copied from earlier in the sequence (n-gram match, longest n first); none without a match."""

    def __init__(self, max_ngram: int = 3, min_ngram: int = 1, device: str | torch.device = "cpu") -> None:
        min_ngram = check_integer(min_ngram, "min_ngram", min_value=1)
        max_ngram = check_integer(max_ngram, "max_ngram", min_value=min_ngram)
        self.max_ngram, self.min_ngram, self.device = max_ngram, min_ngram, torch.device(device)
        self.forwards = 0

    def start(self, prompts: Sequence[Sequence[int]], device: torch.device | None = None, vocab_size: int | None = None) -> None:
        if device is not None:
            self.device = torch.device(device)

    def lookup(self, seq: Sequence[int], gamma: int) -> list[int]:
        """Up to gamma tokens that followed the latest earlier match of seq's last n tokens; [] if none matches."""
        seq = list(seq)
        for n in range(min(self.max_ngram, len(seq) - 1), self.min_ngram - 1, -1):
            tail = seq[-n:]
            for start in range(len(seq) - n - 1, -1, -1):
                if seq[start : start + n] == tail:
                    return seq[start + n : start + n + gamma]
        return []

    def propose(
        self, tokens: Sequence[Sequence[int]], gamma: int, sampling: SamplingOptions, draws: Draws,
        confidence_threshold: float = 0.0,
    ) -> Proposal:
        # a one-hot q has confidence 1: the threshold never stops a lookup
        return self.proposal([self.lookup(t, gamma) for t in tokens])

    def proposal(self, found: Sequence[Sequence[int]]) -> Proposal:
        """The one-hot proposal of the given lookups (row b proposes found[b], possibly nothing)."""
        lengths = [len(f) for f in found]
        width = max(lengths)
        padded = [list(f) + [0] * (width - len(f)) for f in found]
        tokens_t = torch.tensor(padded, dtype=torch.long).reshape(len(found), width).to(self.device)
        return Proposal(tokens_t, lengths, torch.tensor(lengths, device=self.device), None)

    def commit(self, kept: Sequence[int]) -> None:
        pass


def compiles_by_default(device: torch.device | str, target: torch.nn.Module, draft) -> bool:
    """Whether ``specmath bench`` compiles by default: on a CUDA device, where every model the pair runs is one the
    static cache runs (the measurements behind that choice: ``compiled_steps``'s docstring)."""
    models = [target] + ([draft.model] if type(draft) is ModelDraft and draft.cache_class is RowCache else [])
    return torch.device(device).type == "cuda" and all(static_unsupported(m) is None for m in models)


def draft_for(draft, options):
    """``draft`` with the caches ``options`` asks for: a ``ModelDraft`` on compiled static caches where
    ``options.compile``; any other draft (prompt lookup, tables, drafts with caches of their own) as it is."""
    if type(draft) is ModelDraft and getattr(options, "compile", False) and draft.cache_class is RowCache:
        return ModelDraft(draft.model, draft.vocab_size, cache_class=cache_class_for(options))
    return draft
