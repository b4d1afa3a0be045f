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
# # 01 · The two-token world: one speculative step, proved exactly
#
# **What you will learn**
# - the accept / reject / resample rule of speculative sampling, on a vocabulary of two tokens;
# - how to *prove* that its output law equals the target law, with exact fractions rather than samples;
# - that the proof holds for any target and draft law, not just the example;
# - how the sampled run of the *same program* compares with the exact law.
#
# **Notation** (used in every notebook): $p$ = target law (the big model), $q$ = draft law (the small
# model), $\gamma$ = draft tokens per round, $\alpha = \sum_x \min(p(x), q(x))$ = acceptance rate.
# (Leviathan et al. 2023 and Hugging Face use this naming; Chen et al. 2023 swap $p$ and $q$.)
#
# The example comes from the seed article, 从投机解码到 Rand5 模拟 Rand7:跨越十年的拒绝采样直觉 ("From
# speculative decoding to simulating Rand7 with Rand5"): the target prefers A, the draft prefers B.

# %% tags=["remove-cell"]
from collections import Counter
from fractions import Fraction

import numpy as np
from IPython.display import Markdown

from specmath import Law, exact, sample, show, tv_distance
from specmath.article import claims_table
from specmath.course.article_table import claims_markdown
from specmath.plots.classic_plots import plot_two_token_paths
from specmath.speculative import acceptance_rate, residual_law, speculative_step, step_law
from specmath.speculative.step import standard_rule
from specmath.speculative.symbolic_step import prove_step_symbolically, resample_from_target_rule
from specmath.speculative.two_token import DRAFT, TARGET, acceptance_by_token, path_table, two_token_world
from specmath.stats import detectable_tv, g_test

# %%
print("p =", dict(TARGET))
print("q =", dict(DRAFT))

# %% [markdown]
# ## The rule
# The draft proposes $x \sim q$. The target accepts it with probability $\min(1, p(x)/q(x))$. If it
# rejects, it draws a replacement from the **residual law**
# $\text{norm}(\max(0, p - q))(x) = \max(0, p(x) - q(x)) / \sum_y \max(0, p(y) - q(y))$.
#
# *Question:* which token does the target never reject? *Answer:* the one the draft under-estimates.
#
# Here is the program that the rest of this notebook proves: one step, as ordinary Python that asks for
# randomness with `yield` (a draw from a law, a biased coin) and returns the emitted token.

# %%
show(speculative_step)

# %% [markdown]
# The rule it uses by default, and the residual law it resamples from:

# %%
show(standard_rule)

# %%
show(residual_law)

# %%
acceptance = acceptance_by_token()
acceptance

# %%
assert acceptance == {"A": 1, "B": Fraction(1, 2)}  # A: min(1, 1.75) = 1, B: min(1, 0.5) = 1/2

# %% [markdown]
# The residual law puts all its mass where the target wants more than the draft gives:

# %%
residual = residual_law(TARGET, DRAFT)
assert residual == Law({"A": 1, "B": 0})
residual

# %% [markdown]
# ## The three paths
# The two-token world is that step with the article's $p$ and $q$:

# %%
show(two_token_world)

# %% [markdown]
# The exact interpreter walks every branch of the program and multiplies the probabilities along it:

# %%
for row in path_table():
    print(row)

# %%
rows = path_table()
assert [r["probability"] for r in rows] == [Fraction(2, 5), Fraction(3, 10), Fraction(3, 10)]
assert acceptance_rate(TARGET, DRAFT) == Fraction(7, 10)  # 0.4 + 0.3 accepted directly

# %%
fig = plot_two_token_paths()

# %% [markdown]
# Adding the paths that end in each token gives the output law, and it is $p$ exactly
# (a comparison of `Fraction`s, no tolerance):

# %%
output = exact(two_token_world).law
assert output == TARGET
output

# %% [markdown]
# ## Not just this example
# For *any* $p, q$ on one vocabulary, $P(\text{out} = x) = q(x)\min(1, p(x)/q(x)) + (1 - \alpha)\,
# \frac{\max(0, p(x)-q(x))}{1-\alpha} = \min(p(x), q(x)) + \max(0, p(x) - q(x)) = p(x)$.
# The library checks this on random rational laws in `tests/core/test_speculative_step.py` (Hypothesis);
# here is one five-token example with zeros on both sides:

# %%
p = Law({"a": "1/2", "b": "1/4", "c": "1/8", "d": "1/8", "e": 0})
q = Law({"a": "1/10", "b": "1/2", "c": 0, "d": "1/5", "e": "1/5"})
assert step_law(p, q) == p
print("alpha =", acceptance_rate(p, q))

