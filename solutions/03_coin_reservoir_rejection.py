# %% [markdown]
# # Solutions · 03 Coin, reservoir, rejection
# Notation: $p$ = target law, $q$ = proposal law, $M$ = envelope constant ($M q \ge p$).

# %%
from fractions import Fraction

from specmath import Law, exact
from specmath.classic.rejection import rejection_sampler, smallest_envelope
from specmath.classic.reservoir import check_reservoir_sizes, subset_target
from specmath.entropy.extractors import peres_rate, von_neumann_rate
from specmath.program import die

# %% [markdown]
# ## 1. Peres' rate at p = 0.3
# von Neumann keeps $p(1-p) = 0.21$ bits per flip; Peres recycles the discarded pairs and, with enough
# depth, approaches the entropy $H(0.3) \approx 0.881$. (Notebook 06 computes these.)

# %%
vn = von_neumann_rate(Fraction(3, 10))
deeper = [peres_rate(Fraction(3, 10), d) for d in (1, 2, 4, 8)]
assert vn == Fraction(21, 100) and deeper[0] == vn
assert all(a < b for a, b in zip(deeper, deeper[1:], strict=False)) and float(deeper[-1]) < 0.8813
print("Peres rate by depth:", [round(float(r), 4) for r in deeper])

# %% [markdown]
# ## 2. Keep item i with probability 1/i regardless of k
# With $k = 2$, $n = 4$ items 3 and 4 enter less often than $k/n$, and the first items stay too long:
# subsets made of early items become more likely.

# %%
def reservoir_one_over_i(n: int, k: int):
    check_reservoir_sizes(n, k)
    reservoir = list(range(1, k + 1))
    for i in range(k + 1, n + 1):
        keep = yield die(i, label="keep?")  # probability 1/i: the die shows 1
        if keep == 1:
            slot = yield die(k, label="slot")
            reservoir[slot - 1] = i
    return tuple(sorted(reservoir))


law = exact(reservoir_one_over_i, 4, 2).law
target = subset_target(4, 2)
assert law != target
assert law[(1, 2)] == Fraction(1, 2) > target[(1, 2)] == Fraction(1, 6)  # kept unless 3 or 4 arrived
print({s: str(w) for s, w in law.items()})

# %% [markdown]
# ## 3. A larger M costs exactly M proposals and changes nothing else

# %%
p = Law({"a": "1/2", "b": "1/3", "c": "1/6"})
q = Law({"a": "1/3", "b": "1/3", "c": "1/3"})
M0 = smallest_envelope(p, q)
assert M0 == Fraction(3, 2)
for M in (M0, 2, Fraction(7, 2), 10):
    result = exact(rejection_sampler, p, q, M)
    assert result.law == p and result.expected_cost("proposal") == M
