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
# # 09 · Test your own sampler
#
# **What you will learn**
# - how to write a speculative sampling rule in plain Python and get its exact output law;
# - how to property-test it with `specmath.strategies` (law pairs, toy LMs, round inputs);
# - how a planted bug is caught, with the *smallest* counterexample and its exact TV distance;
# - how to audit an engine-shaped sampler (float arrays in, tokens out) end to end with one call,
#   `assert_sampler_lossless`, whose false-failure probability is at most $10^{-6}$.
#
# **Notation**: $p$ = target law, $q$ = draft law, $\gamma$ = draft tokens per round,
# $\alpha = \sum_x \min(p(x), q(x))$.
#
# The tools here are the ones you would put in *your* project's test suite: `specmath.strategies`
# (Hypothesis strategies) and `specmath.testing` (pytest assertions).

# %% tags=["remove-cell"]
from fractions import Fraction

import numpy as np
from hypothesis import find, given, settings
from hypothesis import strategies as st

from specmath import strategies as sms
from specmath.laws import Law
from specmath.speculative.generate import autoregressive_law, completed_round_law
from specmath.speculative.step import step_law
from specmath.testing import SamplerError, assert_rule_lossless, assert_sampler_lossless

# %%
# derandomized, no example database: the notebook prints the same examples on every run
quiet = settings(derandomize=True, database=None, deadline=None, max_examples=100)

# %% [markdown]
# ## 1. A rule, written the way you would write it
# A *rule* decides what happens to a draft token $x \sim q$: accept it with some probability, or
# reject it and resample from some law. Plain Python in: the laws may be dicts, and a Python float is
# read as the decimal it prints as (0.7 is $7/10$), so the answers come out exact.

# %%
def my_rule(p, q, x):
    """Accept with min(1, p(x)/q(x)); on rejection resample from norm(max(0, p - q))."""
    accept = min(Fraction(1), p[x] / q[x])
    if accept == 1:
        return accept, None  # no rejection possible: no residual needed
    excess = {y: max(Fraction(0), p[y] - q[y]) for y in p}
    total = sum(excess.values())  # = 1 - alpha > 0, since a rejection has positive probability
    return accept, {y: w / total for y, w in excess.items()}


law = step_law({"A": 0.7, "B": 0.3}, {"A": 0.4, "B": 0.6}, my_rule)
law

# %%
assert law == {"A": Fraction(7, 10), "B": Fraction(3, 10)}  # exactly p

# %% [markdown]
# ## 2. Property-test it with the strategies
# One example proves nothing about the others. `sms.law_pairs()` draws $(p, q)$ over one vocabulary
# from *integer* weights divided by their sum, so every law is exact, and Hypothesis reaches the edge
# cases that break samplers: $p = q$, disjoint supports, $q(x) = 0 < p(x)$, one-hot laws, a one-token
# vocabulary. Here are a few it draws:

# %%
for what, condition in [
    ("p == q", lambda pq: pq[0] == pq[1] and len(pq[0]) > 1),
    ("disjoint supports", lambda pq: not (pq[0].support & pq[1].support)),
    ("q(x) = 0 < p(x)", lambda pq: any(pq[1][x] == 0 < pq[0][x] for x in pq[0]) and len(pq[0].support) > 1),
    ("one token", lambda pq: len(pq[0]) == 1),
]:
    # law_pairs spends a few percent of its draws on each edge case: find may look at up to 1000
    p, q = find(sms.law_pairs(), condition, settings=settings(quiet, max_examples=1000))
    print(f"{what:18} p = {p}, q = {q}")


# %% [markdown]
# The property: for *every* such pair, one step of the rule outputs exactly $p$.

# %%
@quiet
@given(sms.law_pairs())
def test_my_rule_is_lossless(pq):
    p, q = pq
    assert step_law(p, q, my_rule) == p


test_my_rule_is_lossless()
print("100 law pairs: the step law equals p on every one")


# %% [markdown]
# A step is not a round. `sms.toy_lm_pairs()` draws a target and a draft *language model*: a table
# context -> law (so the law can depend on the position and the earlier tokens). A round of $\gamma$
# drafts continued by plain target sampling must have the autoregressive law of $\gamma + 1$ tokens.

# %%
@settings(quiet, max_examples=30)  # a round law enumerates up to V^gamma paths: 30 examples take seconds
@given(sms.toy_lm_pairs(1, 3), st.integers(1, 3))
def test_my_rule_rounds_are_lossless(lms, gamma):
    target, draft = lms
    assert completed_round_law(target, draft, (), gamma, my_rule) == autoregressive_law(target, (), gamma + 1)