# %% [markdown]
# ## Not just this example: all of them
# The algebra above is a proof on paper. The library checks it by machine too: `prove_step_symbolically`
# gives $p$ and $q$ *symbols* as weights and splits the pairs $(p, q)$ by the sign pattern of $p - q$ (the set
# of tokens with $p(x) \ge q(x)$). Inside one region every $\min$ and $\max$ of the rule is one formula, so
# the output law is a rational function of the symbols, and it cancels to $p$ exactly: $2^n - 1$ regions
# cover every pair of laws on $n$ tokens. (`specmath verify symbolic-step` runs the same proof for 2, 3 and 4 tokens.)

# %%
for n in (2, 3, 4):
    proof = prove_step_symbolically(n)
    print(f"{n} tokens: {proof.cases} sign-pattern regions, output law == p in each: {proof.lossless}")
    assert proof.lossless and proof.cases == 2**n - 1

# %% [markdown]
# The same machinery refutes a wrong rule, with a concrete counterexample. Resample from $p$ instead of the
# residual (the bug of exercise 3): the first region that fails comes with a rational witness, which the
# exact interpreter confirms by running `speculative_step` with that rule.

# %%
refuted = prove_step_symbolically(3, resample_from_target_rule, "resample from p")
bad = refuted.counterexample
print("lossless:", refuted.lossless, "  first failing region: p >= q exactly on", list(bad.above))
print("witness p =", {x: str(w) for x, w in bad.witness["p"].items()})
print("        q =", {x: str(w) for x, w in bad.witness["q"].items()})
print("   output =", {x: str(w) for x, w in bad.witness["output"].items()}, "  TV from p =", bad.witness["tv"])
assert not refuted.lossless and bad.witness["tv"] > 0

# %% [markdown]
# ## A broken rule, written in the cell
# A rule is a plain function `rule(p, q, x) -> (accept probability, resample law)`. "Accept everything the
# draft says" outputs $q$, at total-variation distance $\text{TV}(q, p)$ from the target:

# %%
def accept_always(p, q, x):
    return Fraction(1), None


lossy = exact(speculative_step, TARGET, DRAFT, accept_always).law
print("lossy law:", dict(lossy), " TV from p:", tv_distance(lossy, TARGET))
assert tv_distance(lossy, TARGET) == Fraction(3, 10)

# %% [markdown]
# ## The same program, sampled
# `sample` runs the identical generator with a seeded `numpy` generator. A G-test compares the counts
# with the exact law; `detectable_tv` states the test's power: the smallest deviation it would catch with
# probability 0.99 at level $10^{-6}$.

# %%
rng = np.random.default_rng(0)
n = 20_000
counts = Counter(sample(two_token_world, rng=rng) for _ in range(n))
result = g_test(counts, TARGET)
print(counts, result)
print(f"this test detects any deviation of TV >= {detectable_tv(TARGET, n):.4f} with probability 0.99")
assert result.p_value > 1e-6

# %% [markdown]
# ## The article's numbers for this example

# %% tags=["hide-input"]
Markdown(claims_markdown("two-token world"))

# %%
assert all(r["agrees"] for r in claims_table() if r["section"] == "two-token world")

# %% [markdown]
# **Explorer:** [08 · 1. The two-token world](08_explorers.ipynb#1.-The-two-token-world): move $p(A)$ and $q(A)$ with sliders and watch acceptance, the residual and the three paths change while the output stays $p$.

# %% [markdown]
# ## Summary
# - Speculative sampling accepts a draft token $x$ with $\min(1, p(x)/q(x))$ and otherwise resamples from
#   $\text{norm}(\max(0, p - q))$; in the two-token world the paths weigh 0.4, 0.3 and 0.3.
# - The exact interpreter proves the output law equals $p$ with `==` on fractions, for this example and
#   (by property tests) for random $p, q$, including zeros, one-hot laws and disjoint supports.
# - Symbolically, one step outputs $p$ for *every* $p, q$ on 2, 3 and 4 tokens (one case per sign pattern of
#   $p - q$); resampling from $p$ instead of the residual is refuted with a rational counterexample.
# - The acceptance rate is $\alpha = \sum_x \min(p(x), q(x))$: 7/10 here.
# - The sampled run of the same program agrees with the exact law, at a stated power.
#
# ## Exercises
# 1. Change $q$ to $\{A: 0.7, B: 0.3\}$. What are the acceptance probabilities and the residual law? Why does
#    `residual_law` raise an error, and why is that harmless for the sampler?
# 2. Find $p, q$ on three tokens with $\alpha = 1/2$ and check it with `acceptance_rate`.
# 3. Write a rule that accepts with $\min(1, p/q)$ but resamples from $p$ instead of the residual. Compute
#    its exact output law with `exact(speculative_step, p, q, rule)` and its TV distance from $p$.
# 4. How many samples would the G-test need to detect a deviation of TV 0.01? (Hint: `detectable_tv`.)
# 5. Edit the program: copy `speculative_step` (shown above) into a cell as `my_step`, and make it accept
#    with $\min(1, p(x)/q(x))^2$ instead. Re-prove it with `exact(my_step, TARGET, DRAFT).law == TARGET`:
#    which token's probability moves, and by how much? Then undo the square and re-prove it lossless.
