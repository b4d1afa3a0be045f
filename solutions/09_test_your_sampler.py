# %% [markdown]
# # Solutions · 09 Test your own sampler
# Notation: $p$ = target law, $q$ = draft law, $\gamma$ = draft tokens per round,
# $\alpha = \sum_x \min(p(x), q(x))$.
# Run from anywhere: `python solutions/09_test_your_sampler.py` (or open it in Jupyter with jupytext).

# %%
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specmath import strategies as sms
from specmath.audit.power import tests_per_case
from specmath.audit.rounds.cases import BATTERY, case_named
from specmath.laws import Law
from specmath.sampling_options import SamplingOptions
from specmath.speculative.generate import autoregressive_law, completed_round_law
from specmath.speculative.step import residual_law, step_law
from specmath.speculative.toy_lm import warp
from specmath.stats import detectable_tv
from specmath.testing import assert_rule_lossless, assert_sampler_lossless

quiet = settings(derandomize=True, database=None, deadline=None, max_examples=30)


def my_rule(p, q, x):
    """Accept with min(1, p(x)/q(x)); on rejection resample from norm(max(0, p - q))."""
    accept = min(Fraction(1), p[x] / q[x])
    return accept, (residual_law(p, q) if accept < 1 else None)


# %% [markdown]
# ## 1. Accepting with min(1, p/q)^2
# Lossy. Hypothesis shrinks to p = {A: 1/2, B: 1/2}, q = {A: 1, B: 0}: the draft always proposes A,
# accepted with (1/2)^2 = 1/4; otherwise the residual norm(max(0, p - q)) = {B: 1} gives B. So
# P(A) = 1/4, P(B) = 3/4 and TV = |1/4 - 1/2| = 1/4.

# %%
def squared_accept(p, q, x):
    accept = min(Fraction(1), p[x] / q[x]) ** 2
    return accept, (residual_law(p, q) if accept < 1 else None)


with pytest.raises(AssertionError) as info:
    assert_rule_lossless(squared_accept)
print(info.value)
assert "p = {'A': 1/2, 'B': 1/2}" in str(info.value) and "q = {'A': 1, 'B': 0}" in str(info.value)
assert step_law(Law({"A": "1/2", "B": "1/2"}), Law({"A": 1, "B": 0}), squared_accept) == Law({"A": "1/4", "B": "3/4"})
assert "TV(law, p) = 1/4" in str(info.value)


# %% [markdown]
# ## 2. Rounds of warped toy LMs
# Warp both sides with top-1 (greedy): the round is still lossless for the *warped* target.

# %%
@quiet
@given(sms.toy_lm_pairs(1, 3), st.integers(1, 3))
def test_my_rule_on_warped_rounds(lms, gamma):
    w = SamplingOptions(top_k=1)
    target, draft = warp(lms[0], w), warp(lms[1], w)
    assert completed_round_law(target, draft, (), gamma, my_rule) == autoregressive_law(target, (), gamma + 1)


test_my_rule_on_warped_rounds()


# %% [markdown]
# ## 3. `u <= p(x)/q(x)` instead of `u * q(x) < p(x)`
# In exact arithmetic u is continuous and P(u = p(x)/q(x)) = 0, so the round law is unchanged: lossless.
# A float uniform can be exactly 0 (probability 2^-53 per draw for numpy's doubles), and then a token
# with p(x) = 0 is accepted: an emitted tuple of exact probability 0. A histogram of N = 20000 rounds
# sees that with probability about N 2^-53, i.e. never; the audit's edge probe sets the uniform to 0
# and catches it every time.

# %%
def le_round(target_probs, draft_probs, draft_tokens, rng):
    gamma = len(draft_tokens)
    out = []
    for i, x in enumerate(draft_tokens):
        p, q = target_probs[i], draft_probs[i]
        if rng.random() <= p[x] / q[x]:  # the variant: accepts p(x) = 0 when u == 0
            out.append(int(x))
            continue
        residual = np.maximum(p - q, 0.0)
        out.append(int(rng.choice(len(p), p=residual / residual.sum())))
        return out
    bonus = target_probs[gamma]
    out.append(int(rng.choice(len(bonus), p=bonus / bonus.sum())))
    return out


with pytest.raises(AssertionError) as info:
    assert_sampler_lossless(le_round, n=500, cases=(case_named("disjoint-supports"),))
print(str(info.value).splitlines()[1])
assert "zero probe" in str(info.value) and "exact probability 0" in str(info.value)

# %% [markdown]
# ## 4. Rounds needed to detect TV 0.01 on `vocab-2`
# `detectable_tv(law, n, alpha=level)` is the smallest TV found with probability 0.99. Doubling n
# until it drops below 0.01, at the per-test level of the full audit (1e-6 over all its tests):

# %%
case = case_named("vocab-2")
joint = case.expected().joint
level = 1e-6 / sum(tests_per_case(c.gamma) for c in BATTERY)
n = 1000
while detectable_tv(joint, n, alpha=level) > 0.01:
    n *= 2
print(f"n = {n} rounds: detectable TV {detectable_tv(joint, n, alpha=level):.4f}")
assert detectable_tv(joint, n // 2, alpha=level) > 0.01 >= detectable_tv(joint, n, alpha=level)