test_my_rule_rounds_are_lossless()
print("30 toy-LM pairs: every round has the autoregressive law")


# %% [markdown]
# ## 3. A planted bug, and its smallest counterexample
# A frequent mistake: on rejection, resample from the target $p$ instead of the residual. It *looks*
# harmless. The same property test fails, and Hypothesis shrinks the failing example to a small one:

# %%
def resample_from_p(p, q, x):
    """Accept with min(1, p(x)/q(x)); on rejection resample from p (the bug)."""
    return min(Fraction(1), p[x] / q[x]), p


@quiet
@given(sms.law_pairs())
def test_resample_from_p_is_lossless(pq):
    p, q = pq
    assert step_law(p, q, resample_from_p) == p


try:
    test_resample_from_p_is_lossless()
except AssertionError as error:
    # Hypothesis attaches the shrunk falsifying example to the error as a note
    print("\n".join(error.__notes__))

# %% [markdown]
# `assert_rule_lossless` packs this into one call: the rule battery (every edge case, random pairs,
# two rounds), exact laws, and on a loss the shrunk counterexample with its exact TV distance
# $\mathrm{TV}(\text{law}, p) = \tfrac12 \sum_x |\text{law}(x) - p(x)|$ and the difference table.

# %%
assert_rule_lossless(my_rule)  # passes silently
try:
    assert_rule_lossless(resample_from_p)
except AssertionError as error:
    message = str(error)
print(message)

# %%
# by hand: p = {A: 1/2, B: 1/2}, q = {A: 1, B: 0}. A is accepted w.p. 1/2, else resampled from p:
# P(A) = 1/2 + 1/2 * 1/2 = 3/4, so TV = 1/4
assert "TV(law, p) = 1/4" in message

# %% [markdown]
# Exact means exact. A rule that computes its residual $\max(0, p - q)$ in float64 (and normalises the
# floats exactly, `normalise=True`) is off by about $10^{-17}$; no histogram would ever see it, the
# exact check does:

# %%
def float_residual(p, q, x):
    """The standard rule, with p - q computed in float64."""
    accept = min(Fraction(1), p[x] / q[x])
    if accept == 1:
        return accept, None
    excess = {y: max(0.0, float(p[y]) - float(q[y])) for y in p}
    return accept, Law({y: Fraction(w) for y, w in excess.items()}, normalise=True)


try:
    assert_rule_lossless(float_residual)
except AssertionError as error:
    print(error)


# %% [markdown]
# And a rule that *crashes* is reported as a crash, not as a loss: the error names the instance and
# chains the original exception.

# %%
def unfinished(p, q, x):
    raise NotImplementedError("the residual step")


try:
    assert_rule_lossless(unfinished)
except SamplerError as error:
    print(type(error).__name__, "caused by", repr(error.__cause__))


# %% [markdown]
# ## 4. Audit an engine-shaped sampler end to end
# An inference engine's rejection sampler takes float arrays: `target_probs` $[\gamma+1, V]$ (row $i$ is
# $p(\cdot \mid x_{<i})$, the last row is the bonus position), `draft_probs` $[\gamma, V]$ and the
# `draft_tokens` $[\gamma]$, plus a random generator, and returns the emitted tokens. Here is one in
# numpy, Algorithm 1 of Leviathan et al.:

# %%
def my_round(target_probs, draft_probs, draft_tokens, rng):
    """Leviathan et al. Algorithm 1 for one sequence, numpy, all randomness from rng."""
    gamma = len(draft_tokens)
    out = []
    for i, x in enumerate(draft_tokens):
        p, q = target_probs[i], draft_probs[i]
        # accept x with probability min(1, p(x)/q(x)); u * q(x) < p(x) never accepts p(x) = 0, even at u = 0
        if rng.random() * q[x] < p[x]:
            out.append(int(x))
            continue
        residual = np.maximum(p - q, 0.0)  # max(0, p - q), normalised below: the residual law
        out.append(int(rng.choice(len(p), p=residual / residual.sum())))
        return out
    bonus = target_probs[gamma]  # all gamma accepted: one more token from p at position gamma
    out.append(int(rng.choice(len(bonus), p=bonus / bonus.sum())))
    return out


# %% [markdown]
# `sms.round_inputs` draws valid inputs (every draft token has $q_i(x_i) > 0$) for quick checks, for
# instance that the sampler emits between 1 and $\gamma + 1$ tokens:

