"""Lossy tree verification: exact laws and float samplers of what engines and papers deploy over token trees.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

A ``TreeBug`` is a ``ZooEntry`` (``specmath.bugzoo.zoo``: the round program, its smallest instance,
the exact law of the first ``length`` generated tokens of repeated lossy rounds, the exact TV from the
target's autoregressive law, and its source) with a float sampler over batched trees in the layout of
``specmath.speculative.tree_reference`` (so an auditor can wrap it). ``correct_verifier`` names the
lossless verifier for the same drafted tree (TV exactly 0 on the same instance).

Entries (``TREE_BUGS``), each with its status in its claim record:

* ``top-k-children-specinfer-rule``: EAGLE-2-style trees (the draft's top-k tokens as children, no
  randomness) verified by SpecInfer's rule, which is a standard step per child and so needs each
  child to be an independent draw x ~ q. A top-k child is there with probability 1, not q(x). No
  engine is claimed to do this: EAGLE's own code judges top-k children with q(x) = 1.
* ``top-k-siblings-no-residual``: the rule TensorRT-LLM's EAGLE-3 dynamic-tree rejection kernel had
  until PR #15098 replaced it (claim tensorrt-llm-sibling-rule): every top-K sibling was tested with min(1, p(x)/q(x)) against the
  *same* p and q, and all-rejected corrected from norm(max(0, p - q)). With one sampled child per node
  that is the standard step; with two or more siblings it is lossy.
* ``medusa-typical-acceptance``: Medusa's fast mode (the default), greedy first token and typical
  acceptance of the heads' top-k tree: deterministic by design (claim medusa-fast-mode;
  ``specmath.bugzoo.typical_acceptance``).
* ``typical-acceptance-sampled-correction``: typical acceptance on a sampled chain, lossy by design:
  tokens with p(x) above the threshold are kept, the next position takes y ~ p (vLLM V0 took argmax p
  after a rejection: ``TypicalAcceptance.argmax_correction``; claim vllm-v0-typical-acceptance).

SGLang's target-only kernel and EAGLE's reference code are lossless on their top-k trees (proved by
``specmath verify tree-target-only``); the SGLang kernel's running sum assumes distinct siblings, and
``node_token_law`` gives the law it emits at a node with any children (a repeated one included).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np

from specmath.bugzoo.claims import CLAIMS
from specmath.bugzoo.typical_acceptance import TypicalAcceptance, greedy_token, sample_typical_rounds, typical_round
from specmath.bugzoo.zoo import ZooEntry
from specmath.exact import exact
from specmath.laws import Law
from specmath.program import coin, draw
from specmath.speculative.round import law_at
from specmath.speculative.toy_lm import ToyLM
from specmath.speculative.tree import TreeShape, tree_generation_law, tree_round
from specmath.speculative.tree_examples import TREE_DRAFT, TREE_TARGET
from specmath.speculative.tree_reference import TreeArrays, draft_tree_arrays, sample_tree_rounds
from specmath.speculative.tree_verifiers import Final, specinfer_verifier
from specmath.speculative.variants import autoregressive_law

__all__ = ["TreeInstance", "TreeBug", "greedy_root_arrays", "sibling_rule_without_residual", "MEDUSA", "VLLM_TYPICAL", "TREE_BUGS",
           "node_token_law"]


@dataclass(frozen=True)
class TreeInstance:
    """A target/draft pair, a tree shape, a prefix and the number of generated tokens compared."""

    target: ToyLM
    draft: ToyLM
    shape: TreeShape
    prefix: tuple = ()
    length: int = 1
    description: str = ""


@dataclass(frozen=True, kw_only=True)
class TreeBug(ZooEntry):
    """A lossy tree verifier: the zoo's entry (``ZooEntry``) with trees and a float sampler over batched trees."""

    sample_rounds: Callable  # (TreeArrays, rng) -> [N, depth + 1] emitted token ids, -1 padded
    correct_verifier: str = "target-only"  # lossless on the same drafted tree
    greedy_root: bool = False  # the float trees start with node 0 = argmax p (Medusa)

    def target_law(self) -> Law:
        """prod_i p(x_i | prefix x_<i): what the user asked for."""
        inst = self.instance()
        return autoregressive_law(inst.target, inst.prefix, inst.length)

    def correct_law(self) -> Law:
        """The same trees verified by ``correct_verifier``: equals ``target_law``."""
        inst = self.instance()
        return tree_generation_law(inst.target, inst.draft, inst.prefix, inst.shape, inst.length, self.correct_verifier)

    def float_counts(self, n: int, rng: np.random.Generator) -> Counter:
        """Emitted tuples of ``n`` float rounds at the instance's prefix (trees drawn from the toy draft)."""
        inst = self.instance()
        if self.greedy_root:
            arrays = greedy_root_arrays(inst, n, rng)
        else:
            arrays = draft_tree_arrays(inst.target, inst.draft, inst.prefix, inst.shape, n, rng)
        out = self.sample_rounds(arrays, rng)
        return Counter(tuple(arrays.vocabulary[i] for i in row if i >= 0) for row in out)


