"""The tree battery: target/draft pairs and tree shapes on which a tree verifier's loss shows.

Notation: p = target law, q = draft law, gamma = draft tokens per round (for a tree: its nodes),
alpha = sum_x min(p(x), q(x)). Tokens are vocabulary indices 0..V-1.

A case is a pair of toy LMs and a full tree shape (``branching``: children per node at each level,
laid out by ``specmath.speculative.tree_reference.tree_parents``). The auditor drafts the tree itself,
in the way the sampler's verifier assumes (``children``: i.i.d., without replacement or top-k), so one
case serves every verifier.

What is tested does not depend on the verifier. Lossless verifiers emit different paths (SpecInfer and
SGLang's target-only rule accept different children of the same tree), so their round laws differ;
what every lossless round has in common is that what it emits is the start of a p-sample. The
auditor completes each emitted tuple to depth + 1 tokens with its own draws from p, and the
*completed* law must be the autoregressive law (``specmath.speculative.variants.completion_law_of``):

    C(s) = sum_{e prefix of s} R(e) prod_{i > |e|} p(s_i | s_<i)  ==  A(s) = prod_{i <= d+1} p(s_i | s_<i)

for every s of d + 1 tokens, d the tree's depth. (If C = A at every context, repeated rounds
generate p's law, by induction on the number of rounds; if repeated rounds are lossless at every
context, C is the round followed by a lossless generation, so C = A.) The per-position laws are A's
marginals. ``completed_tv`` is the exact TV(C, A) of a round law on a case: the TV the audit sees.

The cases vary what breaks tree verifiers: several children at the root (2, 3), a second level
(2x2), a long single chain below wide roots (3x1, 2x1x1), zeros on either side, disjoint supports
(every child rejected), q = p (every first child accepted), and a 64-token vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from specmath.audit.rounds.cases import ExpectedLaws, _dense, _restricted, _sparse_wide, named_cases, position_law
from specmath.laws import Law, tv_distance
from specmath.speculative.toy_lm import ToyLM, random_toy_lm
from specmath.speculative.tree import TreeShape
from specmath.speculative.tree_examples import TREE_DRAFT, TREE_TARGET
from specmath.speculative.tree_reference import tree_parents
from specmath.speculative.variants import autoregressive_law, completion_law_of

__all__ = ["TreeAuditCase", "TREE_BATTERY", "tree_case_named", "tree_cases_named", "completed_tv"]


@dataclass(frozen=True)
class TreeAuditCase:
    """One target/draft pair and a full tree shape, with what it is there to expose."""

    name: str
    target: ToyLM
    draft: ToyLM
    branching: tuple[int, ...]  # (2, 2): two children of the context, two under each
    description: str
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def vocab_size(self) -> int:
        return len(self.target.vocabulary)

    @property
    def depth(self) -> int:
        return len(self.branching)

    @property
    def parents(self) -> np.ndarray:
        """Parent indices of the tree, breadth first ((2, 2): [-1, -1, 0, 0, 1, 1])."""
        return tree_parents(TreeShape(self.branching))

    @property
    def nodes(self) -> int:
        """Drafted tokens per round (gamma of a tree)."""
        return TreeShape(self.branching).nodes

    @property
    def shape_text(self) -> str:
        return "x".join(map(str, self.branching))

    def expected(self) -> ExpectedLaws:
        """A(depth + 1), the law every completed round must have, and its per-position marginals."""
        if "expected" not in self._cache:
            joint = autoregressive_law(self.target, (), self.depth + 1)
            self._cache["expected"] = ExpectedLaws(joint, tuple(position_law(joint, i) for i in range(self.depth + 1)))
        return self._cache["expected"]

    def raw_rows(self, context: tuple, model: str) -> np.ndarray:
        """float64 probabilities p(. | context) (model "p") or q(. | context) (model "q")."""
        key = (model, context)
        if key not in self._cache:
            law = (self.target if model == "p" else self.draft)(context)
            self._cache[key] = np.array([float(law[x]) for x in range(self.vocab_size)])
        return self._cache[key]


def completed_tv(case: TreeAuditCase, round_law: Law) -> Fraction:
    """TV(C, A): the round law completed with p to depth + 1 tokens against the autoregressive law, exactly."""
    return tv_distance(completion_law_of(round_law, case.target, (), case.depth + 1), case.expected().joint)


def _indexed(lm: ToyLM) -> ToyLM:
    """``lm`` over the indices 0..V-1 of its vocabulary (the tree example's "a", "b", "c" become 0, 1, 2)."""
    vocab = lm.vocabulary

    def fn(context: tuple) -> Law:
        law = lm(tuple(vocab[i] for i in context))
        return Law({i: law[x] for i, x in enumerate(vocab)})

    return ToyLM(fn, range(len(vocab)), name=f"{lm.name} (indexed)")


def _battery() -> tuple[TreeAuditCase, ...]:
    cases = []

    def add(name: str, target: ToyLM, draft: ToyLM, branching: tuple, description: str) -> None:
        shape = "x".join(map(str, branching))
        cases.append(TreeAuditCase(name, target, draft, branching, f"{shape} tree, {description}"))

    add("tree-example-2x2", _indexed(TREE_TARGET), _indexed(TREE_DRAFT), (2, 2),
        "V=3, the tree track's example pair: the draft's favourite is not the target's")
    add("tree-context-2", random_toy_lm(4, 211, zero_probability=0.2), _dense(4, 212), (2,),
        "V=4, p (with zeros) and q depend on position and the last two tokens")
    add("tree-context-3", random_toy_lm(5, 221, zero_probability=0.2), _dense(5, 222), (3,),
        "V=5, three children of the root, p with zeros")
    add("tree-context-3x1", random_toy_lm(4, 231, zero_probability=0.2), _dense(4, 232), (3, 1),
        "V=4, a chain of two below each of three roots")
    add("tree-context-2x1x1", random_toy_lm(3, 241, zero_probability=0.1), _dense(3, 242), (2, 1, 1),
        "V=3, depth 3: a wrong row at the third level shows")
    add("tree-zeros-in-target-2x2",
        _restricted(_dense(5, 251), lambda c: {x for x in range(5) if x != len(c) % 5 and x != 4}, "p with zeros"),
        _dense(5, 252), (2, 2), "V=5, p(4) = 0 and p(depth) = 0, q dense: a child of p = 0 must never be emitted")
    add("tree-zeros-in-draft-3", _dense(5, 261),
        _restricted(_dense(5, 262), lambda c: {x for x in range(5) if x not in (0, (len(c) + 1) % 5)}, "q with zeros"),
        (3,), "V=5, q(0) = 0 and one more zero, p dense: those tokens come only from the residual or bonus")
    add("tree-disjoint-supports-2",
        _restricted(_dense(5, 271), lambda c: {0, 1}, "p on {0, 1}"),
        _restricted(_dense(5, 272), lambda c: {2, 3, 4}, "q on {2, 3, 4}"), (2,),
        "V=5, p on {0, 1}, q on {2, 3, 4}: every child is rejected, the final token is p's")
    dense = _dense(4, 281)
    add("tree-p-equals-q-2x2", dense, dense, (2, 2), "V=4, q = p: a lossless verifier's law is p's whatever it accepts")
    add("tree-sparse-v64-2x2", _sparse_wide(64, 291, 8), _sparse_wide(64, 292, 8), (2, 2),
        "V=64, p and q each on 8 scattered tokens (always 0 and 63), depending on the last token")
    return tuple(cases)


#: the tree battery, in the order the audit runs it
TREE_BATTERY: tuple[TreeAuditCase, ...] = _battery()


def tree_case_named(name: str) -> TreeAuditCase:
    """The tree case called ``name`` (``UnknownName`` listing the names, with the nearest one, otherwise)."""
    return named_cases(name, TREE_BATTERY, TreeAuditCase, "tree audit case")[0]


def tree_cases_named(cases: object) -> tuple[TreeAuditCase, ...]:
    """None (the whole tree battery), a case name, or a list of names and ``TreeAuditCase`` objects."""
    return named_cases(cases, TREE_BATTERY, TreeAuditCase, "tree audit case")
