"""Internal: Calling the sampler under audit: fresh inputs every call, its output read strictly, its mistakes named.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)); V = vocabulary size.

Every call hands the sampler arrays gathered anew from the case's tables (``specmath.audit.rounds.drafts``),
so nothing a sampler does to its inputs reaches another call, another sampler or another test. What
can go wrong is kept apart from a loss:

* the sampler **raised**, or returned **invalid output** (``specmath.audit.rounds.output``): a
  ``SamplerFailure`` carrying the exception and a sentence; the case is an ERROR, never a FAIL. An
  exception that says the sampler drew from the other kind of generator (a numpy sampler handed a
  ``torch.Generator``: ``'torch._C.Generator' object has no attribute 'random'``) is named as such;
* the sampler **wrote into its inputs**: noticed by comparing what it was handed with the tables
  after the call, and recorded (``writes``) in plain words; the verdict is unaffected, because the
  next call gets fresh copies.

Batched samplers (``sample_rounds(target_probs [N, gamma+1, V], draft_probs [N, gamma, V],
draft_tokens [N, gamma], generator) -> [N, gamma+1]``) are called on chunks of at most
``BATCH_ELEMENTS`` probabilities, so the arrays of a large vocabulary stay within a few tens of MB.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from specmath.audit.rounds.adapters import Adapter
from specmath.audit.rounds.drafts import RoundDrafts
from specmath.audit.rounds.output import InvalidSamplerOutput, batch_tokens, round_tokens

__all__ = ["SamplerFailure", "SamplerCalls", "BATCH_ELEMENTS", "generator_mismatch"]

#: the most float64 probabilities handed to a batched sampler in one call (2^21: 16 MB per array set)
BATCH_ELEMENTS = 1 << 21


class SamplerFailure(Exception):
    """The sampler raised, or returned invalid output; ``cause`` is the exception, ``invalid`` tells which."""

    def __init__(self, text: str, cause: BaseException, invalid: bool) -> None:
        super().__init__(text)
        self.text, self.cause, self.invalid = text, cause, invalid


_OTHER_KIND = {"numpy": ("torch", "a torch.Generator"), "torch": ("numpy", "a numpy.random.Generator")}


def generator_mismatch(exc: BaseException, generator: object, kind: str) -> str | None:
    """A sentence when ``exc`` says the sampler expected the other generator kind, else None.

    Signs: an AttributeError looked up on the generator itself (``exc.obj``), or a message naming the
    generator's type where the other library wanted its own (torch: "generator=numpy.random...").
    """
    handed = "a numpy.random.Generator" if kind == "numpy" else "a torch.Generator"
    other, other_words = _OTHER_KIND[kind]
    text = str(exc)
    looked_up_on_it = isinstance(exc, AttributeError) and getattr(exc, "obj", None) is generator
    named = type(generator).__name__ in text or ("numpy.random" in text if kind == "numpy" else "torch._C.Generator" in text)
    if not (looked_up_on_it or (isinstance(exc, TypeError) and named)):
        return None
    return (f"the sampler was handed {handed} (generator={kind!r}) and failed with {type(exc).__name__}: "
            f"{text.splitlines()[0][:160] if text else ''}; if it draws from {other_words}, audit it with generator={other!r}")


@dataclass
class SamplerCalls:
    """The calls of one case: the adapter, the drafts of the case, and the first write into inputs seen."""

    adapter: Adapter
    drafts: RoundDrafts
    writes: str | None = None

    def _failure(self, exc: BaseException, where: str, generator: object) -> SamplerFailure:
        if isinstance(exc, InvalidSamplerOutput):
            return SamplerFailure(f"{where}: invalid output: {exc}", exc, invalid=True)
        hint = generator_mismatch(exc, generator, self.adapter.generator_kind)
        text = hint or f"{type(exc).__name__}: {exc}"
        return SamplerFailure(f"{where}: {text}", exc, invalid=False)

    def _note_writes(self, nodes, tokens, target_probs, draft_probs, draft_tokens, where: str) -> None:
        if self.writes is None:
            changed = self.drafts.wrote_into(nodes, tokens, target_probs, draft_probs, draft_tokens)
            if changed is not None:
                self.writes = f"{where}: {changed}"

    def round(self, tokens: np.ndarray, nodes: np.ndarray, generator, where: str) -> tuple:
        """One call of a one-round sampler (or of a batched one on a batch of one): the emitted tuple."""
        target_probs, draft_probs = self.drafts.arrays(nodes)
        draft_tokens = tokens.copy()
        gamma, vocab = self.drafts.gamma, self.drafts.vocab
        try:
            if self.adapter.batched:
                lengths, ids = batch_tokens(self.adapter.sample_round(target_probs[None], draft_probs[None], draft_tokens[None],
                                                                      generator), 1, gamma, vocab)
                emitted = tuple(ids[0, : lengths[0]].tolist())
            else:
                emitted = round_tokens(self.adapter.sample_round(target_probs, draft_probs, draft_tokens, generator), gamma, vocab)
        except Exception as exc:
            raise self._failure(exc, where, generator) from exc
        self._note_writes(nodes, tokens, target_probs, draft_probs, draft_tokens, where)
        return emitted

    def rounds(self, tokens: np.ndarray, nodes: np.ndarray, generator, first: int) -> Counter:
        """Rounds ``first``.. of a batched sampler, in chunks: the counts of the emitted tuples."""
        gamma, vocab = self.drafts.gamma, self.drafts.vocab
        chunk = max(1, BATCH_ELEMENTS // ((2 * gamma + 1) * vocab))
        counts: Counter = Counter()
        for start in range(0, len(tokens), chunk):
            part_nodes, part_tokens = nodes[start:start + chunk], tokens[start:start + chunk]
            target_probs, draft_probs = self.drafts.arrays(part_nodes)
            draft_tokens = part_tokens.copy()
            here = f"rounds {first + start}..{first + start + len(part_tokens) - 1} (one call)"
            try:
                output = self.adapter.sample_round(target_probs, draft_probs, draft_tokens, generator)
                lengths, ids = batch_tokens(output, len(part_tokens), gamma, vocab)
            except Exception as exc:
                raise self._failure(exc, here, generator) from exc
            self._note_writes(part_nodes, part_tokens, target_probs, draft_probs, draft_tokens, here)
            rows, frequency = np.unique(ids, axis=0, return_counts=True)
            for row, c in zip(rows.tolist(), frequency.tolist(), strict=True):
                counts[tuple(t for t in row if t >= 0)] += c
        return counts
