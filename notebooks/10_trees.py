# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 10 · Token trees: SpecInfer, EAGLE-2, SGLang and Medusa, exactly
#
# **What you will learn**
# - how a token tree is drafted (independent, without-replacement or top-k children) and verified in one
#   target pass, written as one sampling program and proved lossless with fractions;
# - why SpecInfer's recursive rejection needs each child to be an independent draw from q, and what goes
#   wrong with the deterministic top-k children that EAGLE-2 and Medusa draft;
# - the rules that are exact for top-k trees: SGLang's target-only sampling (draw from p, keep the matching
#   child) and recursive rejection without replacement (Jeon et al. 2024);
# - a chain against trees that draft the same number of tokens: the exact expected accepted tokens per round;
# - Medusa's typical acceptance: its irrational threshold decided exactly, and the exact TV it costs over a
#   grid of its two parameters;
# - how engines lay a tree out (parent indices, one target row per node) and a batched float sampler
#   checked against the exact law.
#
# **Notation** (as in every notebook): $p$ = target law, $q$ = draft law, $\gamma$ = draft tokens per
# round, $\alpha = \sum_x \min(p(x), q(x))$. A round is *lossless* when the first $n$ generated tokens of
# repeated rounds have exactly the autoregressive law $\prod_i p(x_i \mid \text{prefix}\, x_{<i})$.

# %% tags=["remove-cell"]
from dataclasses import replace
from fractions import Fraction

import numpy as np

from specmath import exact, sample, show, tv_distance
from specmath.bugzoo import TREE_BUGS
from specmath.bugzoo.claims import CLAIMS
from specmath.bugzoo.typical_acceptance import TypicalAcceptance, exceeds_typical_threshold, typical_generation_law
from specmath.laws import Law
from specmath.plots.tree_plots import plot_tree_accepted, plot_tree_rule_tv, plot_typical_acceptance_tv
from specmath.speculative import autoregressive_law
from specmath.speculative.tree import (
    TreeShape,
    accepted_per_round,
    draft_children,
    draft_tree,
    node_step,
    tree_generation_law,
    tree_round,
    tree_round_law,
    verify_tree,
)
from specmath.speculative.tree_examples import EQUAL_NODE_SHAPES, TREE_DRAFT, TREE_TARGET
from specmath.speculative.tree_reference import draft_tree_arrays, sample_tree_rounds
from specmath.speculative.tree_registry import LOSSLESS_CHILDREN
from specmath.speculative.tree_verifiers import recursive_rejection, specinfer_verifier, target_only_verifier
from specmath.stats import detectable_tv, g_test

# %%
for context in [(), ("a",), ("b",), ("c",)]:
    print(f"after {context}: p = {dict(TREE_TARGET(context))}, q = {dict(TREE_DRAFT(context))}")

# %% [markdown]
# The example pair lives in `specmath.speculative.tree_examples`: three tokens, each law depends on the last
# token. At the start the draft's favourite (a, q = 1/2) is not the target's (c, p = 1/2), and after c the
# draft's two best guesses (a, c) both miss the target's favourite b. A single draft token is often wrong; a tree
# scores a second guess in the same target pass.
#
# ## 1. A tree round is one program
# A tree of shape (2, 2) gives the context two children and each of them two children: 6 drafted tokens.
# The target scores all of them in one pass (tree attention: each node attends only to its ancestors), then
# a verifier walks down from the root: at each node it accepts one child or stops with a final token; at a
# leaf a bonus token comes for free. The round is the program below; the children are drawn by `draft_children`.

# %%
show(tree_round)

# %%
show(draft_children)

# %%
show(verify_tree)

# %% [markdown]
# SpecInfer's verifier is *recursive rejection*: a standard speculative step per child, where a rejected
# child turns the target into the residual $\operatorname{norm}(\max(0, p^{(j)} - q))$ for the next child:

# %%
show(specinfer_verifier)

# %%
show(recursive_rejection)

# %% [markdown]
# Running the drafting part with the sampled interpreter draws one tree; the exact interpreter enumerates them all.


# %%
def tree_text(nodes, depth=0):
    """The drafted tree, one node per line, children indented below their parent."""
    return "".join("  " * depth + f"- {node.token}\n" + tree_text(node.children, depth + 1) for node in nodes)


shape = TreeShape((2, 2), "iid")
print(f"{shape}: {shape.nodes} drafted tokens, depth {shape.depth}")
print(tree_text(sample(draft_tree, TREE_DRAFT, (), shape, rng=np.random.default_rng(3))))

