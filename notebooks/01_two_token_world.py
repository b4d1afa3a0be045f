# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
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
# The example comes from the seed article: the target prefers A, the draft prefers B.

# %%
from collections import Counter
from fractions import Fraction

import numpy as np

from specmath import Law, exact, sample, tv_distance
from specmath.article import claims_table
from specmath.plots.classic_plots import plot_two_token_paths
from specmath.speculative import acceptance_rate, residual_law, speculative_step, step_law
from specmath.speculative.two_token import DRAFT, TARGET, acceptance_by_token, path_table, two_token_world
from specmath.stats import detectable_tv, g_test

print("p =", dict(TARGET))
print("q =", dict(DRAFT))

# %% [markdown]
# ## The rule
# The draft proposes $x \sim q$. The target accepts it with probability $\min(1, p(x)/q(x))$. If it
# rejects, it draws a replacement from the **residual law**
# $\text{norm}(\max(0, p - q))(x) = \max(0, p(x) - q(x)) / \sum_y \max(0, p(y) - q(y))$.
#
# *Question:* which token does the target never reject? *Answer:* the one the draft under-estimates.

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
# The program `two_token_world` is ordinary Python that asks for randomness (`draw`, `coin`). The exact
# interpreter walks every branch and multiplies the probabilities along it:

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
# A broken rule is caught just as exactly. "Accept everything the draft says" outputs $q$, at
# total-variation distance $\text{TV}(q, p)$ from the target:

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

# %%
for row in claims_table():
    if row["section"] == "two-token world":
        print(f"{row['statement']:<45} article: {row['stated']:<6} exact: {row['exact']:<14} {'ok' if row['agrees'] else 'WRONG'}")
assert all(r["agrees"] for r in claims_table() if r["section"] == "two-token world")

# %% [markdown]
# ## Summary
# - Speculative sampling accepts a draft token $x$ with $\min(1, p(x)/q(x))$ and otherwise resamples from
#   $\text{norm}(\max(0, p - q))$; in the two-token world the paths weigh 0.4, 0.3 and 0.3.
# - The exact interpreter proves the output law equals $p$ with `==` on fractions, for this example and
#   (by property tests) for random $p, q$, including zeros, one-hot laws and disjoint supports.
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
