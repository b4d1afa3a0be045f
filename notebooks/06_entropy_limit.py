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
# # 06 · How close to the entropy limit?
#
# **What you will learn**
# - why $\log_5 7 \approx 1.2091$ rand5 calls per rand7, and $H(p)$ fair bits per flip of a $p$-coin, are limits;
# - unbounded recycling: the best any rand7 can do *one output at a time* is exactly $1115/504 \approx 2.2123$
#   calls (the Knuth-Yao bound), and the article's sampler costs exactly $5816/2625 \approx 2.2156$;
# - a recycling *stream* that keeps its leftover across outputs: its first three outputs are proved i.i.d. uniform,
#   and it runs at 1.2093 calls per output, within 0.02% of the limit;
# - Knuth-Yao's DDG walk samples any rational law from rand5, e.g. speculative decoding's residual law;
# - coins: von Neumann, Peres and Elias extractors, proved fair, and their rates against $H(p)$;
# - weighted reservoirs: A-Res is successive sampling (not "inclusion $\propto$ weight"), and Algorithm L skips
#   exactly like Algorithm R.
#
# **Notation** (as in every notebook): $p$ = target law, $q$ = draft law, $\gamma$ = draft tokens per round,
# $\alpha = \sum_x \min(p(x), q(x))$. Here $p$ is also a coin's bias, as in the literature on extractors.

# %% tags=["remove-cell"]
import math
from fractions import Fraction
from itertools import product

import numpy as np
import sympy

from specmath import exact, exact_symbolic, show
from specmath.classic.rand7 import rand7_article, rand7_basic, uniform_target
from specmath.entropy.extractors import (
    block_extractor,
    block_rate,
    elias_rate,
    fair_given_length_target,
    peres_rate,
    von_neumann_rate,
)
from specmath.entropy.knuth_yao import entropy, knuth_yao, knuth_yao_step, optimal_expected_draws
from specmath.entropy.rand_recycling import knuth_yao_bound, leftover_sizes, rand7_recycling, rand_recycling
from specmath.entropy.recycling_stream import (
    RecyclingStream,
    long_run_calls_per_output,
    numpy_rolls,
    stream_joint_law,
    stream_step_from_uniform,
)
from specmath.entropy.weighted_reservoir import (
    a_res_law,
    algorithm_l_next_law,
    algorithm_r_next,
    inclusion_probabilities,
    naive_inclusion,
)
from specmath.laws import Law, uniform
from specmath.plots.entropy_plots import plot_coin_rates, plot_rand7_calls_by_method
from specmath.speculative import residual_law
from specmath.speculative.two_token import DRAFT, TARGET

# %% [markdown]
# ## The limit
# A rand7 output carries $\log_2 7$ bits; a rand5 call supplies $\log_2 5$ bits. No sampler can make $N$ outputs
# from fewer than $N \log_5 7$ calls on average (in the long run), so $\log_5 7$ calls per output is the floor.

# %%
limit = math.log(7, 5)
print(f"log_5 7 = {limit:.6f} calls per rand7; within 0.1% of it means <= {limit * 1.001:.4f}")

# %% [markdown]
# ## One output at a time
# Basic rejection, the article's three recycling levels and *unbounded* recycling (carry the rejected leftover,
# of size $n \bmod 7$, until an output is possible) are all exactly uniform. The recycling program, whose
# leftover `(value, size)` travels in the arguments of `Recur`:

# %%
show(rand_recycling)

# %%
costs = {}
for name, program in [("basic", rand7_basic), ("article", rand7_article), ("recycling", rand7_recycling)]:
    result = exact(program)
    assert result.law == uniform_target(7)
    costs[name] = result.expected_cost("rand5")
    print(f"{name:<10} E[calls] = {costs[name]} ~ {float(costs[name]):.4f}")
assert costs == {"basic": Fraction(50, 21), "article": Fraction(5816, 2625), "recycling": Fraction(1115, 504)}

