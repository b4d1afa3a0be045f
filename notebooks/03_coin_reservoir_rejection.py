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
# # 03 · A fair coin from a biased one, reservoir sampling, and rejection sampling
#
# **What you will learn**
# - von Neumann's trick, proved fair for every rational bias and for a *symbolic* bias $p$;
# - reservoir sampling (Algorithm R): why every $k$-subset is equally likely;
# - generic rejection sampling with an envelope $M q \ge p$, and why speculative sampling does better.
#
# Notation: $p$ = target law, $q$ = proposal (draft) law, $\alpha = \sum_x \min(p(x), q(x))$.

# %% tags=["remove-cell"]
from collections import Counter
from fractions import Fraction

import numpy as np
import sympy

from specmath import Law, exact, exact_symbolic, sample, show
from specmath.classic.fair_coin import fair_coin_law, von_neumann
from specmath.classic.rejection import rejection_sampler, smallest_envelope
from specmath.classic.reservoir import algorithm_r, inclusion_probabilities, subset_target
from specmath.plots.classic_plots import plot_von_neumann_flips
from specmath.speculative import acceptance_rate, step_law
from specmath.stats import g_test

# %% [markdown]
# ## Von Neumann's fair coin
# Flip twice: HT → heads, TH → tails, HH or TT → flip again. Both kept outcomes have probability
# $p(1-p)$. The program:

# %%
show(von_neumann)

# %% [markdown]
# For $p = 3/10$:

# %%
r = exact(von_neumann, Fraction(3, 10))
print(r.law, "E[flips] =", r.expected_cost("flip"))
assert r.law == fair_coin_law() and r.expected_cost("flip") == 1 / (Fraction(3, 10) * Fraction(7, 10))

# %% [markdown]
# The same program with a sympy symbol for the bias proves fairness for *every* $p \in (0, 1)$ at once:

# %%
p = sympy.Symbol("p", positive=True)
law, costs = exact_symbolic(von_neumann, p)
print(law, costs)
assert sympy.simplify(law["H"] - sympy.Rational(1, 2)) == 0
assert sympy.simplify(costs["flip"] - 1 / (p * (1 - p))) == 0

# %%
fig = plot_von_neumann_flips()

# %% [markdown]
# ## Reservoir sampling (Algorithm R)
# Keep the first $k$ items; item $i > k$ replaces a uniform slot with probability $k/i$:

# %%
show(algorithm_r)

# %% [markdown]
# The exact law over subsets of $\{1..6\}$ with $k = 3$:

# %%
law = exact(algorithm_r, 6, 3).law
assert law == subset_target(6, 3)  # each of the C(6, 3) = 20 subsets: 1/20
print(inclusion_probabilities(law, 6))
assert set(inclusion_probabilities(law, 6).values()) == {Fraction(1, 2)}

# %%
rng = np.random.default_rng(3)
counts = Counter(sample(algorithm_r, 6, 3, rng=rng) for _ in range(20_000))
print(g_test(counts, subset_target(6, 3)))
assert g_test(counts, subset_target(6, 3)).p_value > 1e-6

# %% [markdown]
# ## Rejection sampling with an envelope
# Propose $x \sim q$ and accept with $p(x) / (M q(x))$, where $M q \ge p$ everywhere. One attempt
# accepts with probability $1/M$; the output law is $p$. With the two-token laws the tightest envelope is
# $M = \max_x p(x)/q(x) = 1.75$. The program:

# %%
show(rejection_sampler)

# %%
p2 = Law({"A": "7/10", "B": "3/10"})
q2 = Law({"A": "2/5", "B": "3/5"})
M = smallest_envelope(p2, q2)
res = exact(rejection_sampler, p2, q2, M)
print("M =", M, " law:", res.law, " acceptance per attempt:", 1 - res.attempt_restart_probability,
      " E[proposals]:", res.expected_cost("proposal"))
assert res.law == p2 and 1 - res.attempt_restart_probability == 1 / M

# %% [markdown]
# Rejection sampling needs $M = 7/4$ proposals on average per output. Speculative sampling with the same
# laws needs exactly **one** proposal: instead of restarting after a rejection, it draws from the residual
# law. Its acceptance rate is $\alpha = 7/10 > 1/M = 4/7$, and the output law is still $p$:

# %%
print("speculative alpha =", acceptance_rate(p2, q2), " vs rejection 1/M =", 1 / M)
assert step_law(p2, q2) == p2 and acceptance_rate(p2, q2) > 1 / M

# %% [markdown]
# ## Summary
# - Discarding the symmetric outcomes HH and TT makes a fair coin from any biased one; the symbolic
#   interpreter proves it for all $p$ at once, at a cost of $1/(p(1-p))$ flips.
# - Algorithm R keeps each item with probability $k/n$ and every $k$-subset with probability $1/\binom{n}{k}$.
# - Rejection sampling accepts with $1/M$ and restarts otherwise; speculative sampling never restarts: it
#   resamples from the residual, so one target pass always yields a token.
#
# ## Exercises
# 1. Peres' extractor reuses the discarded pairs. Before notebook 06, guess its rate at $p = 0.3$.
# 2. Edit the program: copy `algorithm_r` (shown above) into a cell and make it keep item $i$ with probability
#    $1/i$ regardless of $k$. Re-prove it with `exact`: which subsets become more likely?
# 3. Show with `exact(rejection_sampler, p, q, M)` that a larger $M$ leaves the output law unchanged but
#    increases `expected_cost("proposal")` to exactly $M$.