def greedy_root_arrays(inst: TreeInstance, n: int, rng: np.random.Generator) -> TreeArrays:
    """Medusa's layout: node 0 is argmax p(. | prefix), the drafted tree hangs below it."""
    first = greedy_token(law_at(inst.target, inst.prefix, "target"))
    below = draft_tree_arrays(inst.target, inst.draft, inst.prefix + (first,), inst.shape, n, rng)
    vocab = below.vocabulary
    root_row = np.array([float(law_at(inst.target, inst.prefix, "target")[x]) for x in vocab])
    parents = np.concatenate([[-1], np.where(below.parents < 0, 0, below.parents + 1)])
    # row 0: p(. | prefix); node 0's rows: p(. | prefix first) and, as its draft row, the law it was chosen from
    target_probs = np.concatenate([np.broadcast_to(root_row, (n, 1, len(vocab))), below.target_probs], axis=1)
    draft_probs = np.concatenate([np.broadcast_to(root_row, (n, 1, len(vocab))), below.draft_probs], axis=1)
    tokens = np.concatenate([np.full((n, 1), vocab.index(first)), below.draft_tokens], axis=1)
    return TreeArrays(parents, target_probs, draft_probs, tokens, vocab)


def node_token_law(verifier: Callable, p: Law, q: Law, children: tuple) -> Law:
    """Exact law of the token a verifier emits at one node with these children: the accepted child, or its final token.

    With SGLang's target-only rule and k copies of one token t as the children (its n-gram drafter's
    padding), P(t) = min(1, k p(t)): the running sum p(x_1) + ... + p(x_j) counts every copy.
    """
    verdicts = exact(verifier, p, q, tuple(children)).law
    return verdicts.map(lambda verdict: verdict.token if isinstance(verdict, Final) else children[verdict])


def sibling_rule_without_residual(p: Law, q: Law, children: tuple):
    """Each sibling accepted with min(1, p(x)/q(x)) against the same p and q; all rejected: y ~ norm(max(0, p - q))."""
    for j, x in enumerate(children):
        if (yield coin(min(Fraction(1), p[x] / q[x]), label="accept")):
            return j
    excess = {y: max(Fraction(0), p[y] - q[y]) for y in p}
    # the kernel samples p itself when the residual mass is zero (p == q)
    y = yield draw(Law.from_weights(excess) if any(excess.values()) else p, label="resample")
    return Final(y)


def _sibling_rule_floats(p, q, tokens, valid, rng):
    m = p.shape[0]
    rows = np.arange(m)
    chosen = np.full(m, -1)
    for j in range(tokens.shape[1]):
        live = valid[:, j] & (chosen < 0)
        x = tokens[:, j]
        chosen[live & (rng.random(m) * q[rows, j, x] < p[rows, x])] = j
    # the correction uses the first sibling's draft row (siblings share it) and never an updated p
    excess = np.maximum(p - q[:, 0], 0.0)
    empty = excess.sum(axis=1) <= 0
    excess[empty] = p[empty]
    return chosen, excess


