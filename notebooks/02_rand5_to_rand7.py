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
# # 02 · rand5 → rand7: rejection, and recycling what was rejected
#
# **What you will learn**
# - why rejection sampling produces an exactly uniform rand7 from rand5;
# - how to compute the *exact* expected number of rand5 calls of a sampler with an unbounded loop;
# - how the seed article's "recycling" version saves calls, and exactly how many;
# - where the rounded numbers of the seed article, 从投机解码到 Rand5 模拟 Rand7:跨越十年的拒绝采样直觉
#   ("From speculative decoding to simulating Rand7 with Rand5"), are wrong.
#
# Notation for the speculative notebooks: $p$ = target, $q$ = draft, $\alpha = \sum_x \min(p(x), q(x))$.
# Here the "target" is the uniform law on 1..7 and the "proposal" is the uniform law on 1..25.

# %% tags=["remove-cell"]
from collections import Counter
from fractions import Fraction

import numpy as np
from IPython.display import Markdown

from specmath import RESTART, die, exact, sample_with_costs, show
from specmath.article import claims_table
from specmath.classic.rand7 import rand7_article, rand7_basic, rand_article, rand_basic, uniform_target
from specmath.course.article_table import claims_markdown
from specmath.plots.classic_plots import plot_rand7_levels
from specmath.stats import detectable_tv, g_test

# %% [markdown]
# ## Basic rejection
# Two rolls make a base-5 number, uniform on 1..25. Keep 1..21 (three copies of 1..7), reject 22..25 and
# start over. The program returns `RESTART` on rejection; the exact interpreter solves the loop:
# the law of one attempt, divided by the probability $1 - r$ that it does not restart.
#
# Here is the program, written in the cell as the article writes it (`die(5)` asks for one roll of rand5):

# %%
def rand7_in_cell():
    a = yield die(5, label="rand5")
    b = yield die(5, label="rand5")
    val = 5 * (a - 1) + b  # uniform on 1..25
    if val <= 21:
        return (val - 1) % 7 + 1  # 1..21 is three copies of 1..7
    return RESTART  # reject 22..25 and start over


# %% [markdown]
# The library's version is the same algorithm for any die $a$ and range $b$; for 5 → 7 it has the same exact
# law and the same expected cost as the cell's:

# %%
show(rand_basic)

# %%
mine = exact(rand7_in_cell)
assert mine.law == exact(rand7_basic).law == uniform_target(7)
assert mine.expected_cost("rand5") == exact(rand7_basic).expected_cost("rand5")

# %%
basic = exact(rand7_basic)
print(basic.law)
print("P(restart) per attempt:", basic.attempt_restart_probability)
print("E[rand5 calls] =", basic.expected_cost("rand5"), "≈", float(basic.expected_cost("rand5")))
assert basic.law == uniform_target(7)
assert basic.attempt_restart_probability == Fraction(4, 25)  # 16%
assert basic.expected_cost("rand5") == Fraction(50, 21)  # 2 * 25/21

# %% [markdown]
# ## The article's recycling
# A rejected value in 22..25 is not worthless: it is uniform on 4 values. One more roll turns it into a
# uniform value on 1..20 (keep 1..14), and the 6 left over plus one roll make 1..30 (keep 1..28). After
# three levels the article falls back to the basic sampler. The program records the level at which it
# returns with `tick`, so the exact interpreter gives the probability of each level as an expected count.
# Read it first (`Recur` continues with another program call: the fallback loop):

# %%
show(rand_article)

# %%
article = exact(rand7_article)
assert article.law == uniform_target(7)
levels = {k: article.expected_cost(k) for k in ("level 1", "level 2", "level 3", "fallback")}
for k, v in levels.items():
    print(f"{k:<9} {str(v):>7} = {float(v):.4%}")
print("E[rand5 calls] =", article.expected_cost("rand5"), "≈", float(article.expected_cost("rand5")))

# %%
assert levels == {"level 1": Fraction(21, 25), "level 2": Fraction(14, 125), "level 3": Fraction(28, 625), "fallback": Fraction(2, 625)}
assert article.expected_cost("rand5") == Fraction(5816, 2625)

# %%
fig = plot_rand7_levels()

