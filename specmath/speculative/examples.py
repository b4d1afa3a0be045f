"""Hand-written toy LMs for multi-token rounds: the article's "I love machine learning is" world.

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

from ..laws import Law
from ..toy_lm import ToyLM

__all__ = ["WORDS", "ROUND_TARGET", "ROUND_DRAFT", "ROUND_PREFIX", "ARTICLE_DRAFT", "bigram_lm"]

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
