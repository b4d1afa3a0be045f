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
# # 05 · Beyond the article: warps, block verification, multi-draft, and a zoo of lossy variants
#
# **What you will learn**
# - why temperature, top-k and top-p keep speculative decoding lossless, *for the warped target*, and
#   exactly how much is lost when the warp reaches only one side or q is read from the raw logits;
# - that greedy speculative decoding is the temperature → 0 end of the same algorithm;
# - block verification (Sun et al. 2024): same output law, more accepted tokens, proved exactly;
# - multi-draft verification by recursive rejection (SpecInfer) and deterministic n-gram drafts;
# - why "sample the target and keep the matching prefix" is lossless but accepts less;
# - ten lossy variants of the round, each with its exact TV distance (some far too small for any
#   sampling test to see) and its source: a dated claim about an engine, or the code path it is modelled on.
#
# **Notation** (as in every notebook): $p$ = target law, $q$ = draft law, $\gamma$ = draft tokens per
# round, $\alpha = \sum_x \min(p(x), q(x))$. Rounds emit 1..γ+1 tokens; a variant is *lossless* when the
# first $n$ tokens of repeated rounds have exactly the autoregressive law
# $\prod_i p(x_i \mid \text{prefix}\, x_{<i})$ (compared with `==` on fractions).

# %% tags=["remove-cell"]
from fractions import Fraction

import numpy as np

from specmath.bugzoo import BUGS
from specmath.laws import Law, tv_distance
from specmath.plots.beyond_plots import plot_block_vs_tokenwise, plot_bug_zoo_tv, plot_multidraft_k
from specmath.sampling_options import SamplingOptions
from specmath.speculative import acceptance_rate, autoregressive_law
from specmath.speculative.block import PAPER_EXAMPLE, block_generation_law, block_vs_tokenwise
from specmath.speculative.examples import WORD_DRAFT, WORD_TARGET
from specmath.speculative.multidraft import (
    multidraft_acceptance,
    multidraft_generation_law,
    one_hot,
    one_hot_drafter,
)
from specmath.speculative.reference_round import reference_sample_round
from specmath.speculative.sample_match import match_acceptance, sample_match_generation_law, sampled_vs_tokenwise
from specmath.speculative.toy_lm import random_toy_lm, warp
from specmath.speculative.warped import greedy_round_law, greedy_round_prediction, temperature_to_greedy, warp_scenarios
from specmath.stats import detectable_tv

# %%
for context in [(), ("x",), ("y",), ("z",)]:
    print(f"after {context}: p = {dict(WORD_TARGET(context))}, q = {dict(WORD_DRAFT(context))}")

# %% [markdown]
# The *word pair* above is a context-dependent toy: three tokens, the target's law depends on the last
# token. We use it throughout, next to the block-verification paper's two-token example.
#
# ## 1. Warps: lossless for the warped target, provided q is honest
# A user who asks for temperature $T$ and top-k wants a sample from $w(p)$, where $w$ is the warp.
# Speculative decoding's proof never asks where $p$ and $q$ come from: it needs the verifier's $p'$ to
# be the law we want, and its $q'$ to be **the law the draft tokens were actually drawn from**.
# Four ways to place the warp, each computed exactly for 2 generated tokens with γ = 2:

# %%
w = SamplingOptions(temperature=Fraction(1, 2), top_k=2)
cases = warp_scenarios(WORD_TARGET, WORD_DRAFT, w, (), 2, 2)
for name, case in cases.items():
    print(f"{name:50s} TV = {str(case['tv']):>12} ~ {float(case['tv']):.4f}   E[accepted] = {case['accepted']}")

# %%
assert cases["warp on both sides (correct)"]["tv"] == 0
assert cases["warp on the target only, honest unwarped draft"]["tv"] == 0  # only acceptance changes
raw, wanted = autoregressive_law(WORD_TARGET, (), 2), autoregressive_law(warp(WORD_TARGET, w), (), 2)
assert cases["warp on the draft only (target unwarped)"]["law"] == raw  # you get the unwarped model
assert cases["tokens from the warped draft, q from raw logits"]["tv"] == Fraction(1273, 14365)