# %% [markdown]
# ## Where the article is off
# The article says the recycling sampler needs "≈ 2.21" calls and reaches the fallback with probability
# "less than 0.3%" (and "~0.1%" in a code comment). The exact values are
# $5816/2625 \approx 2.2156$ calls — which rounds to 2.22, not 2.21 — and $2/625 = 0.32\%$.
# The article's sum $2 \times 0.84 + 3 \times 0.112 + 4 \times 0.045 + \cdots$ stops before the fallback
# term $0.0032 \times (4 + 50/21) \approx 0.0204$, which is what moves the total to 2.2156.

# %%
fallback_term = levels["fallback"] * (4 + Fraction(50, 21))
print("fallback contribution:", fallback_term, "≈", float(fallback_term))
assert 2 * levels["level 1"] + 3 * levels["level 2"] + 4 * levels["level 3"] + fallback_term == article.expected_cost("rand5")

# %% tags=["hide-input"]
Markdown(claims_markdown("rand7"))

# %%
assert {r["key"] for r in claims_table() if r["section"].startswith("rand7") and not r["agrees"]} == {
    "rand7-article-calls", "rand7-fallback-bound", "rand7-fallback-comment"}

# %% [markdown]
# ## Sampled, with costs
# Running the same programs with a seeded generator: the histogram fits the uniform law, and the average
# number of calls approaches the exact expectation.

# %%
rng = np.random.default_rng(7)
n = 20_000
outs, calls = [], []
for _ in range(n):
    value, costs = sample_with_costs(rand7_article, rng=rng)
    outs.append(value)
    calls.append(costs["rand5"])
result = g_test(Counter(outs), uniform_target(7))
print(result)
print(f"mean calls {np.mean(calls):.4f} (exact {float(article.expected_cost('rand5')):.4f}); "
      f"the G-test detects TV >= {detectable_tv(uniform_target(7), n):.4f} with probability 0.99")
assert result.p_value > 1e-6

# %% [markdown]
# ## Other sizes
# The same code handles any $a \to b$; e.g. a coin (rand2) to rand3, or rand6 to rand10. Each roll is
# counted under the die's own name (`rand2`, `rand6`, ...):

# %%
for a, b in [(2, 3), (6, 10), (3, 7)]:
    r = exact(rand_basic, a, b)
    calls = r.expected_cost(f"rand{a}")
    assert r.law == uniform_target(b) and r.expected_cost("rand5") == 0
    print(f"rand{a} -> rand{b}: E[rand{a} calls] = {calls} ≈ {float(calls):.4f}")

# %% [markdown]
# **Explorer:** [08 · 2. rand_a to rand_b](08_explorers.ipynb#2.-rand_a-to-rand_b): choose the method and the die sizes $a$, $b$ and watch the exact expected calls against the Knuth-Yao optimum.

# %% [markdown]
# ## Summary
# - Rejection sampling gives an exactly uniform rand7; the loop is solved exactly: $E[\text{calls}] = 50/21$.
# - Recycling the rejected value lowers the cost to exactly $5816/2625 \approx 2.2156$ calls; the article's
#   "≈ 2.21" and "< 0.3%" (fallback, exactly 0.32%) are slightly off.
# - The information limit is $\log_5 7 \approx 1.209$ calls per output: notebook 06 gets close to it.
# - Speculative decoding recycles the same way: a rejected draft token still yields one token, drawn from
#   the residual law, instead of a restart.
#
# ## Exercises
# 1. Compute the exact expected calls of the article's sampler with 1, 2, 5 and 10 levels
#    (`rand_article(5, 7, levels)`). Does it converge? To what?
# 2. Why is `(val - 1) % 7 + 1` uniform on 1..7 only when `val` is uniform on 1..21 and not on 1..25?
#    Compute the law of `(val - 1) % 7 + 1` for `val` uniform on 1..25 with `Law.map`.
# 3. Write rand7 → rand5 with `rand_basic(7, 5)`; what is its expected number of calls?
# 4. Edit the program: in `rand7_in_cell`, keep `val <= 24` instead of 21 (fewer restarts!). Re-prove it with
#    `exact`: is the law still uniform? Which outputs gain, and what is the TV distance from uniform?
