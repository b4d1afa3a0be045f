# %% [markdown]
# # Solutions · 08 Explorers
# Notation: $p$ = target law, $q$ = draft law, $\gamma$ = draft tokens per round, $\alpha = \sum_x \min(p(x), q(x))$,
# $c$ = draft pass cost / target pass cost.

# %%
from fractions import Fraction

import torch

from specmath.explorers import rand_view, round_view, two_token_view
from specmath.lm.warps import warped_probs

# %% [markdown]
from specmath.sampling_options import SamplingOptions

# %% [markdown]
# ## 1. When does the two-token round never reject?
# Rejection has probability $1 - \alpha = \text{TV}(p, q)$, so never rejecting means $p = q$: the diagonal of the
# slider square, and nowhere else.

# %%
never = [(a, b) for a in range(0, 101, 5) for b in range(0, 101, 5) if two_token_view(Fraction(a, 100), Fraction(b, 100)).alpha == 1]
assert never == [(a, a) for a in range(0, 101, 5)]

# %% [markdown]
# ## 2. rand2 → rand_b where plain rejection is already optimal
# Basic rejection is optimal when $b$ is a power of two (nothing is ever rejected) and when $b = 2^k - 1$
# (3 and 7): a rejection then leaves a single value, which carries no information for recycling to reuse.

# %%
optimal = [b for b in range(2, 13) if rand_view("basic", 2, b).expected_calls == rand_view("basic", 2, b).optimum]
print("basic rejection is optimal for b in", optimal)
assert optimal == [2, 3, 4, 7, 8]
assert all(rand_view("recycling", 2, b).expected_calls <= rand_view("basic", 2, b).expected_calls for b in range(2, 13))

# %% [markdown]
# ## 3. At alpha = 0.6, how cheap must drafts be?
# The best speedup exceeds 1 exactly when $c < \alpha = 0.6$ (see solution 04.4).

# %%
assert round_view(Fraction(3, 5), 1, Fraction(59, 100)).best_speedup > 1
assert round_view(Fraction(3, 5), 1, Fraction(3, 5)).best_gamma == 0

# %% [markdown]
# ## 4. Temperature 0
# At $T = 0$ both laws are one-hot on their argmax, so $q(x) = 1$ for the drafted token and $p(x) \in \{0, 1\}$:
# the acceptance $\min(1, p(x)/q(x))$ is 1 if the target's argmax is the draft's, else 0 (greedy verification).

# %%
greedy = SamplingOptions(temperature=0)
logits = torch.randn(2, 10, generator=torch.Generator().manual_seed(0))
p, q = warped_probs(logits[0], greedy), warped_probs(logits[1], greedy)
x = int(q.argmax())
accept = min(1.0, float(p[x] / q[x]))
assert accept in (0.0, 1.0) and (accept == 1.0) == (int(p.argmax()) == x)
