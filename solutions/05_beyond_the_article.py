# %% [markdown]
# # Solutions · 05 Beyond the article
# Notation: $p$ = target law, $q$ = draft law, $\gamma$ = draft tokens per round, $\alpha = \sum_x \min(p(x), q(x))$.

# %%
from fractions import Fraction
from itertools import product

from specmath import exact, tv_distance
from specmath.bugzoo import BUGS
from specmath.laws import Law
from specmath.sampling_options import SamplingOptions
from specmath.speculative import acceptance_rate, round_law, speculative_round
from specmath.speculative.block import block_round_law
from specmath.speculative.examples import WORD_DRAFT, WORD_TARGET
from specmath.speculative.multidraft import multidraft_acceptance, one_hot
from specmath.speculative.sample_match import match_acceptance
from specmath.speculative.toy_lm import random_toy_lm
from specmath.speculative.warped import warp_scenarios

# %% [markdown]
# ## 1. Warping only the target can raise the acceptance rate
# Both placements are lossless (TV 0); they differ in how often drafts are accepted. A sharp warp on a flat
# draft loses agreement, while an unwarped draft can sit closer to the warped target. Search random pairs:

# %%
BOTH, TARGET_ONLY = "warp on both sides (correct)", "warp on the target only, honest unwarped draft"
found = None
for seed in range(40):
    t, d = random_toy_lm(3, seed), random_toy_lm(3, seed + 1000)
    cases = warp_scenarios(t, d, SamplingOptions(temperature=Fraction(1, 2)), (), 1, 1)
    assert cases[BOTH]["tv"] == 0 and cases[TARGET_ONLY]["tv"] == 0
    if cases[TARGET_ONLY]["accepted"] > cases[BOTH]["accepted"]:
        found = seed, cases[BOTH]["accepted"], cases[TARGET_ONLY]["accepted"]
        break
assert found is not None
print(f"seed {found[0]}: E[accepted] both sides {found[1]} < target only {found[2]}")

# %% [markdown]
# ## 2. For gamma = 1 block verification is the token-wise round

# %%
for context in [(), ("x",), ("y", "z")]:
    assert block_round_law(WORD_TARGET, WORD_DRAFT, context, 1) == round_law(WORD_TARGET, WORD_DRAFT, context, 1)

# %% [markdown]
# ## 3. One-hot drafts: sum_x p(x) q(x) = alpha
# With $q$ the point mass on $x_0$: $\sum_x p(x) q(x) = p(x_0)$ and $\alpha = \sum_x \min(p(x), q(x)) = \min(p(x_0), 1) = p(x_0)$.

# %%
p = Law({"a": "1/2", "b": "1/3", "c": "1/6"})
for token in "abc":
    q = one_hot(token, ("a", "b", "c"))
    assert match_acceptance(p, q) == acceptance_rate(p, q) == p[token]

# %% [markdown]
# ## 4. A lossy rule of my own: resample from p on the residual-softmax instance
# On $p = \{A: 1/2, B: 1/2\}$, $q = \{A: 1, B: 0\}$ the draft always says A, accepted with $1/2$; resampling from $p$
# on rejection gives $A$ with $1/2 + 1/4 = 3/4$: TV $1/4$.

# %%
inst = BUGS["residual-softmax"].instance()


def resample_from_target(p, q, x):
    return min(Fraction(1), p[x] / q[x]), p


mine = exact(speculative_round, inst.target, inst.draft, inst.prefix, inst.gamma, resample_from_target).law.map(lambda e: e[0])
assert tv_distance(mine, inst.target(())) == Fraction(1, 4)
print("my rule: TV =", tv_distance(mine, inst.target(())), "; the zoo's residual-softmax: TV =", BUGS["residual-softmax"].tv())

# %% [markdown]
# ## 5. The best draft law for k = 2 drafts at the root
# Search $q$ over a grid of sixths; two independent drafts from $q$ are accepted by recursive rejection. The
# maximum is $q = p$ itself (acceptance 1: the first draft is always accepted), so any draft gains by moving
# towards the target. Two copies of one one-hot draft are no better than one: after the first is rejected the
# residual puts no mass on that token, so the second copy is rejected too (acceptance $p(x)$, not $1 - (1 - p(x))^2$).

# %%
p_root = WORD_TARGET(())
grid = [Law({"x": Fraction(i, 6), "y": Fraction(j, 6), "z": Fraction(6 - i - j, 6)}) for i, j in product(range(7), repeat=2) if i + j <= 6]
best = max(grid, key=lambda q: multidraft_acceptance(p_root, (q, q)))
print("p =", dict(p_root), " best q =", dict(best), " acceptance =", multidraft_acceptance(p_root, (best, best)))
assert best == p_root and multidraft_acceptance(p_root, (best, best)) == 1
mode = one_hot("x", ("x", "y", "z"))
assert multidraft_acceptance(p_root, (mode, mode)) == multidraft_acceptance(p_root, (mode,)) == p_root["x"]