# %% [markdown]
# *Question:* why is "warp on the target only" fine? *Answer:* the draft is just a proposal; any honest
# proposal gives the target law, only the acceptance rate moves. What breaks losslessness is a
# **dishonest q**: sampling from top-k logits but reporting the raw softmax as $q$
# (Hugging Face transformers' candidate generators did, until PR #48007: claim transformers-q-from-raw-logits,
# printed in section 6) makes $p/q$ too large by the kept mass and builds the residual from tokens the
# draft can never propose.
#
# ## 2. Greedy is temperature 0
# At $T = 0$ both laws are one-hot on their argmax, so $\min(1, p/q)$ accepts a draft token iff it is
# the target's argmax, and a round emits the agreeing prefix plus the target's own argmax. That is the
# seed article's description of greedy verification, and here it is a theorem about one point mass:

# %%
greedy_target, greedy_draft = random_toy_lm(3, 5), random_toy_lm(3, 6)
for gamma in (1, 2, 3):
    law = greedy_round_law(greedy_target, greedy_draft, (), gamma)
    print(f"gamma = {gamma}: round law = {dict(law)}")
    assert law == Law({greedy_round_prediction(greedy_target, greedy_draft, (), gamma): 1})

# %% [markdown]
# Lowering $T$ moves the warped target law towards the greedy continuation (TV → 0), with exact
# fractions at every $T = 1/k$:

# %%
rows = temperature_to_greedy(WORD_TARGET, WORD_DRAFT, (), 2, (1, 2, 4, 8))
for row in rows:
    print(f"T = {str(row['T']):>4}: TV(AR law at T, greedy) ~ {float(row['tv_to_greedy']):.5f}, E[accepted] ~ {float(row['accepted']):.4f}")
assert [r["tv_to_greedy"] for r in rows] == sorted((r["tv_to_greedy"] for r in rows), reverse=True)

# %% [markdown]
# ## 3. Block verification (Sun et al., 2024)
# Token-wise verification stops at the first rejection. Block verification keeps a running weight
# $w_i = \min(1, w_{i-1} p(x_i)/q(x_i))$ along the drafted block, and decides *from the end* how long a
# prefix to keep: it keeps $i$ tokens with probability $h_i = |r_i| / (|r_i| + 1 - w_i)$ where
# $r_i = \max(0, w_i p_i - q_i)$ is what the draft under-covers, then resamples from $r_i$
# (or takes the bonus token when all γ are kept). Same draft, same single target pass.
#
# The paper's motivating example: $p = \{a: 1/3, b: 2/3\}$, $q = \{a: 2/3, b: 1/3\}$, γ = 2.

# %%
paper_target, paper_draft = PAPER_EXAMPLE
compared = block_vs_tokenwise(paper_target, paper_draft, (), 2)
print(compared)
assert compared == {"token-wise": Fraction(10, 9), "block": Fraction(11, 9)}
for gamma in (1, 2, 3):
    assert block_generation_law(paper_target, paper_draft, (), gamma, 4) == autoregressive_law(paper_target, (), 4)

# %% [markdown]
# 11/9 accepted tokens per round instead of 10/9, and the first four generated tokens have *exactly*
# the target's law. On random context-dependent pairs block verification is never worse:

# %%
for seed in range(4):
    t, d = random_toy_lm(3, seed), random_toy_lm(3, 100 + seed)
    c = block_vs_tokenwise(t, d, (), 2)
    print(f"seed {seed}: token-wise {c['token-wise']} ~ {float(c['token-wise']):.4f}, block {c['block']} ~ {float(c['block']):.4f}")
    assert c["block"] >= c["token-wise"]
    assert block_generation_law(t, d, (), 2, 3) == autoregressive_law(t, (), 3)

# %%
fig = plot_block_vs_tokenwise()

