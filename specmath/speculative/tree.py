"""Token-tree rounds: draft a tree of depth d, verify it in one target pass, emit a path and one token.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

A tree round (SpecInfer; EAGLE-2/3 trees in vLLM, SGLang and TensorRT-LLM; Medusa):

1. draft: the context gets ``branching[0]`` children, each of them ``branching[1]`` children, and so
   on to depth d = len(branching). The children of the node reached by path a are proposals for
   the token after prefix a, drawn from q(. | prefix a) in one of three ways (``TreeShape.children``):
   ``"iid"`` (independent draws, repeats possible), ``"without-replacement"`` (each draw from q
   renormalised over the tokens not drawn yet) or ``"top-k"`` (the k most likely tokens of q, no
   randomness: what EAGLE-2's and Medusa's drafters do);
2. score: one target pass with tree attention gives p(. | prefix a) at every node a at once;
3. walk: from the root, a verifier (``specmath.speculative.tree_verifiers``) either accepts one child
   (the walk goes on below it) or ends the round with a final token; at a leaf, a bonus token ~ p.

The round emits the accepted path plus one token: 1..d+1 tokens. ``tree_round`` is that program, the
reference meaning; ``tree_round_law`` computes the same law faster, by drafting each node's children
only when the walk reaches the node (the principle of deferred decisions: the children of a node the
walk never reaches do not change what is emitted, and every node's children are drawn independently of
the rest of the tree). The tests prove the two equal.

A chain of gamma drafts is the tree with branching (1,) * gamma; with the SpecInfer verifier and
i.i.d. children it is the standard round (``specmath.speculative.round``), proved equal in the tests.
Fair comparisons hold the number of drafted nodes (tokens the target scores) fixed: a chain of 6 and
the trees (2, 2) and (3, 1) all score 6 drafted tokens (``TreeShape.nodes``).

References: X. Miao et al., "SpecInfer", ASPLOS 2024 (arXiv 2305.09781); Y. Li et al., "EAGLE-2:
Faster Inference of Language Models with Dynamic Draft Trees", EMNLP 2024 (arXiv 2406.16858); T. Cai
et al., "Medusa", ICML 2024 (arXiv 2401.10774); W. Jeon et al., arXiv 2402.14160 (RSD).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from fractions import Fraction
from math import prod

from specmath.exact import exact
from specmath.laws import Law, tv_distance
from specmath.program import draw, tick
from specmath.speculative.round import LM, check_round_arguments, law_at
from specmath.speculative.tree_registry import tree_verifier_record
from specmath.speculative.tree_verifiers import (
    Final,
    TreeVerifier,
    law_without,
    without_replacement_verifier,
)
from specmath.speculative.variants import autoregressive_law, expected_accepted, generation_law_of
from specmath.validation import InvalidArgument, check_choice, check_integer

__all__ = [
    "CHILDREN",
    "TreeShape",
    "check_shape",
    "Node",
    "top_k_tokens",
    "draft_children",
    "draft_tree",
    "verify_tree",
    "node_step",
    "tree_round",
    "tree_round_law",
    "tree_generation_law",
    "accepted_per_round",
    "tv_by_verifier_and_children",
]

#: how the children of a node are drawn from q(. | the node's prefix)
CHILDREN = ("iid", "without-replacement", "top-k")


@dataclass(frozen=True)
class TreeShape:
    """A full draft tree: ``branching[i]`` children under every node at depth i, drawn as ``children``."""

    branching: tuple[int, ...]  # (2, 2): two children of the context, two under each of them
    children: str = "iid"  # one of CHILDREN

    def __post_init__(self) -> None:
        if isinstance(self.branching, (str, bytes)) or not hasattr(self.branching, "__iter__"):
            raise InvalidArgument(f"branching must be a tuple of ints >= 1 (children per level), got {self.branching!r}")
        branching = tuple(check_integer(k, "each branching factor", min_value=1) for k in self.branching)
        if not branching:
            raise InvalidArgument("branching must list at least one level (a tree of depth >= 1)")
        object.__setattr__(self, "branching", branching)
        check_choice(self.children, "way of drawing children", CHILDREN)

    @property
    def depth(self) -> int:
        """Levels of drafted tokens: the most tokens a round can accept."""
        return len(self.branching)

    @property
    def nodes(self) -> int:
        """Drafted tokens the target scores: sum_i prod_{j <= i} branching[j] ((2, 2): 2 + 4 = 6)."""
        return sum(prod(self.branching[: i + 1]) for i in range(self.depth))

    def __str__(self) -> str:
        return f"{'x'.join(map(str, self.branching))} {self.children}"


def check_shape(shape: object) -> TreeShape:
    """``shape`` when it is a TreeShape; else one InvalidArgument saying how to make one."""
    if not isinstance(shape, TreeShape):
        raise InvalidArgument(f"shape must be a TreeShape(branching, children), e.g. TreeShape((2, 2), 'top-k'), got {shape!r}")
    return shape


@dataclass(frozen=True)
class Node:
    """A drafted token and the subtree below it."""

    token: Hashable
    children: tuple  # of Node


def top_k_tokens(q: Law, k: int) -> tuple:
    """The k most likely tokens of q with q(x) > 0, most likely first (ties in q's listing order)."""
    listed = [x for x in q if q[x] > 0]
    ranked = sorted(range(len(listed)), key=lambda i: (-q[listed[i]], i))
    return tuple(listed[i] for i in ranked[:k])


def draft_children(q: Law, k: int, children: str):
    """Sampling program: the k children of one node, drawn from q as ``children`` says (in draw order).

    Without replacement, fewer than k children are drawn when q has fewer than k tokens of mass > 0.
    """
    if children == "top-k":
        return top_k_tokens(q, k)
    drawn: tuple = ()
    for _ in range(k if children == "iid" else min(k, len(q.support))):
        law = q if children == "iid" else law_without(q, drawn)
        drawn += ((yield draw(law, label="draft")),)
    return drawn


def draft_tree(draft: LM, prefix: tuple, shape: TreeShape):
    """Sampling program: the whole draft tree below ``prefix``, as a tuple of the context's child Nodes."""
    return (yield from _draft_below(draft, prefix, shape.branching, shape.children))


def _draft_below(draft: LM, context: tuple, branching: tuple, children: str):
    if not branching:
        return ()
    tokens = yield from draft_children(law_at(draft, context, "draft"), branching[0], children)
    nodes = []
    for x in tokens:
        below = yield from _draft_below(draft, context + (x,), branching[1:], children)
        nodes.append(Node(x, below))
    return tuple(nodes)


def verify_tree(target: LM, draft: LM, prefix: tuple, tree: tuple, verifier: TreeVerifier):
    """Sampling program: walk the drafted tree from the root with ``verifier``; return the emitted tuple."""
    # one target pass with tree attention scores every node of the tree
    yield tick("target")
    accepted: tuple = ()
    nodes = tree
    while nodes:
        context = prefix + accepted
        p, q = law_at(target, context, "target"), law_at(draft, context, "draft")
        verdict = yield from verifier(p, q, tuple(node.token for node in nodes))
        if isinstance(verdict, Final):
            return accepted + (verdict.token,)
        accepted += (nodes[verdict].token,)
        nodes = nodes[verdict].children
    # a leaf: its position's law was scored too, so a bonus token comes for free
    bonus = yield draw(law_at(target, prefix + accepted, "target"), label="bonus")
    return accepted + (bonus,)


def tree_round(target: LM, draft: LM, prefix: tuple, shape: TreeShape, verifier: TreeVerifier):
    """Sampling program for one tree round: ``draft_tree`` then ``verify_tree``; returns the emitted tuple."""
    prefix = check_round_arguments(prefix, check_shape(shape).depth)
    tree = yield from draft_tree(draft, prefix, shape)
    emitted = yield from verify_tree(target, draft, prefix, tree, verifier)
    return emitted


def node_step(p: Law, q: Law, k: int, children: str, verifier: TreeVerifier):
    """Sampling program: draft one node's children and verify them: ("accept", x) or ("final", y)."""
    tokens = yield from draft_children(q, k, children)
    verdict = yield from verifier(p, q, tokens)
    return ("final", verdict.token) if isinstance(verdict, Final) else ("accept", tokens[verdict])


def _verifier(verifier: TreeVerifier | str) -> TreeVerifier:
    return tree_verifier_record(verifier).verifier if isinstance(verifier, str) else verifier


def tree_round_law(target: LM, draft: LM, prefix: tuple, shape: TreeShape, verifier: TreeVerifier | str) -> Law:
    """Exact law of the tuple one tree round emits, by recursion over accepted paths.

    With N_a the law of one node's step at path a (children drafted, then verified)::

        R(a x ...) += w(a) N_a(accept x)   (go on below x),   R(a y) += w(a) N_a(final y),
        and at depth d: R(a y) = w(a) p(y | prefix a) (the bonus token).

    Equal to ``exact(tree_round, target, draft, prefix, shape, verifier).law`` (proved in the tests).
    """
    prefix = check_round_arguments(prefix, check_shape(shape).depth)
    verifier = _verifier(verifier)
    out: dict[tuple, Fraction] = {}
    steps: dict[tuple, Law] = {}  # a node's step depends only on (p, q, k): contexts often share them

    def visit(accepted: tuple, weight: Fraction) -> None:
        context = prefix + accepted
        p = law_at(target, context, "target")
        if len(accepted) == shape.depth:
            for y, py in p.items():
                if py:
                    out[accepted + (y,)] = out.get(accepted + (y,), Fraction(0)) + weight * py
            return
        q = law_at(draft, context, "draft")
        k = shape.branching[len(accepted)]
        if (p, q, k) not in steps:
            steps[p, q, k] = exact(node_step, p, q, k, shape.children, verifier).law
        for (kind, token), w in steps[p, q, k].items():
            if kind == "accept":
                visit(accepted + (token,), weight * w)
            elif w:
                out[accepted + (token,)] = out.get(accepted + (token,), Fraction(0)) + weight * w

    visit((), Fraction(1))
    return Law(out, name="tree round law")


def tree_generation_law(target: LM, draft: LM, prefix: tuple, shape: TreeShape, length: int,
                        verifier: TreeVerifier | str) -> Law:
    """Law of the first ``length`` tokens of repeated tree rounds (lossless iff it equals autoregressive_law)."""
    prefix = check_round_arguments(prefix, check_shape(shape).depth)
    verifier = _verifier(verifier)
    return generation_law_of(lambda c: tree_round_law(target, draft, c, shape, verifier), prefix, length)


def accepted_per_round(target: LM, draft: LM, prefix: tuple, shapes: list[TreeShape],
                       verifier: TreeVerifier | str) -> dict[TreeShape, Fraction]:
    """E[accepted draft tokens per round] = E[|emitted|] - 1 for each shape, exactly."""
    return {shape: expected_accepted(tree_round_law(target, draft, prefix, shape, verifier)) for shape in shapes}


def tv_by_verifier_and_children(target: LM, draft: LM, prefix: tuple, branching: tuple, length: int,
                                verifiers: dict[str, TreeVerifier]) -> dict[tuple[str, str], Fraction | None]:
    """(verifier name, children) -> TV(tree generation law, autoregressive law) over ``length`` tokens, exactly.

    None where the verifier refuses the children: without replacement, given i.i.d. children (they repeat).
    """
    wanted = autoregressive_law(target, prefix, length)
    out: dict[tuple[str, str], Fraction | None] = {}
    for name, verifier in verifiers.items():
        for children in CHILDREN:
            if verifier is without_replacement_verifier and children == "iid":
                out[name, children] = None
                continue
            law = tree_generation_law(target, draft, prefix, TreeShape(branching, children), length, verifier)
            out[name, children] = tv_distance(law, wanted)
    return out