# %%
law = tree_round_law(TREE_TARGET, TREE_DRAFT, (), shape, "specinfer")
program = exact(tree_round, TREE_TARGET, TREE_DRAFT, (), shape, specinfer_verifier)
assert program.law == law  # one program, two meanings (tree_round_law drafts a node only when the walk gets there)
assert program.expected_cost("target") == 1  # one target pass per round
for emitted, w in sorted(law.items(), key=lambda item: -item[1])[:6]:
    print(f"{str(w):>10}  {' '.join(emitted)}")
print(f"... {len(law)} outcomes; E[accepted draft tokens] = {law.expectation(len) - 1}")

# %% [markdown]
# ## 2. Lossless, exactly, when the children are what the rule assumes
# Each verifier is proved for the children it assumes (`LOSSLESS_CHILDREN`): SpecInfer for independent
# draws, recursive rejection without replacement (Jeon et al. 2024, RSD) for children drawn without
# replacement, SGLang's target-only rule for any *distinct* children, top-k included. Three generated tokens
# of repeated 2 x 2 rounds against the target's autoregressive law:

# %%
wanted = autoregressive_law(TREE_TARGET, (), 3)
for verifier, modes in LOSSLESS_CHILDREN.items():
    for children in modes:
        generated = tree_generation_law(TREE_TARGET, TREE_DRAFT, (), TreeShape((2, 2), children), 3, verifier)
        assert generated == wanted
        print(f"{verifier:20s} with {children:20s} children: law == autoregressive law over {len(wanted)} sequences")

# %% [markdown]
# ## 3. Why deterministic children break recursive rejection
# SpecInfer's proof (and the one-step proof of notebook 01) starts from $P(\text{propose } x) = q(x)$:
# the step keeps $x$ with $\min(1, p(x)/q(x))$, so $x$ is kept with probability $\min(p(x), q(x))$. A top-k
# child is proposed with probability **1**. With the top-1 child a at the start, SpecInfer's rule keeps it
# with $p(a)/q(a) = (3/10)/(1/2) = 3/5$, twice the $3/10$ the target gives it:

# %%
p, q = TREE_TARGET(()), TREE_DRAFT(())
emitted_specinfer = exact(node_step, p, q, 1, "top-k", specinfer_verifier).law.map(lambda outcome: outcome[1])
emitted_target_only = exact(node_step, p, q, 1, "top-k", target_only_verifier).law.map(lambda outcome: outcome[1])
print("target p           :", dict(p))
print("SpecInfer, top-1   :", dict(emitted_specinfer))
print("target-only, top-1 :", dict(emitted_target_only))
assert emitted_specinfer["a"] == Fraction(3, 5) and emitted_target_only == p

# %% [markdown]
# The fix is to judge a child against the law it was really drawn from. A top-k child's law is one-hot:
# keep $x$ with $p^{(j)}(x)$, else remove $x$ from $p^{(j)}$ and renormalise. That is what EAGLE's own code
# does (`qx = 1.0` in `evaluate_posterior`, SafeAILab/EAGLE at cb7e0841, eagle/model/utils.py line 398: claim
# eagle-one-hot-q), and it is SGLang's target-only kernel: one uniform $u$ per node,
# child $j$ kept when $u \le p(x_1) + \dots + p(x_j)$, i.e. "draw $y \sim p$, keep the child equal to $y$":

# %%
show(target_only_verifier)

# %% [markdown]
# Each rule against each way of drawing children, exact TV from $p$ over three tokens. The last row is the
# rule TensorRT-LLM's EAGLE-3 dynamic-tree kernel had until PR #15098 replaced it with a target-only rule:
# every top-K sibling tested with $\min(1, p/q)$ against the *same* $p$ and $q$, the correction from
# $\operatorname{norm}(\max(0, p - q))$. With two siblings it is lossy for every kind of children (with one
# sampled child per node it would be the standard step). SGLang's running sum counts a repeated child twice,
# so with i.i.d. children (which repeat) it is lossy too: its EAGLE trees never repeat a child, but its
# n-gram drafter pads a short draft with copies of token 0. Where each statement comes from (claim
# tensorrt-llm-sibling-rule, claim sglang-target-only-running-sum, claim sglang-ngram-zero-padding):

# %%
for key in ("tensorrt-llm-sibling-rule", "sglang-target-only-running-sum", "sglang-ngram-zero-padding"):
    print(f"claim {key}: {CLAIMS[key].provenance()}")