# %%
@quiet
@given(sms.round_inputs(gamma=3, vocab=4))
def test_my_round_emits_one_to_gamma_plus_one_tokens(inputs):
    target_probs, draft_probs, draft_tokens = inputs
    emitted = my_round(target_probs, draft_probs, draft_tokens, np.random.default_rng(0))
    assert 1 <= len(emitted) <= len(draft_tokens) + 1


test_my_round_emits_one_to_gamma_plus_one_tokens()

# %% [markdown]
# Shape checks do not prove the law. `assert_sampler_lossless` runs the audit (`specmath.audit`): on a
# battery of 14 target/draft pairs (context-dependent laws, $p = q$, disjoint supports, zeros, top-k
# on one side, near float32 underflow, $V$ up to 1000) it draws the drafts itself, counts the emitted
# tuples, runs G-tests of the exact round law and of each position, and probes every draw with a
# uniform of exactly 0 and of the largest double below 1. Its levels are set so that a lossless
# sampler fails with probability at most $10^{-6}$; the table states, per case, the smallest TV
# distance it detects with probability 0.99. The default is $N = 20000$ rounds per case; 2000 keep
# this notebook quick.

# %%
from specmath.audit.rounds.report import table

report = assert_sampler_lossless(my_round, generator="numpy", n=2000, seed=0)
print(table(report, seconds=False))


# %% [markdown]
# Now a planted engine bug: the bonus token drawn from the row of the *last draft* instead of the
# bonus position (an off-by-one that real engines have had). In sequential mode the audit looks at
# $N/16, N/8, \dots, N$ rounds and stops at the first failure:

# %%
def bonus_off_by_one(target_probs, draft_probs, draft_tokens, rng):
    """my_round with the bonus token drawn from row gamma - 1 (the bug)."""
    gamma = len(draft_tokens)
    out = []
    for i, x in enumerate(draft_tokens):
        p, q = target_probs[i], draft_probs[i]
        if rng.random() * q[x] < p[x]:
            out.append(int(x))
            continue
        residual = np.maximum(p - q, 0.0)
        out.append(int(rng.choice(len(p), p=residual / residual.sum())))
        return out
    bonus = target_probs[gamma - 1]
    out.append(int(rng.choice(len(bonus), p=bonus / bonus.sum())))
    return out


# %%
try:
    assert_sampler_lossless(bonus_off_by_one, n=2000, sequential=True)
except AssertionError as error:
    print(error)

# %% [markdown]
# Whole engines: the audit above checks the rejection sampler given ready probabilities. The
# `specmath audit-generate ENGINE --pair PAIR` command goes one level up: it samples whole
# `generate` calls of an engine (specmath's own, Hugging Face assisted generation, prompt lookup) on a
# target/draft pair and compares the first tokens with the exact target law computed from target
# forward passes, so bugs in candidate generation, logits processors, cache cropping and positions
# show too. `specmath audit module:function` runs this notebook's audit on your own sampler from the
# shell.

# %% [markdown]
# ## Summary
# - A rule is plain Python; `step_law` gives its exact output law, and dicts of floats are exact inputs
#   (0.7 is $7/10$).
# - `specmath.strategies` draws exact law pairs, toy LMs and round inputs that reach every edge case and
#   shrink to small examples; a property test of losslessness is three lines.
# - `assert_rule_lossless` names the smallest counterexample and its exact TV (1/4 for resampling from
#   $p$; about $10^{-17}$ for a float residual, which no histogram would see); a crash is a `SamplerError`,
#   never a loss.
# - `assert_sampler_lossless` audits an engine-shaped sampler with G-tests, edge probes and stated
#   power, failing a correct sampler with probability at most $10^{-6}$.
#
# ## Exercises
# 1. Accept with $\min(1, p(x)/q(x))^2$ instead, with the standard residual. Is it lossless? Find the
#    smallest counterexample with `assert_rule_lossless` and check its TV by hand.
# 2. Property-test `my_rule` on rounds of *warped* LMs: draw the pair with `sms.toy_lm_pairs`, apply
#    `SamplingOptions(top_k=1)` to both with `specmath.speculative.toy_lm.warp`, and compare with the
#    autoregressive law of the warped target.
# 3. Change the accept test of `my_round` to `rng.random() <= p[x] / q[x]`. Is the round still lossless
#    in exact arithmetic? Which part of the audit catches it, and why does a histogram alone not?
# 4. How many rounds per case would the audit need to detect a TV of 0.01 on the `vocab-2` case?
#    (Hint: `specmath.stats.detectable_tv` and the per-test level in the table header.)
