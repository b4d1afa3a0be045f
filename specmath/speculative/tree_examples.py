"""Example pair and tree shapes of the tree track: a draft that is unsure where the target is.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

``TREE_TARGET`` and ``TREE_DRAFT`` are toy LMs over {a, b, c} whose law depends on the last token.
At the start p = {a: 3/10, b: 1/5, c: 1/2} and q = {a: 1/2, b: 1/10, c: 2/5}: the draft's favourite
(a) is not the target's (c), so a single draft token is often wrong and a second child is worth
scoring; after c the draft's top two (a, c) miss the target's favourite b, which is what makes
top-k trees and Medusa's greedy-then-typical rounds go wrong. Two tokens have p > q at the start, so
SpecInfer's rule on children drawn without replacement shows its loss here.
``EQUAL_NODE_SHAPES`` are the fair comparisons: every shape drafts six tokens
for the target to score (a chain of six, 6 children of the root, 3 x 1, 2 x 2), they differ in depth
(the sequential draft passes) and width.
"""

from __future__ import annotations

from specmath.laws import Law
from specmath.speculative.toy_lm import ToyLM
from specmath.speculative.tree import TreeShape

__all__ = ["TREE_VOCABULARY", "TREE_TARGET", "TREE_DRAFT", "EQUAL_NODE_SHAPES", "tree_pair"]

TREE_VOCABULARY = ("a", "b", "c")

#: integer weights over (a, b, c) after each last token (None: the empty context)
_TARGET_WEIGHTS = {None: (3, 2, 5), "a": (1, 4, 3), "b": (4, 1, 3), "c": (3, 4, 1)}
_DRAFT_WEIGHTS = {None: (5, 1, 4), "a": (1, 3, 4), "b": (3, 1, 4), "c": (4, 1, 3)}


def tree_pair(target_weights: dict, draft_weights: dict, vocabulary: tuple = TREE_VOCABULARY) -> tuple[ToyLM, ToyLM]:
    """Toy LMs whose law after last token t is weights[t] normalised (weights[None] for the empty context)."""

    def lm(weights: dict, name: str) -> ToyLM:
        def law(context: tuple) -> Law:
            return Law.from_weights(dict(zip(vocabulary, weights[context[-1] if context else None], strict=True)), name=name)

        return ToyLM(law, vocabulary, name=name)

    return lm(target_weights, "tree target p"), lm(draft_weights, "tree draft q")


TREE_TARGET, TREE_DRAFT = tree_pair(_TARGET_WEIGHTS, _DRAFT_WEIGHTS)

#: six drafted tokens each: the fair comparison of a chain with trees
EQUAL_NODE_SHAPES = (TreeShape((1,) * 6), TreeShape((6,)), TreeShape((3, 1)), TreeShape((2, 2)), TreeShape((2, 1, 1)))