# %% [markdown]
# ## 4. Multi-draft: k proposals, recursive rejection
# With $k$ independent proposals $x_j \sim q$, SpecInfer's rule tries them in turn: accept $x_j$ with
# $\min(1, p^{(j)}(x_j)/q(x_j))$, and on rejection the residual becomes the next target,
# $p^{(j+1)} = \text{norm}(\max(0, p^{(j)} - q))$. Each stage is one standard step, so the output law is
# $p$; the chance that *some* draft is accepted is $1 - \prod_j (1 - \alpha_j)$.

# %%
p, q = paper_target(()), paper_draft(())
print({k: multidraft_acceptance(p, (q,) * k) for k in (1, 2, 3, 4)})
assert [multidraft_acceptance(p, (q,) * k) for k in (1, 2, 3)] == [Fraction(2, 3), Fraction(7, 9), Fraction(23, 27)]

# %% [markdown]
# Deterministic drafts (n-gram / prompt lookup) are one-hot laws: the proposal $x$ is accepted with
# probability $p(x)$, and rejection removes it. Mixing an n-gram drafter with two model drafts, over a
# tree of γ = 2, is still exactly lossless:

# %%
ngram = one_hot_drafter(lambda c: c[-1] if c else "x", WORD_TARGET.vocabulary, name="repeat-last lookup")
assert multidraft_generation_law(WORD_TARGET, (WORD_DRAFT, WORD_DRAFT, ngram), (), 2, 3) == autoregressive_law(WORD_TARGET, (), 3)
assert multidraft_acceptance(p, (one_hot("b", ("a", "b")),)) == p["b"]

# %%
fig = plot_multidraft_k()

# %% [markdown]
# The right panel's flat γ = 1 line is worth a second look: at the root the draft gives $z$ probability
# 0, but the residual $\max(0, p - q)$ is all on $z$, so a second draft from the same $q$ can never help.
# More drafts pay only where the draft covers the residual.
#
# ## 5. Sample-match: lossless, but it accepts less
# A simpler verifier samples the target's own token $y_i \sim p_i$ and keeps the draft while $y_i = x_i$.
# Every emitted token is a target sample, so it is lossless; but it accepts with
# $\sum_x p(x)q(x) = \sum_x \min(p, q)\max(p, q) \le \alpha$.

# %%
print("sum p q =", match_acceptance(p, q), " alpha =", acceptance_rate(p, q))
print(sampled_vs_tokenwise(paper_target, paper_draft, (), 2))
assert match_acceptance(p, q) == Fraction(4, 9) < acceptance_rate(p, q) == Fraction(2, 3)
assert sample_match_generation_law(paper_target, paper_draft, (), 2, 3) == autoregressive_law(paper_target, (), 3)

# %% [markdown]
# ## 6. The bug zoo
# Each entry is one block or one rule of the round swapped for a lossy one. For each: the smallest
# instance, the exact TV from the target law, the correct algorithm's TV on the same instance (always
# exactly 0), and its source. A source is a dated claim record (`specmath.bugzoo.claims`: the engine,
# the version or commit checked, the date, the status, how we know), so the zoo keeps apart what an
# engine does at the version checked, what was fixed upstream and what an engine documents as lossy by
# design; two entries are modelled on a code path and claim nothing about any engine.

# %%
for name, bug in sorted(BUGS.items(), key=lambda item: (item[1].group, -item[1].tv())):
    tv = bug.tv()
    shown = str(tv) if tv.denominator < 10**6 else f"1/{tv.denominator // tv.numerator}" if tv.numerator == 1 else f"{float(tv):.6g}"
    print(f"{name:30s} TV = {shown:>44} ~ {float(tv):.3g}   [{bug.group}]")
    print(f"{'':30s} instance: {bug.instance().description}")
    print(f"{'':30s} {bug.explanation}")
    print(f"{'':30s} {'claim ' + bug.claim.key + ': ' if bug.claim else ''}{bug.source}")
    assert tv > 0 and bug.correct_law() == bug.target_law()

# %% [markdown]
# The seed article warns that accepting the draft's samples as they are gives the draft's law $q$;
# that is `uniform-fixed-at-zero` exactly: the output is $q$, at TV(p, q) = 1/4 on its instance.