# %% [markdown]
# **Where the article is off.** It writes $E[\text{calls}] \approx 2.21$: the exact value is
# $5816/2625 = 2.21562$, which rounds to 2.22. Its fallback "happens with < 0.3%" (in the text) or "~0.1%"
# (in the code comment): the exact probability is $2/625 = 0.32\%$.

# %%
article = exact(rand7_article)
assert article.expected_cost("fallback") == Fraction(2, 625)
print({k: str(article.expected_cost(k)) for k in ["level 1", "level 2", "level 3", "fallback"]})

# %% [markdown]
# **Why $1115/504$ is the best possible one output at a time (Knuth-Yao).** After $k$ rolls, a sampler has
# seen one of $5^k$ equally likely histories. The histories on which it has already output $j$ have total
# probability a multiple of $5^{-k}$ that is at most $1/7$, so at most $7 \lfloor 5^k/7 \rfloor / 5^k$ of the mass
# has stopped: $P(T > k) \ge (5^k \bmod 7)/5^k$. Summing over $k$,
# $E[T] = \sum_k P(T > k) \ge \sum_{k \ge 0} (5^k \bmod 7)/5^k$. Unbounded recycling keeps a leftover of size exactly
# $5^k \bmod 7$ after $k$ rolls, so it meets the bound at every $k$:

# %%
print("leftover sizes after k rolls:", leftover_sizes(5, 7, 12))
assert leftover_sizes(5, 7, 6) == [pow(5, k, 7) if 5**k >= 7 else 5**k for k in range(7)]
assert knuth_yao_bound(5, 7) == costs["recycling"] == Fraction(1115, 504)

# %% [markdown]
# The gap from 2.2123 to 1.2091 is not waste in the sampler: it is the price of stopping after *each* output.

# %% [markdown]
# ## A recycling stream: keep the leftover across outputs
# State: $v$ uniform on $0..n-1$. Refill with rolls until $n \ge$ `bound`; if $v < m = 7\lfloor n/7 \rfloor$, output
# $v \bmod 7 + 1$ and **keep the quotient** $\lfloor v/7 \rfloor$, uniform on $0..m/7-1$ and independent of the output;
# otherwise keep $v - m$. The exact interpreter threads the state through three outputs:

# %%
joint, calls3 = stream_joint_law(5, 7, 10, 3)
assert joint == uniform(product(range(1, 8), repeat=3))
print(f"first 3 outputs: i.i.d. uniform on 1..7 (343 outcomes, each 1/343); E[calls] = {calls3} ~ {float(calls3):.4f}")

# %% [markdown]
# Why it holds for every $k$: one step from a uniform state gives
# $P(x, v', n') = \frac{1}{7} P(n') \frac{1}{n'}$, an output independent of a new state that is again uniform.

# %%
law = exact(stream_step_from_uniform, 5, 7, 16, 3).law
sizes = law.map(lambda t: t[2])
assert all(w == Fraction(1, 7) * sizes[n2] / n2 for (x, v, n2), w in law.items())
print("law of the state size after one output from n = 3:", sizes)

# %% [markdown]
# The state size `bound` trades memory for calls. Small bounds are solved exactly (the size alone is a Markov
# chain); large ones are measured (the benchmark `benchmarks/entropy_stream.py` does $10^6$ outputs per size).

# %%
print(f"bound 16: exact long-run calls per output = {long_run_calls_per_output(5, 7, 16)} "
      f"~ {float(long_run_calls_per_output(5, 7, 16)):.6f}")
stream = RecyclingStream(5, 7, 2**16, numpy_rolls(5, np.random.default_rng(6)))
stream.take(50_000)
print(f"bound 2^16: measured {stream.calls / 50_000:.6f} calls per output over 50,000 outputs")
assert stream.calls / 50_000 < limit * 1.001

# %%
fig = plot_rand7_calls_by_method()

