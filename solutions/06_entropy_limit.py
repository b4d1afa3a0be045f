# %% [markdown]
# # Solutions · 06 How close to the entropy limit?
# Notation: $p$ is a coin's bias here; $H(p)$ its entropy in bits.

# %%
import math
from fractions import Fraction
from itertools import product

from specmath import exact
from specmath.entropy.extractors import block_extractor, elias_bits, fair_given_length_target, peres_bits
from specmath.entropy.rand_recycling import knuth_yao_bound, leftover_sizes
from specmath.entropy.recycling_stream import long_run_calls_per_output
from specmath.entropy.weighted_reservoir import a_res_law, inclusion_probabilities

# %% [markdown]
# ## 1. Which die comes closest to its own limit log_a 7?

# %%
ratios = {}
for a in range(2, 7):
    bound = knuth_yao_bound(a, 7)
    ratios[a] = float(bound) / math.log(7, a)
    print(f"a = {a}: E[calls] = {bound} ≈ {float(bound):.4f}, limit log_{a} 7 ≈ {math.log(7, a):.4f}, ratio {ratios[a]:.4f}")
best = min(ratios, key=ratios.get)
assert all(r > 1 for r in ratios.values())
print("closest to its limit: a =", best)

# %% [markdown]
# ## 2. A larger state can be worse
# The stream outputs when its state size is a multiple of 7 or can be cut to one; what decides the rate is how
# much mass is left over at each size. With bound 26 the sizes it passes through leave more waste than with bound 21.

# %%
r21, r26 = long_run_calls_per_output(5, 7, 21), long_run_calls_per_output(5, 7, 26)
print(f"bound 21: {float(r21):.4f} calls per output, bound 26: {float(r26):.4f}")
assert r26 > r21
# the one-output-at-a-time sampler's leftover sizes: a^k mod b, never a multiple of 7
assert all(s % 7 for s in leftover_sizes(5, 7, 12))

# %% [markdown]
# ## 3. and 4. Extractors with n = 4: fair given the length; Elias and Peres
# Exactly fair means: given the number of bits, every bit string is equally likely. Elias and Peres are
# *different maps* at n = 4 (they disagree on 11 of the 16 flip sequences), yet their output *laws* are equal:
# both are fair given the length and both extract the same number of bits from each sequence's type class
# (checked for several biases).

# %%
p = Fraction(1, 3)
peres2 = exact(block_extractor, p, 4, "peres", 2).law
elias4 = exact(block_extractor, p, 4, "elias").law
peres4 = exact(block_extractor, p, 4, "peres").law
for law in (peres2, elias4, peres4):
    assert law == fair_given_length_target(law)
print("E[bits], Elias n=4:", elias4.expectation(len), " Peres n=4:", peres4.expectation(len))
flips = list(product([False, True], repeat=4))
assert sum(elias_bits(f) != peres_bits(f) for f in flips) == 11  # different maps ...
for bias in (Fraction(1, 3), Fraction(1, 5), Fraction(2, 7)):  # ... with the same law
    assert exact(block_extractor, bias, 4, "elias").law == exact(block_extractor, bias, 4, "peres").law

# %% [markdown]
# ## 5. A-Res with weights (1, 1, 4), k = 2
# "Inclusion proportional to weight" would give item 3 probability $2 \cdot 4/6 = 4/3 > 1$: impossible. A-Res is
# successive sampling without replacement, so $P(3 \text{ kept}) = 4/6 + (1/6)(4/5) \cdot 2 = 14/15$.

# %%
law = a_res_law({1: 1, 2: 1, 3: 4}, 2)
kept = inclusion_probabilities(law, [1, 2, 3])
assert kept[3] == Fraction(4, 6) + 2 * Fraction(1, 6) * Fraction(4, 5) == Fraction(14, 15)
print("P(kept):", {i: str(v) for i, v in kept.items()})

# %% [markdown]
# ## 6. Edit the program: forget the leftover
# Starting fresh after a rejection is still exactly uniform (each attempt is), but it throws away the
# leftover's randomness: for 5 → 7 it is basic rejection again, $50/21 \approx 2.381$ calls instead of
# $1115/504 \approx 2.212$.

# %%
from specmath import Recur, die  # noqa: E402
from specmath.classic.rand7 import uniform_target  # noqa: E402
from specmath.entropy.rand_recycling import rand7_recycling  # noqa: E402


def my_recycling(a: int = 5, b: int = 7, value: int = 0, size: int = 1):
    while size < b:
        r = yield die(a, label=f"rand{a}")
        value, size = a * value + (r - 1), a * size
    m = b * (size // b)
    if value < m:
        return value % b + 1
    return Recur(my_recycling, a, b)  # the edit: start fresh instead of keeping (value - m, size - m)


forgetful = exact(my_recycling, 5, 7)
assert forgetful.law == uniform_target(7)
assert forgetful.expected_cost("rand5") == Fraction(50, 21) > exact(rand7_recycling).expected_cost("rand5") == Fraction(1115, 504)
print("forgetting the leftover: E[calls] =", forgetful.expected_cost("rand5"), "instead of 1115/504")