fig = plot_tree_rule_tv()

# %% [markdown]
# ## 4. A chain against trees, at the same number of drafted tokens
# A fair comparison holds the work of the target fixed: every shape below drafts 6 tokens for the one
# target pass to score. The chain is 6 deep (6 sequential draft passes); the trees are shallower and wider.

# %%
for label, children, verifier in [("i.i.d. / SpecInfer", "iid", "specinfer"),
                                  ("without replacement / RSD", "without-replacement", "without-replacement"),
                                  ("top-k / target-only", "top-k", "target-only")]:
    shapes = [replace(s, children=children) for s in EQUAL_NODE_SHAPES]
    accepted = accepted_per_round(TREE_TARGET, TREE_DRAFT, (), shapes, verifier)
    print(label)
    for s, a in accepted.items():
        print(f"   {'x'.join(map(str, s.branching)):12s} depth {s.depth}: E[accepted] = {str(a):>12} ~ {float(a):.4f}")

# %%
fig = plot_tree_accepted()

# %% [markdown]
# With a *sampled* draft the chain of 6 accepts the most here (2.77 tokens per round): a 3-token world gives
# a second child little room, and only the chain can accept 6. With *top-k* drafts the picture flips: the
# greedy chain keeps proposing the draft's favourite and accepts 0.48, the 3 x 1 tree 1.375. Here, drawing
# without replacement accepts at least as much as i.i.d. at every shape (a repeated child wastes a node).
#
# ## 5. The engines' layout and a batched float sampler
# Engines pass a tree as **parent indices** in breadth-first order (`parents[i]` = index of node i's parent,
# -1 for the root's children), the target's laws as one row per position (row 0 for the context, row i+1
# for the token after node i), and the draft laws and tokens per node. `draft_tree_arrays` draws such a
# batch from the toy draft; `sample_tree_rounds` verifies it in float, batched over rows:

# %%
rng = np.random.default_rng(0)
arrays = draft_tree_arrays(TREE_TARGET, TREE_DRAFT, (), TreeShape((2, 2), "top-k"), 4000, rng)
print("parents:", arrays.parents.tolist(), " target_probs:", arrays.target_probs.shape, " draft_tokens:", arrays.draft_tokens.shape)
out = sample_tree_rounds(arrays.parents, arrays.target_probs, arrays.draft_probs, arrays.draft_tokens, rng, verifier="target-only")
print("first rows (tokens, -1 padded):", out[:3].tolist())
counts = {}
for row in out:
    emitted = tuple(arrays.vocabulary[i] for i in row if i >= 0)
    counts[emitted] = counts.get(emitted, 0) + 1
exact_round = tree_round_law(TREE_TARGET, TREE_DRAFT, (), TreeShape((2, 2), "top-k"), "target-only")
result = g_test(counts, exact_round)
print(f"G-test p-value {result.p_value:.3f}; this test detects any round law at TV >= {detectable_tv(exact_round, 4000):.3f} "
      "with probability 0.99 (level 1e-6)")
assert result.p_value > 1e-6

# %% [markdown]
# ## 6. Typical acceptance (Medusa)
# Medusa keeps a candidate when $p(x) > \min(\epsilon, \delta\, e^{-H(p)})$: likely enough under the target,
# whatever the draft thought. It is lossy by design (claim medusa-fast-mode). $e^{-H(p)} = \prod_y p(y)^{p(y)}$ is irrational in
# general, so the comparison is never rounded: with $D$ the common denominator of $p$, raise both sides to
# the power $D$ and compare two rationals. A tie is rejected (the test is strict), and ties do happen:

# %%
uniform = Law({"a": Fraction(1, 3), "b": Fraction(1, 3), "c": Fraction(1, 3)})
paper = {"entropy_offset": 0}  # the paper's H; the code takes log(p + 1e-5)
print("uniform, delta = 1   :", exceeds_typical_threshold(uniform, "a", TypicalAcceptance(1, 1, **paper)), "(1/3 = 1 * e^-H: a tie)")
print("uniform, delta = .999:", exceeds_typical_threshold(uniform, "a", TypicalAcceptance(1, Fraction(999, 1000), **paper)))