# %% [markdown]
# ## Any rational law from a fair die: Knuth-Yao
# The same "uniform leftover" walk samples any rational law: at depth $k$ the DDG tree has one leaf labelled $x$ per
# base-$a$ digit of $p(x)$. Its cost $\sum_k \sum_x \{a^k p(x)\}/a^k$ is the least possible, and for a coin
# $H \le E[\text{flips}] < H + 2$. Here it samples speculative decoding's **residual law** $\mathrm{norm}(\max(0, p - q))$
# from rand5, tying the two halves of the article together. In the two-token world the residual is $\{A: 1, B: 0\}$,
# which costs no call at all. The program walks the tree one die roll per level:

# %%
show(knuth_yao)

# %%
show(knuth_yao_step)

# %%
two_token_residual = residual_law(TARGET, DRAFT)
r = exact(knuth_yao, two_token_residual, 5)
assert r.law == Law({"A": 1, "B": 0}) and r.expected_cost("rand5") == 0

p5 = Law({"a": Fraction(1, 2), "b": Fraction(1, 4), "c": Fraction(1, 8), "d": Fraction(1, 8)})
q5 = Law({"a": Fraction(1, 10), "b": Fraction(1, 2), "c": 0, "d": Fraction(2, 5)})
res = residual_law(p5, q5)
r = exact(knuth_yao, res, 5)
assert r.law == res == Law({"a": Fraction(16, 21), "c": Fraction(5, 21)})
assert r.expected_cost("rand5") == optimal_expected_draws(res, 5) == Fraction(5, 4)
print(f"residual {res} from rand5: E[calls] = 5/4; entropy H_5 = {entropy(res, 5):.4f}")

coin_law = Law({"x": Fraction(1, 3), "y": Fraction(2, 3)})
e2 = exact(knuth_yao, coin_law, 2).expected_cost("flip")
assert entropy(coin_law) <= e2 < entropy(coin_law) + 2
print(f"{{1/3, 2/3}} from a fair coin: E[flips] = {e2}, H = {entropy(coin_law):.4f}")

# %% [markdown]
# ## Fair bits from a biased coin
# An extractor turns $n$ flips into bits that are fair and independent **given how many there are**:
# $P(s) = P(\text{length} = |s|) / 2^{|s|}$. Von Neumann keeps one bit per unequal pair; Peres also recycles the
# XORs of the pairs and the values of the equal pairs; Elias ranks the sequence among those with as many heads.
# The exact joint law of the bits of 8 flips of a $3/10$-coin:

# %%
p = Fraction(3, 10)
rates = {}
for method in ("von-neumann", "peres", "elias"):
    bits_law = exact(block_extractor, p, 8, method).law
    assert bits_law == fair_given_length_target(bits_law)
    rates[method] = block_rate(bits_law, 8)
    print(f"{method:<12} n = 8: {rates[method]} ~ {float(rates[method]):.4f} bits per flip")
print(f"H(0.3) = {entropy(Law({1: p, 0: 1 - p})):.4f} bits per flip")

# %% [markdown]
# And for a *symbolic* bias $p$: every string of a given length has the same probability, as a polynomial in $p$.

# %%
ps = sympy.Symbol("p", positive=True)
sym_law, _ = exact_symbolic(block_extractor, ps, 6, "peres")
by_length = {}
for bits, w in sym_law.items():
    by_length.setdefault(len(bits), set()).add(sympy.expand(w))
assert all(len(ws) == 1 for ws in by_length.values())
print({length: sympy.factor(next(iter(ws))) for length, ws in sorted(by_length.items())})

# %% [markdown]
# As $n \to \infty$, Peres' extractor of depth $d$ has rate
# $r_d(p) = pq + \tfrac12 r_{d-1}(p^2 + q^2) + \tfrac12 (p^2 + q^2)\, r_{d-1}\!\left(\tfrac{p^2}{p^2 + q^2}\right)$,
# which climbs to $H(p)$; Elias' block rate also tends to $H(p)$ as the block grows.