def _round_with(round_program: Callable, rule) -> Callable:
    """A program (instance, context) -> emitted tuple: ``round_program(target, draft, context, shape, rule)``."""

    def lossy_round(inst: TreeInstance, context: tuple):
        emitted = yield from round_program(inst.target, inst.draft, context, inst.shape, rule)
        return emitted

    lossy_round.__name__ = f"{round_program.__name__}_with_{getattr(rule, '__name__', type(rule).__name__)}"
    return lossy_round


def _floats_with(sampler: Callable, **options) -> Callable:
    return lambda arrays, rng: sampler(arrays.parents, arrays.target_probs, arrays.draft_probs, arrays.draft_tokens, rng, **options)


def _example(shape: TreeShape, length: int, prefix: tuple = ()) -> Callable[[], TreeInstance]:
    def table(law: Law) -> str:
        return "{" + ", ".join(f"{x}: {w}" for x, w in law.items()) + "}"

    def make() -> TreeInstance:
        where = f"after {prefix!r}" if prefix else "at the start"
        p, q = TREE_TARGET(prefix), TREE_DRAFT(prefix)
        tokens = "1 token" if length == 1 else f"{length} tokens"
        text = f"tree pair, p = {table(p)}, q = {table(q)} {where} (laws depend on the last token); {shape} tree; {tokens}"
        return TreeInstance(TREE_TARGET, TREE_DRAFT, shape, prefix, length, text)

    return make


MEDUSA = TypicalAcceptance()
VLLM_TYPICAL = replace(MEDUSA, greedy_first=False)

#: the entries of the tree zoo (kept apart from ``BUGS``, whose samplers take chains)
TREE_BUGS: tuple[TreeBug, ...] = (
    TreeBug(
        name="top-k-children-specinfer-rule",
        explanation="SpecInfer's rule accepts x with min(1, p(x)/q(x)) assuming x ~ q; a top-k child is proposed with probability 1, so tokens the draft ranks first are over-sampled",
        modelled_on="EAGLE-2's top-k trees (Li et al. 2024) under SpecInfer's multi-step speculative sampling (Miao et al. ASPLOS 2024, Theorem 4.2 assumes i.i.d. children); EAGLE's own code judges them with q(x) = 1 instead (claim eagle-one-hot-q)",
        make_instance=_example(TreeShape((2, 2), "top-k"), 2, ("c",)),
        lossy_round=_round_with(tree_round, specinfer_verifier),
        sample_rounds=_floats_with(sample_tree_rounds, verifier="specinfer"),
    ),
    TreeBug(
        name="top-k-siblings-no-residual",
        explanation="every top-K sibling is tested with min(1, p/q) against the same p and q and the correction comes from norm(max(0, p - q)): the residual is not updated after a rejected sibling, and the children are not draws from q",
        claim=CLAIMS["tensorrt-llm-sibling-rule"],
        make_instance=_example(TreeShape((2, 2), "top-k"), 2, ("c",)),
        lossy_round=_round_with(tree_round, sibling_rule_without_residual),
        sample_rounds=_floats_with(sample_tree_rounds, verifier=_sibling_rule_floats),
    ),
    TreeBug(
        name="medusa-typical-acceptance",
        explanation="fast mode (the default) takes argmax p as each round's first token and keeps candidates with p(x) > min(0.09, 0.3 exp(-H)): no token is ever sampled, the output is one sequence",
        claim=CLAIMS["medusa-fast-mode"],
        make_instance=_example(TreeShape((2, 2), "top-k"), 3),
        lossy_round=_round_with(typical_round, MEDUSA),
        sample_rounds=_floats_with(sample_typical_rounds, rule=MEDUSA),
        greedy_root=True,
    ),
    TreeBug(
        name="typical-acceptance-sampled-correction",
        explanation="draft tokens with p(x) > min(0.09, 0.3 exp(-H)) are kept whatever q was, so tokens the draft over-proposes are over-sampled; the next position takes y ~ p (vLLM V0 took argmax p after a rejection)",
        claim=CLAIMS["vllm-v0-typical-acceptance"],
        make_instance=_example(TreeShape((1, 1), "iid"), 3),
        lossy_round=_round_with(typical_round, VLLM_TYPICAL),
        sample_rounds=_floats_with(sample_typical_rounds, rule=VLLM_TYPICAL),
        correct_verifier="specinfer",
    ),
)
