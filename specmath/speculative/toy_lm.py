"""Toy language models: context (a tuple of tokens) -> next-token law over a small vocabulary.

A toy LM is anything callable as ``lm(context) -> Law`` whose laws all list the same vocabulary;
``ToyLM`` wraps a function or table so it is hashable (the exact interpreter keys states on it) and
caches its laws. ``random_toy_lm`` makes seeded, context-dependent ones for property tests.
``warp(lm, w)`` is the toy LM whose every law is warped by the ``SamplingOptions`` w (temperature, top-k,
top-p: the one definition is ``specmath.speculative.sampling_warp``, whose law functions this module
re-exports for toy-LM users).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence

import numpy as np

from specmath.laws import Law, LawError
from specmath.sampling_options import SamplingOptions
from specmath.speculative.sampling_warp import temperature, top_k, top_p, warped
from specmath.validation import check_integer

__all__ = ["ToyLM", "random_toy_lm", "temperature", "top_k", "top_p", "warp"]


class ToyLM:
    """A hashable toy language model: ``lm(context) -> Law`` with a fixed vocabulary.

    ``fn`` is a function context -> Law, or a Mapping context -> Law with ``default`` for contexts
    it does not list. Every returned law is checked to list exactly ``vocabulary``.
    """

    def __init__(
        self,
        fn: Callable[[tuple], Law] | Mapping[tuple, Law],
        vocabulary: Sequence[Hashable],
        *,
        default: Law | None = None,
        name: str = "toy LM",
    ) -> None:
        self.vocabulary = tuple(vocabulary)
        if not self.vocabulary:
            raise LawError(f"{name}: the vocabulary is empty")
        self.name = name
        self._fn = fn
        self._default = default
        self._cache: dict[tuple, Law] = {}

    def __call__(self, context: tuple) -> Law:
        context = tuple(context)
        law = self._cache.get(context)
        if law is not None:
            return law
        if isinstance(self._fn, Mapping):
            law = self._fn.get(context, self._default)
            if law is None:
                raise LawError(f"{self.name} has no law for context {context!r} and no default")
        else:
            law = self._fn(context)
        if not isinstance(law, Law):
            law = Law(law, name=f"{self.name}({context!r})")
        if law.vocabulary != frozenset(self.vocabulary):
            raise LawError(
                f"{self.name}({context!r}) is over {sorted(map(repr, law.vocabulary))}, "
                f"not the model's vocabulary {sorted(map(repr, self.vocabulary))}"
            )
        self._cache[context] = law
        return law

    def __repr__(self) -> str:
        return f"ToyLM({self.name!r}, vocabulary={self.vocabulary!r})"


def random_toy_lm(
    vocab_size: int,
    seed: int,
    *,
    max_weight: int = 6,
    zero_probability: float = 0.25,
    context_window: int = 2,
    name: str | None = None,
) -> ToyLM:
    """A seeded random toy LM over tokens 0..vocab_size-1 whose law depends on the last
    ``context_window`` tokens and the position (context length).

    Weights are integers in 0..max_weight (each 0 with probability ``zero_probability``, at least
    one positive), normalised exactly, so every law is a valid rational law by construction.
    """
    vocab_size = check_integer(vocab_size, "vocab_size", min_value=1)
    vocab = tuple(range(vocab_size))

    def fn(context: tuple) -> Law:
        key = (seed, len(context), context[-context_window:] if context_window else ())
        rng = np.random.default_rng(abs(hash(key)) % (2**63))
        weights = rng.integers(1, max_weight + 1, size=vocab_size)
        weights[rng.random(vocab_size) < zero_probability] = 0
        if weights.sum() == 0:
            weights[rng.integers(vocab_size)] = 1
        return Law.from_weights({x: int(w) for x, w in zip(vocab, weights)})

    return ToyLM(fn, vocab, name=name or f"random toy LM (V={vocab_size}, seed={seed})")


def warp(lm: ToyLM, w: SamplingOptions) -> ToyLM:
    """The toy LM whose law at every context is w(lm(context)), exactly (``sampling_warp.warped``)."""
    return ToyLM(lambda ctx: warped(lm(ctx), w), lm.vocabulary, name=f"{lm.name} | {w!r}")