# %%
print(f"p = 0.3: von Neumann {von_neumann_rate(0.3):.4f}; Peres depth 2, 4, 8: "
      + ", ".join(f"{peres_rate(0.3, d):.4f}" for d in (2, 4, 8))
      + f"; Elias n = 64: {elias_rate(0.3, 64):.4f}; H = 0.8813")
assert peres_rate(p, 1) == von_neumann_rate(p) == Fraction(21, 100)

# %%
fig = plot_coin_rates()

# %% [markdown]
# ## Weighted reservoir sampling
# A-Res keeps the $k$ largest keys $u_i^{1/w_i}$. Integrating the key densities $w x^{w-1}$ (with sympy) gives exactly the
# law of **successive sampling** without replacement; the inclusion probability is *not* $k w_i / W$:

# %%
weights = {"a": 1, "b": 2, "c": 3}
a_res = a_res_law(weights, 2)
print("A-Res sample law:", a_res)
incl = inclusion_probabilities(a_res, "abc")
print("P(kept):", {x: str(v) for x, v in incl.items()}, " vs k w / W:", {x: str(v) for x, v in naive_inclusion(weights, 2).items()})
assert incl["c"] == Fraction(17, 20) != naive_inclusion(weights, 2)["c"]

# %% [markdown]
# Algorithm L skips ahead by a geometric number of items with a random threshold $W \sim \mathrm{Beta}(k, i-k+1)$;
# integrated exactly, its next-replacement law equals Algorithm R's, item by item:

# %%
for i in range(2, 7):
    assert algorithm_l_next_law(i, 2, 7) == exact(algorithm_r_next, i, 2, 7).law
print(algorithm_l_next_law(2, 2, 7))

# %% [markdown]
# ## Summary
# - Limits: $\log_5 7 \approx 1.2091$ calls per rand7 and $H(p)$ bits per flip.
# - One output at a time, unbounded recycling costs exactly $1115/504 \approx 2.2123$ calls and nothing can do better
#   (Knuth-Yao: $P(T > k) \ge (5^k \bmod 7)/5^k$, met with equality). The article's sampler costs $5816/2625$
#   (not "≈ 2.21") and falls back with probability $2/625 = 0.32\%$ (not "< 0.3%", nor "~0.1%").
# - Keeping the leftover across outputs (a recycling stream) reaches 1.2093 calls per output with a $2^{16}$ state;
#   its outputs are proved i.i.d. uniform exactly.
# - Knuth-Yao samples any rational law, e.g. a speculative residual, from rand5 at the optimal cost.
# - Von Neumann wastes most of a coin's entropy (0.21 of 0.88 bits at $p = 0.3$); Peres and Elias approach $H(p)$.
# - A-Res is successive sampling; Algorithm L is Algorithm R with the coin flips skipped.
#
# ## Exercises
# 1. Compute `knuth_yao_bound(a, 7)` for a = 2..6. Which die size comes closest to its own limit $\log_a 7$?
# 2. `long_run_calls_per_output(5, 7, 21)` is about 1.3327 but bound 26 gives about 1.3404: a larger state can be
#    *worse*. Explain it with the sizes the state passes through (hint: which sizes are multiples of 7?).
# 3. Peres' depth-1 extractor is von Neumann's. Prove by hand that the XOR sequence $u$ is independent of the von
#    Neumann bits given which pairs were unequal, then check `peres_bits` at depth 2 exactly for $n = 4$.
# 4. Elias with $n = 2$ is von Neumann. Is Elias with $n = 4$ the same as Peres with $n = 4$? Compare the exact laws.
# 5. For weights (1, 1, 4) and $k = 2$, $k w_3 / W = 4/3 > 1$. What is A-Res's exact $P(3 \text{ kept})$?
# 6. Edit the program: copy `rand_recycling` (shown above) into a cell and make it *forget* the leftover (return
#    `Recur(my_recycling, a, b)` on rejection, i.e. start fresh). Re-prove it with `exact`: is it still uniform,
#    and what does the edit cost in expected calls for 5 → 7?