# %% [markdown]
# What Medusa's code does (FasterDecoding/Medusa at e2a5d20): `medusa_generate` defaults to `fast=True`, and
# then every round's *first* token is the target's argmax, at any temperature, and the heads' top-k tree below
# it is judged by the rule above with $\epsilon = 0.09$, $\delta = 0.3$. Nothing is sampled: the output is one
# sequence, by design (its docstring: "faster, deterministic decoding"; claim medusa-fast-mode). Its sampled
# mode does not run: with `sampling='typical'` and `fast=False` at $T > 0$ it raises a TypeError
# (`sampling='nucleus'` runs; claim medusa-typical-type-error). vLLM's V0 engine offered the rule for chains,
# opt-in and documented as trading quality for acceptance; after a rejection it emitted argmax $p$, below the
# next position is sampled from $p$ (claim vllm-v0-typical-acceptance; on this pair nothing is rejected at
# these thresholds, so both give the same law). Both, exactly:

# %%
medusa = typical_generation_law(TREE_TARGET, TREE_DRAFT, (), TreeShape((2, 2), "top-k"), 3, TypicalAcceptance())
chain = typical_generation_law(TREE_TARGET, TREE_DRAFT, (), TreeShape((1, 1), "iid"), 3, TypicalAcceptance(greedy_first=False))
print("Medusa emits", dict(medusa), "; TV from p =", tv_distance(medusa, wanted))
print("typical acceptance on a sampled chain (vLLM V0's rule): TV from p =", tv_distance(chain, wanted))
for key in ("medusa-fast-mode", "medusa-typical-type-error", "vllm-v0-typical-acceptance"):
    print(f"claim {key}: {CLAIMS[key].provenance()}")
assert len(medusa.support) == 1

# %%
fig = plot_typical_acceptance_tv()

# %% [markdown]
# Small thresholds keep every candidate the target allows, so the output follows the draft (left, top rows);
# thresholds above every $p(x)$ reject all candidates and leave plain sampling, TV 0 (bottom right). In
# between the TV is not monotone. Medusa's TV stays near 0.9 whatever the parameters: greedy decoding is
# far from sampling.
#
# ## 7. The tree zoo
# The lossy tree verifiers, each with its smallest instance, exact TV, and its source: the dated claim about
# the engine (its status says whether the engine does it, did it until a fix, or documents it as lossy by
# design), or what it is modelled on (`specmath.bugzoo.TREE_BUGS`; each also carries a float sampler over
# batched trees):

# %%
for bug in TREE_BUGS:
    print(f"{bug.name}: TV = {bug.tv()} ~ {float(bug.tv()):.4f}  (correct verifier on the same trees: "
          f"TV {tv_distance(bug.correct_law(), bug.target_law())})  [{bug.group}]")
    print(f"   {bug.explanation}")
    print(f"   {'claim ' + bug.claim.key + ': ' if bug.claim else ''}{bug.source}")

# %% [markdown]
# ## Summary
# - A tree round is one sampling program: draft the tree, one target pass, walk down with a verifier; its
#   exact law is proved equal to the target's autoregressive law with `==` on fractions.
# - Recursive rejection (SpecInfer) is exact only for independent children; without replacement it needs
#   $q$ renormalised after each child (RSD); for top-k children it over-samples the draft's favourites.
# - Deterministic children need the one-hot view: SGLang's target-only rule (draw from $p$, keep the
#   matching child) is exact for any distinct children; the sibling rule TensorRT-LLM had until PR #15098 is
#   not (claim tensorrt-llm-sibling-rule).
# - At an equal number of drafted tokens, sampled chains can beat trees; top-k trees beat the greedy chain.
# - Typical acceptance is lossy by design; its threshold is decided exactly, ties are rejected, and
#   Medusa's deployed fast mode emits one deterministic sequence (claim medusa-fast-mode).
#
# ## Exercises
# 1. Show that a chain is the tree of branching 1: for γ = 1, 2, 3 compare `tree_round_law` of
#    `TreeShape((1,) * γ)` with SpecInfer against `round_law` of notebook 04.
# 2. For p = {A: 1/2, B: 1/2} and q = {A: 3/4, B: 1/4}, compute by hand the law SpecInfer's rule emits
#    with the top-1 child, then check it with `node_step`. What is its TV from p?
# 3. Write EAGLE's verifier for top-k children: `recursive_rejection` with one-hot draft laws. Prove it
#    equals `target_only_verifier` on 2 x 2 top-k trees of the tree pair.
# 4. Find (ε, δ) at which vLLM V0's typical acceptance is lossless on the tree pair, and explain why.
# 5. Give SGLang's target-only rule i.i.d. children: compute the exact TV over 2 tokens with a (2,) tree,
#    and find the child tuple where its running sum overcounts.
