"""Example laws and toy LMs of the speculative track: the step examples, the article's word world,
a context-dependent three-token pair, and Sun et al.'s block-verification example.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

A word-level bigram pair over eight tokens: each law depends on the last token of the context
(the empty context starts with "I"), so alpha changes along the draft. The draft is over-confident
where a small model typically is: after "machine" it always says "learning", after "learning" it
always says "is" (q = 1 where p = 3/4, so D3 = "is" is rejected with probability 1/4 and replaced
from the residual norm(max(0, p - q)) = {".": 1/2, "fun": 1/2}).

The seed article's round: prefix "I love", draft D1..D4 = machine, learning, is, fun; the target
accepts D1 and D2 and rejects D3 (the KV-cache example). ``ARTICLE_DRAFT`` holds those four tokens.
"""

from __future__ import annotations

from fractions import Fraction

from specmath.laws import Law
from specmath.speculative.toy_lm import ToyLM

__all__ = ["WORDS", "ROUND_TARGET", "ROUND_DRAFT", "ROUND_PREFIX", "ARTICLE_DRAFT", "bigram_lm"]
__all__ += ["SPECULATIVE_EXAMPLE", "WORD_TARGET", "WORD_DRAFT", "PAPER_EXAMPLE"]

WORDS = ("I", "love", "machine", "learning", "is", "fun", "you", ".")

#: target p(next | last word), integer weights normalised exactly
TARGET_TABLE = {
    None: {"I": 1},
    "I": {"love": 3, "is": 1},
    "love": {"machine": 3, "you": 2, "learning": 1},
    "machine": {"learning": 4, "is": 1},
    "learning": {"is": 6, ".": 1, "fun": 1},
    "is": {"fun": 3, "machine": 1, "learning": 1},
    "fun": {".": 1},
    "you": {".": 2, "is": 1},
    ".": {"I": 1},
}

#: draft q(next | last word): sharper than the target, and wrong in places
DRAFT_TABLE = {
    None: {"I": 1},
    "I": {"love": 1},
    "love": {"machine": 2, "you": 1},
    "machine": {"learning": 1},
    "learning": {"is": 1},
    "is": {"fun": 1, "learning": 1},
    "fun": {".": 1},
    "you": {".": 1},
    ".": {"I": 1},
}


def bigram_lm(table: dict, name: str) -> ToyLM:
    """A toy LM whose law is table[last token] (None for the empty context), zeros filled in for WORDS."""

    def next_word(context: tuple) -> Law:
        last = context[-1] if context else None
        weights = table[last]
        return Law.from_weights({w: weights.get(w, 0) for w in WORDS}, name=f"{name}({last!r})")

    return ToyLM(next_word, WORDS, name=name)


ROUND_TARGET = bigram_lm(TARGET_TABLE, "target p")
ROUND_DRAFT = bigram_lm(DRAFT_TABLE, "draft q")
ROUND_PREFIX = ("I", "love")
ARTICLE_DRAFT = ("machine", "learning", "is", "fun")


#: a five-token example with zeros on both sides, used by ``specmath verify speculative-step``
SPECULATIVE_EXAMPLE = (
    Law({"a": Fraction(1, 2), "b": Fraction(1, 4), "c": Fraction(1, 8), "d": Fraction(1, 8), "e": 0}, name="p"),
    Law({"a": Fraction(1, 10), "b": Fraction(1, 2), "c": 0, "d": Fraction(1, 5), "e": Fraction(1, 5)}, name="q"),
)


def _word_pair() -> tuple[ToyLM, ToyLM]:
    # a context-dependent three-token world: the target likes to alternate, the draft is lazier
    vocab = ("x", "y", "z")

    def target(c: tuple) -> Law:
        last = c[-1] if c else None
        table = {None: (3, 2, 1), "x": (1, 4, 1), "y": (3, 1, 2), "z": (1, 1, 1)}[last]
        return Law.from_weights(dict(zip(vocab, table, strict=True)))

    def draft(c: tuple) -> Law:
        last = c[-1] if c else None
        table = {None: (2, 2, 0), "x": (1, 2, 1), "y": (2, 1, 1), "z": (1, 0, 1)}[last]
        return Law.from_weights(dict(zip(vocab, table, strict=True)))

    return ToyLM(target, vocab, name="word target"), ToyLM(draft, vocab, name="word draft")


#: the context-dependent example pair used by the notebook and the figures
WORD_TARGET, WORD_DRAFT = _word_pair()


def _paper_example() -> tuple[ToyLM, ToyLM]:
    p = Law({"a": Fraction(1, 3), "b": Fraction(2, 3)}, name="p")
    q = Law({"a": Fraction(2, 3), "b": Fraction(1, 3)}, name="q")
    return ToyLM(lambda c: p, ("a", "b"), name="target p"), ToyLM(lambda c: q, ("a", "b"), name="draft q")


#: Sun et al.'s block-verification example: context-free p = {a: 1/3, b: 2/3}, q = {a: 2/3, b: 1/3};
#: at gamma = 2 token-wise accepts 10/9 tokens per round, block verification 11/9
PAPER_EXAMPLE = _paper_example()