# %%
assert BUGS["uniform-fixed-at-zero"].tv() == tv_distance(Law({"A": Fraction(1, 2), "B": Fraction(1, 2)}), Law({"A": Fraction(3, 4), "B": Fraction(1, 4)}))
fig = plot_bug_zoo_tv()

# %% [markdown]
# Two of these variants are (nearly) invisible to sampling. The clamp moves $\approx 10^{-38}$ of mass onto a
# token the target *does* allow, so no count can reveal it: with $N = 10^6$ rounds a G-test at level
# $10^{-6}$ is guaranteed (with probability 0.99) to see only deviations above the TV printed below.
# The `u <= p/q` bug emits a token of target probability 0, which one observation would expose, but
# it does so with probability $2^{-25}$ per round: a million rounds catch it about 3% of the time.
# The exact verifier sees both, every time.

# %%
clamp = BUGS["residual-clamped-at-tiny"]
eps = detectable_tv(clamp.target_law(), 10**6)
print(f"clamp: detectable TV at N = 10^6 ~ {eps:.4f}, actual TV ~ {float(clamp.tv()):.3g}")
assert eps > 1e30 * float(clamp.tv())
subtle = BUGS["accept-on-u-equal-zero"]
assert subtle.tv() == subtle.lossy_law().prob(("B",)) == Fraction(1, 2**25)  # all of the TV is the impossible token
seen = 1 - (1 - float(subtle.tv())) ** 10**6
print(f"u <= p/q: P(a million rounds show the impossible token at least once) ~ {seen:.3f}")
assert 0.02 < seen < 0.04

# %% [markdown]
# Every entry also carries a float sampler with the signature of an engine's rejection sampler,
# `sample_round(target_probs [γ+1, V], draft_probs [γ, V], draft_tokens [γ], rng)`, so an engine's
# own function can be audited against the exact law the same way. For example, on the
# `first-draft-unverified` instance:

# %%
bug = BUGS["first-draft-unverified"]
target_probs, draft_probs = bug.instance().probs((), ("A",))
rng = np.random.default_rng(0)
print("buggy:", [bug.sample_round(target_probs, draft_probs, np.array([0]), rng) for _ in range(8)])
print("correct:", [reference_sample_round(target_probs, draft_probs, np.array([0]), rng) for _ in range(8)])

# %% [markdown]
# ## Summary
# - Warps are a change of $p$ and $q$: lossless for $w(p)$ as long as $q$ is the law the drafts came
#   from; a one-sided warp or a raw-logit $q$ costs an exact, computable TV.
# - Greedy speculative decoding is the $T = 0$ case: one point mass, the agreeing prefix plus the
#   target's argmax.
# - Block verification keeps the output law and accepts more (10/9 → 11/9 on the paper's example).
# - Recursive rejection over $k$ drafts, including one-hot n-gram drafts, is exactly lossless;
#   acceptance grows with $k$ only where the draft covers the residual.
# - Sample-match is lossless but accepts $\sum p q \le \alpha$.
# - Ten lossy variants, each with an exact TV and a dated source; two are far below what a sampling test can
#   reliably detect.
#
# ## Exercises
# 1. Find a pair where warping the target only (honest unwarped draft) *raises* the acceptance rate
#    compared with warping both sides. (Hint: `warp_scenarios` prints both.)
# 2. Show that for γ = 1 block verification is exactly the standard step (compare `block_round_law`
#    with `round_law`).
# 3. For a one-hot draft, prove $\sum_x p(x) q(x) = \alpha$; check it with `match_acceptance`.
# 4. Write your own lossy rule (say, resample from $p$ instead of the residual) and compute its TV on
#    the `residual-softmax` instance with `speculative_round(..., rule=your_rule)`.
# 5. With k = 2 drafts on the word pair and γ = 1, which draft law $q$ over {x, y, z} at the root
#    maximises the acceptance? (Try a few with `multidraft_acceptance`.)
