# %% [markdown]
# # Solutions · 10 Token trees
# Notation: $p$ = target law, $q$ = draft law, $\gamma$ = draft tokens per round, $\alpha = \sum_x \min(p(x), q(x))$.

# %%
from fractions import Fraction

from specmath import exact, tv_distance
from specmath.bugzoo.typical_acceptance import typical_tv_grid
from specmath.laws import Law
from specmath.speculative import autoregressive_law, round_law
from specmath.speculative.examples import WORD_DRAFT, WORD_TARGET
from specmath.speculative.multidraft import one_hot
from specmath.speculative.tree import TreeShape, node_step, tree_generation_law, tree_round_law
from specmath.speculative.tree_examples import TREE_DRAFT, TREE_TARGET
from specmath.speculative.tree_verifiers import recursive_rejection, specinfer_verifier, target_only_verifier

# %% [markdown]
# ## 1. A chain is the tree of branching 1
# With one child per node, SpecInfer's recursive rejection is one standard step per position: the round of notebook 04.

# %%
for gamma in (1, 2, 3):
    assert tree_round_law(WORD_TARGET, WORD_DRAFT, (), TreeShape((1,) * gamma), "specinfer") == round_law(WORD_TARGET, WORD_DRAFT, (), gamma)
print("chains of 1, 2, 3: tree round law == round law")

# %% [markdown]
# ## 2. SpecInfer's rule on a top-1 child
# The child is A with certainty. It is kept with min(1, p(A)/q(A)) = (1/2)/(3/4) = 2/3; otherwise the
# residual norm(max(0, p - q)) = {B: 1} emits B. So the law is {A: 2/3, B: 1/3}, TV 1/6 from p.

# %%
p = Law({"A": Fraction(1, 2), "B": Fraction(1, 2)})
q = Law({"A": Fraction(3, 4), "B": Fraction(1, 4)})
emitted = exact(node_step, p, q, 1, "top-k", specinfer_verifier).law.map(lambda outcome: outcome[1])
assert emitted == Law({"A": Fraction(2, 3), "B": Fraction(1, 3)})
assert tv_distance(emitted, p) == Fraction(1, 6)
print("SpecInfer on the top-1 child:", dict(emitted), "TV", tv_distance(emitted, p))


# %% [markdown]
# ## 3. EAGLE's verifier: recursive rejection with one-hot draft laws
# A top-k child was proposed with certainty, so its draft law is one-hot: keep it with the running target's
# mass on it, else remove it and renormalise. That is SGLang's target-only rule, node by node.

# %%
def one_hot_verifier(p, q, children):
    """Each child judged against one-hot(child): the law it was really drawn from."""
    return (yield from recursive_rejection(p, [one_hot(x, tuple(p)) for x in children], children))


shape = TreeShape((2, 2), "top-k")
eagle = tree_round_law(TREE_TARGET, TREE_DRAFT, (), shape, one_hot_verifier)
assert eagle == tree_round_law(TREE_TARGET, TREE_DRAFT, (), shape, target_only_verifier)
assert tree_generation_law(TREE_TARGET, TREE_DRAFT, (), shape, 3, one_hot_verifier) == autoregressive_law(TREE_TARGET, (), 3)
print("one-hot recursive rejection == target-only on 2 x 2 top-k trees; lossless over 3 tokens")

# %% [markdown]
# ## 4. When is vLLM V0's typical acceptance lossless?
# When the threshold min(ε, δ e^{-H}) is at least every p(x) a candidate could have, every candidate is
# rejected and each round emits one token y ~ p: plain sampling. On the tree pair the largest p(x) is 1/2,
# so ε = 3/5 with δ e^{-H} >= 1/2 (δ = 3/2 is enough here) does it.

# %%
grid = typical_tv_grid(TREE_TARGET, TREE_DRAFT, (), TreeShape((1, 1)), 3, [Fraction(3, 5)], [Fraction(3, 2), Fraction(1, 10)],
                       greedy_first=False)
assert grid[Fraction(3, 5), Fraction(3, 2)] == 0
assert grid[Fraction(3, 5), Fraction(1, 10)] > 0  # a small delta lowers the threshold again
print({k: str(v) for k, v in grid.items()})

# %% [markdown]
# ## 5. SGLang's kernel with repeated children
# The running sum p(x_1) + p(x_2) counts a repeated child twice: with children (c, c) the rule keeps c when
# u <= 2 p(c) = 1 at the start, i.e. always.

# %%
law = tree_generation_law(TREE_TARGET, TREE_DRAFT, (), TreeShape((2,), "iid"), 2, "target-only")
tv = tv_distance(law, autoregressive_law(TREE_TARGET, (), 2))
assert tv > 0
start = TREE_TARGET(())
kept = exact(target_only_verifier, start, start, ("c", "c")).law
assert kept[0] + kept[1] == min(1, 2 * start["c"]) == 1
print(f"target-only with i.i.d. children: TV over 2 tokens = {tv} ~ {float(tv):.4f}; children (c, c) keep c with probability 1")
