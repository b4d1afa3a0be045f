"""Repetition, presence and frequency penalties: the logits an engine must sample from at one position.

Notation: z = the target's raw next-token logits at this position, c(x) = how often token x occurs in the
history the penalty counts (``EngineSemantics.history``: the prompt and the tokens emitted so far, or the
emitted ones only), cut to its last ``window`` tokens, with the engine's ``ignored`` tokens left out.

For every token with c(x) > 0 (the formulas of llama.cpp's ``penalties`` sampler, Hugging Face's
``RepetitionPenaltyLogitsProcessor`` and vLLM's ``apply_penalties``):

    repetition r:  z(x) <- z(x) / r  if z(x) > 0,  else z(x) * r      (once, whatever c(x) is)
    frequency f:   z(x) <- z(x) - f * c(x)
    presence a:    z(x) <- z(x) - a

The history is the *emitted prefix at this position*: an engine that accepts several drafted tokens in
one batch must count, at position i, the tokens it emitted at positions < i of the same batch. So the
exact law of a second token is computed here for each first token separately, never from the history
of the batch's start.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from specmath.audit.engines.semantics import EngineSemantics
from specmath.sampling_options import SamplingOptions

__all__ = ["penalty_counts", "penalised_logits"]


def penalty_counts(penalty: str, prompt: Sequence[int], generated: Sequence[int], options: SamplingOptions,
                   semantics: EngineSemantics) -> Counter:
    """c(x) for ``penalty`` (repetition, presence, frequency): the window of its history, ignored tokens out."""
    seen = list(generated) if semantics.history.get(penalty) == "generated" else [*prompt, *generated]
    window = semantics.window_for(options)
    if window < len(seen):
        seen = seen[len(seen) - int(window):]  # the window is taken first, then the ignored tokens dropped
    return Counter(t for t in seen if t not in semantics.ignored)


def _tokens(counts: Counter, size: int) -> tuple[np.ndarray, np.ndarray]:
    ids = np.array([t for t in counts if 0 <= t < size], dtype=np.int64)
    return ids, np.array([counts[t] for t in ids], dtype=np.float64)


def penalised_logits(logits: np.ndarray, prompt: Sequence[int], generated: Sequence[int], options: SamplingOptions,
                     semantics: EngineSemantics) -> np.ndarray:
    """(V,) float64 logits after the options' penalties, counted over the history as ``semantics`` says."""
    z = np.array(logits, dtype=np.float64)
    r = options.repetition_penalty
    if r is not None and r != 1:
        ids, _ = _tokens(penalty_counts("repetition", prompt, generated, options, semantics), z.size)
        # positive logits are divided, the others multiplied: both make the token less likely for r > 1
        z[ids] = np.where(z[ids] > 0, z[ids] / r, z[ids] * r)
    f = options.frequency_penalty
    if f:
        ids, counts = _tokens(penalty_counts("frequency", prompt, generated, options, semantics), z.size)
        z[ids] -= f * counts
    a = options.presence_penalty
    if a:
        ids, _ = _tokens(penalty_counts("presence", prompt, generated, options, semantics), z.size)
        z[ids] -= a
    return z
