# %% [markdown]
# # Solutions · 02 rand5 → rand7

# %%
from fractions import Fraction

from specmath import exact
from specmath.classic.rand7 import rand_article, rand_basic, uniform_target
from specmath.entropy.rand_recycling import knuth_yao_bound
from specmath.laws import uniform

# %% [markdown]
# ## 1. More recycling levels
# The expected calls fall with every level and converge to the Knuth-Yao optimum $1115/504$: after the
# levels run out the article's sampler *is* unbounded recycling (sizes 25 → 4 → 20 → 6 → 30 → 2 → ...).

# %%
calls = {levels: exact(rand_article, 5, 7, levels).expected_cost("rand5") for levels in (1, 2, 3, 5, 10)}
for levels, c in calls.items():
    print(f"{levels:>2} levels: {c} ≈ {float(c):.6f}")
values = list(calls.values())
assert all(a > b for a, b in zip(values, values[1:], strict=False))
assert calls[3] == Fraction(5816, 2625)
limit = knuth_yao_bound(5, 7)
assert limit == Fraction(1115, 504) and 0 < calls[10] - limit < Fraction(1, 10**5)

# %% [markdown]
# ## 2. Why only 1..21
# 21 = 3 · 7: each residue appears three times. On 1..25 the values 22..25 add one more 1, 2, 3, 4.

# %%
assert uniform(range(1, 22)).map(lambda v: (v - 1) % 7 + 1) == uniform_target(7)
on_25 = uniform(range(1, 26)).map(lambda v: (v - 1) % 7 + 1)
assert on_25 == {1: Fraction(4, 25), 2: Fraction(4, 25), 3: Fraction(4, 25), 4: Fraction(4, 25),
                 5: Fraction(3, 25), 6: Fraction(3, 25), 7: Fraction(3, 25)}

# %% [markdown]
# ## 3. rand7 → rand5
# One roll suffices (7 ≥ 5): keep 1..5, restart on 6, 7. $E[\text{calls}] = 7/5$.

# %%
down = exact(rand_basic, 7, 5, "rand7")
assert down.law == uniform_target(5) and down.expected_cost("rand7") == Fraction(7, 5)

# %% [markdown]
# ## 4. Edit the program: keep 1..24
# 24 = 3 · 7 + 3, so residues 1, 2, 3 appear four times and 4..7 three times: the law is $1/6$ on 1..3
# and $1/8$ on 4..7, at TV distance $3 (1/6 - 1/7) = 1/14$ from uniform. Fewer restarts, wrong answer.

# %%
from specmath import RESTART, die, tv_distance  # noqa: E402


def rand7_keep_24():
    a = yield die(5, label="rand5")
    b = yield die(5, label="rand5")
    val = 5 * (a - 1) + b
    if val <= 24:  # the edit: 21 -> 24
        return (val - 1) % 7 + 1
    return RESTART


edited = exact(rand7_keep_24).law
assert edited == {1: Fraction(1, 6), 2: Fraction(1, 6), 3: Fraction(1, 6),
                  4: Fraction(1, 8), 5: Fraction(1, 8), 6: Fraction(1, 8), 7: Fraction(1, 8)}
assert tv_distance(edited, uniform_target(7)) == Fraction(1, 14)
print("keep 1..24:", {x: str(w) for x, w in edited.items()}, " TV from uniform:", tv_distance(edited, uniform_target(7)))
