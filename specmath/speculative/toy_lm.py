"""Toy language models: context (a tuple of tokens) -> next-token law over a small vocabulary.

A toy LM is anything callable as ``lm(context) -> Law`` whose laws all list the same vocabulary;
``ToyLM`` wraps a function or table so it is hashable (the exact interpreter keys states on it) and
caches its laws. ``random_toy_lm`` makes seeded, context-dependent ones for property tests.

Sampling warps are law -> law transformations, applied identically wherever a law is used:

* temperature T: w(x) ∝ p(x)^(1/T). Exact when 1/T is an integer (p^k stays rational); for other T
  the float result is converted exactly with Fraction(float), and the docstring of ``temperature``
  says so. T = 0 is greedy: the one-hot law on the argmax (ties go to the first listed token).
* top-k: keep the k most likely tokens (ties broken by vocabulary order), renormalise.
* top-p (nucleus): keep the smallest prefix of tokens sorted by probability whose mass is >= top_p.

Warped laws keep every vocabulary entry (removed tokens get weight 0), so p and q stay comparable.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from specmath.laws import Law, LawError, as_law, to_fraction

__all__ = ["ToyLM", "random_toy_lm", "temperature", "top_k", "top_p", "warp", "Warp"]


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
    if vocab_size < 1:
        raise LawError(f"vocab_size must be >= 1, got {vocab_size}")
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


def temperature(law: Law, T: Any) -> Law:
    """w(x) ∝ law(x)^(1/T); T = 0 -> greedy (one-hot argmax, first token wins ties).

    Exact for 1/T a positive integer. Otherwise law(x)^(1/T) is computed in float and converted
    exactly with Fraction(float) (the result is still a valid law, but only float-accurate).
    """
    law, t = as_law(law), to_fraction(T, what="temperature")
    if t < 0:
        raise LawError(f"temperature must be >= 0, got {t}")
    if t == 0:
        best = max(law.values())
        winner = next(x for x, w in law.items() if w == best)
        return Law({x: (1 if x == winner else 0) for x in law})
    inv = 1 / t
    if inv.denominator == 1:
        k = inv.numerator
        return Law.from_weights({x: w**k for x, w in law.items()})
    return Law.from_weights({x: Fraction(float(w) ** float(inv)) if w > 0 else 0 for x, w in law.items()})


def top_k(law: Law, k: int) -> Law:
    """Keep the k most likely tokens (ties: vocabulary order), renormalise; others get 0."""
    if not isinstance(k, int) or k < 1:
        raise LawError(f"top-k needs an integer k >= 1, got {k!r}")
    law = as_law(law)
    order = sorted(law, key=lambda x: -law[x])  # stable: ties keep vocabulary order
    keep = set(order[:k])
    return Law.from_weights({x: (w if x in keep else 0) for x, w in law.items()})


def top_p(law: Law, p: Any) -> Law:
    """Nucleus: the smallest most-likely-first prefix with mass >= p, renormalised."""
    law, fp = as_law(law), to_fraction(p, what="top-p")
    if not 0 < fp <= 1:
        raise LawError(f"top-p must lie in (0, 1], got {fp}")
    order = sorted(law, key=lambda x: -law[x])
    keep, mass = set(), Fraction(0)
    for x in order:
        keep.add(x)
        mass += law[x]
        if mass >= fp:
            break
    return Law.from_weights({x: (w if x in keep else 0) for x, w in law.items()})


class Warp:
    """A composed warp (temperature, then top-k, then top-p, as HF's logits processors order them).

    Hashable, so warped toy LMs can be exact-interpreter states.
    """

    def __init__(self, temperature: Any = 1, top_k: int | None = None, top_p: Any = None) -> None:
        self.temperature = to_fraction(temperature, what="temperature")
        self.top_k = top_k
        self.top_p = None if top_p is None else to_fraction(top_p, what="top-p")

    def __call__(self, law: Law) -> Law:
        out = law if self.temperature == 1 else temperature(law, self.temperature)
        if self.top_k is not None:
            out = top_k(out, self.top_k)
        if self.top_p is not None:
            out = top_p(out, self.top_p)
        return out

    def _key(self):
        return (self.temperature, self.top_k, self.top_p)

    def __eq__(self, other):
        return isinstance(other, Warp) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Warp(temperature={self.temperature}, top_k={self.top_k}, top_p={self.top_p})"


def warp(lm: ToyLM, w: Warp) -> ToyLM:
    """The toy LM whose law at every context is w(lm(context))."""
    return ToyLM(lambda ctx: w(lm(ctx)), lm.vocabulary, name=f"{lm.name} | {w!r}")
