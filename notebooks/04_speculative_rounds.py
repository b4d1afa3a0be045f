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
# # 04 · Multi-token rounds: draft γ tokens, verify them in one pass, keep the bonus
#
# **What you will learn**
# - why the target can verify γ draft tokens in *one* forward pass while it must generate one token per pass;
# - the logits alignment: the output at input position t predicts token t+1 (and what goes wrong when it is read one position late);
# - the bonus token, and what the KV cache keeps and discards after a rejection (the article's D1..D4 example);
# - that a whole round, and any number of rounds, are lossless: proved exactly, with fractions;
# - how many tokens a round emits on average, and the speedup model, including the article's 2x example.
#
# **Notation** (as in every notebook): $p$ = target law, $q$ = draft law, $\gamma$ = draft tokens per round,
# $\alpha = \sum_x \min(p(x), q(x))$ = acceptance rate. (Leviathan et al. 2023 and Hugging Face naming.)
#
# The toy world follows the seed article's sentence "I love machine learning is": a word-level bigram
# target and an over-confident bigram draft over eight words (`specmath.speculative.examples`).

# %% tags=["remove-cell"]
from collections import Counter
from fractions import Fraction

import numpy as np

from specmath import exact, sample, show, tv_distance
from specmath.plots.speculative_plots import (
    plot_expected_tokens_per_round,
    plot_round_length_law,
    plot_speedup_vs_gamma,
)
from specmath.speculative import (
    accept_block,
    acceptance_rate,
    autoregressive_law,
    draft_block,
    expected_round_tokens,
    generate_law,
    prove_round,
    residual_law,
    round_law,
    speculative_round,
    target_passes_per_token,
)
from specmath.speculative.examples import ARTICLE_DRAFT, ROUND_DRAFT, ROUND_PREFIX, ROUND_TARGET
from specmath.speculative.toy_lm import ToyLM
from specmath.stats import detectable_tv, g_test
from specmath.theory import (
    alpha_for_expected_tokens,
    article_speedup_example,
    expected_tokens_per_round,
    optimal_gamma,
    speedup,
    speedup_from_timings,
)

# %%
target, draft, prefix = ROUND_TARGET, ROUND_DRAFT, ROUND_PREFIX
for context in [prefix, prefix + ("machine",), prefix + ("machine", "learning")]:
    p, q = target(context), draft(context)
    print(" ".join(context), "->  p:", {x: str(w) for x, w in p.items() if w}, "  q:", {x: str(w) for x, w in q.items() if w})

# %% [markdown]
# ## Why generation is serial but verification is parallel
# To *generate*, the target needs token t before it can compute the law of token t+1: each token costs
# one forward pass. To *verify*, every context is already known, because the draft wrote it:
#
# | law the target needs | its context | known before the pass? |
# |---|---|---|
# | $p(\cdot \mid \text{I love})$ | the prefix | yes |
# | $p(\cdot \mid \text{I love machine})$ | prefix + D1 | yes, D1 is the draft's guess |
# | $p(\cdot \mid \text{I love machine learning})$ | prefix + D1 D2 | yes |
#
# A causal transformer fed `I love machine learning is` computes all these laws in one pass, exactly as
# it processes a prompt in prefill. **Alignment:** the output at input position t is the law of token t+1.
# So D1 is checked against the output at the *last prefix position* ("love"), D2 against the output at
# D1, and so on; the output at the last draft token gives the law of the bonus token.

# %%
sequence = prefix + ARTICLE_DRAFT
rows = []
for t in range(len(prefix) - 1, len(sequence)):
    law = target(sequence[: t + 1])  # output at input position t: the law of token t + 1
    checks = sequence[t + 1] if t + 1 < len(sequence) else "(bonus token)"
    rows.append((t, sequence[t], checks, law.prob(checks) if t + 1 < len(sequence) else "-"))
for t, word, checks, prob in rows:
    print(f"input position {t} ({word:>8}) -> law of the next token, used for {checks:<14} p = {prob}")

# %%
# the output at the last prefix position verifies D1 = "machine": p(machine | I love) = 1/2
assert rows[0][2] == "machine" and rows[0][3] == Fraction(1, 2)
# and the output at D4 gives the bonus law, one more token than the draft proposed
assert len(rows) == len(ARTICLE_DRAFT) + 1

# %% [markdown]
# ### What goes wrong if the logits are read one position late
# A round is a sampling program made of two blocks, `draft_block` and `accept_block`, so we can swap in a
# misaligned verifier: it checks $x_i$ against $p(\cdot \mid \text{prefix}\; x_1..x_i)$ (the law of the
# token *after* $x_i$). Its first emitted token no longer follows $p(\cdot \mid \text{I love})$:

# %%
def late_logits_round(target, draft, prefix, gamma):
    """A buggy round: the law used for draft position i is the one that predicts position i + 1."""
    tokens, q_laws = yield from draft_block(draft, prefix, gamma)

    def one_position_late(context):
        i = len(context) - len(prefix)
        return target(context + tokens[i : i + 1])

    late = ToyLM(one_position_late, target.vocabulary, name="target read one position late")
    return (yield from accept_block(late, prefix, tokens, q_laws))


first_token_bug = exact(late_logits_round, target, draft, prefix, 2).law.map(lambda e: e[0])
first_token_ok = exact(speculative_round, target, draft, prefix, 2).law.map(lambda e: e[0])
print("first token, aligned:   ", {x: str(w) for x, w in first_token_ok.items()})
print("first token, one late:  ", {x: str(w) for x, w in first_token_bug.items()})
print("TV from p(. | I love):  ", tv_distance(first_token_bug, target(prefix)))

# %%
assert first_token_ok == target(prefix)
assert tv_distance(first_token_bug, target(prefix)) > 0

# %% [markdown]
# ## One round, exactly
# `round_law` gives the exact law of the tuple one round emits (1 to γ+1 tokens). The sampling program
# `speculative_round` is the reference: the exact interpreter walks all its branches and must agree.
# Read the program first. A round is two blocks: the draft proposes γ tokens, then the target accepts a prefix
# of them and emits one more token (a residual draw after a rejection, or the bonus token):

# %%
show(speculative_round)

# %%
show(draft_block)

# %%
show(accept_block)

# %%
gamma = 4
law = round_law(target, draft, prefix, gamma)
for emitted, w in sorted(law.items(), key=lambda item: -item[1]):
    print(f"{w!s:>8}  {' '.join(emitted)}")

# %%
program = exact(speculative_round, target, draft, prefix, gamma)
assert program.law == law  # one program, two meanings
assert program.expected_cost("target") == 1 and program.expected_cost("draft") == gamma
print("expected requests per round:", {k: str(v) for k, v in program.expected_costs.items()})

# %% [markdown]
# ## The bonus token
# If all γ drafts are accepted, the verification pass has already produced the law after the last draft
# token, so one more token comes for free: a round emits at most γ+1 tokens. Here all four drafts survive
# with probability $P(\text{D1..D4 accepted})$, after which the bonus is drawn from $p$:

# %%
all_accepted = law.P(lambda e: len(e) == gamma + 1)
print("P(all", gamma, "accepted, bonus drawn) =", all_accepted)
assert all_accepted == program.expected_cost("bonus")  # one bonus draw exactly when all are accepted

# %% [markdown]
# ## The article's D1..D4: accept D1, D2, reject D3
# Fix the draft to D1..D4 = machine, learning, is, fun and run only `accept_block`. The target keeps
# "machine" (q = 2/3 > p = 1/2: kept with probability 3/4), keeps "learning" (q = 1 > p = 4/5: 4/5) and
# rejects "is" with probability $1 - p/q = 1 - 3/4 = 1/4$, replacing it from the residual
# norm(max(0, p - q)):

# %%
q_laws = tuple(draft(prefix + ARTICLE_DRAFT[:i]) for i in range(4))
given_draft = exact(accept_block, target, prefix, ARTICLE_DRAFT, q_laws).law
for emitted, w in given_draft.items():
    print(f"{w!s:>7}  {' '.join(emitted)}")
residual_at_d3 = residual_law(target(prefix + ARTICLE_DRAFT[:2]), draft(prefix + ARTICLE_DRAFT[:2]))
print("residual at D3:", {x: str(w) for x, w in residual_at_d3.items() if w})

# %%
accept_d1, accept_d2, reject_d3 = Fraction(3, 4), Fraction(4, 5), Fraction(1, 4)
d1_d2_then_reject = given_draft.P(lambda e: len(e) == 3)
assert d1_d2_then_reject == accept_d1 * accept_d2 * reject_d3 == Fraction(3, 20)
assert residual_at_d3.support == {".", "fun"}

# %% [markdown]
# **The KV cache after this rejection.** The verification pass wrote target keys/values for every input
# position. What survives:
#
# | position | token | target KV after the round |
# |---|---|---|
# | prefix | I love | kept (already there) |
# | D1 | machine | kept: accepted |
# | D2 | learning | kept: accepted |
# | D3 | is | **discarded**: rejected |
# | D4 | fun | **discarded**: after a rejection, never even checked |
# | replacement | "." or "fun" (residual) | not computed yet: the next round's pass computes it |
#
# Rolling back is just "forget positions ≥ D3" (with a static cache indexed by position, the next pass
# writes over them; with PagedAttention, the block table is updated). The draft model's cache rolls
# back the same way. Whatever happened, the round emitted at least one token, but the target's work on
# D3 and D4 was wasted.

# %%
kept = prefix + tuple(e for e in ARTICLE_DRAFT[:2])
next_round_prefixes = {prefix + emitted for emitted in given_draft.support if len(emitted) == 3}
print("KV kept:", " ".join(kept))
print("next round starts from:", sorted(" ".join(c) for c in next_round_prefixes))
assert all(c[: len(kept)] == kept for c in next_round_prefixes)

# %% [markdown]
# ## Lossless: one round, and any number of rounds
# The emitted tuple of one round, continued by plain target sampling to γ+1 tokens, has the law of γ+1
# tokens sampled from the target. `prove_round` checks this position by position (at every node of the
# draft tree, the next emitted token has law $p(\cdot \mid \text{context})$), and `generate_law`
# composes rounds until `length` tokens exist, truncating the last round:

# %%
for g in range(1, 6):
    proof = prove_round(target, draft, prefix, g)
    assert proof.lossless, proof
    assert generate_law(target, draft, prefix, g, 6) == autoregressive_law(target, prefix, 6)
print("gamma 1..5: one round and 6-token generation equal the autoregressive law exactly")

# %% [markdown]
# ## Acceptance and tokens per round
# With a constant $\alpha$ a round emits $\sum_{k=0}^{\gamma}\alpha^k = (1-\alpha^{\gamma+1})/(1-\alpha)$
# tokens on average. Here $\alpha$ changes along the draft (5/6 after "love", 4/5 after "machine",
# 3/4 after "learning"), and only the exact law is right:

# %%
alphas = [acceptance_rate(target(prefix + ARTICLE_DRAFT[:i]), draft(prefix + ARTICLE_DRAFT[:i])) for i in range(3)]
exact_tokens = expected_round_tokens(target, draft, prefix, gamma)
naive_tokens = expected_tokens_per_round(alphas[0], gamma)
print("alpha along the draft:", [str(a) for a in alphas])
print(f"E[tokens per round] exact = {exact_tokens} ~ {float(exact_tokens):.4f};"
      f" constant alpha = {alphas[0]} would say {naive_tokens} ~ {float(naive_tokens):.4f}")
passes = target_passes_per_token(target, draft, prefix, gamma, 6)
print(f"target passes per token for 6 tokens: {passes} ~ {float(passes):.4f} (plain decoding: 1)")
assert alphas == [Fraction(5, 6), Fraction(4, 5), Fraction(3, 4)]
assert exact_tokens == law.expectation(len) == Fraction(3019, 900)

# %%
fig = plot_round_length_law()

# %%
fig = plot_expected_tokens_per_round()

# %% [markdown]
# ### The same program, sampled
# Sampling the round program with a seeded generator gives round lengths that a G-test cannot tell from
# the exact law; `detectable_tv` states the test's power.

# %%
rng = np.random.default_rng(4)
n = 4000
lengths = Counter(len(sample(speculative_round, target, draft, prefix, gamma, rng=rng)) for _ in range(n))
length_law = law.map(len)
result = g_test(lengths, length_law)
print(dict(sorted(lengths.items())), result)
print(f"this test detects any deviation of TV >= {detectable_tv(length_law, n):.3f} with probability 0.99 at level 1e-6")
assert result.p_value > 1e-6

# %% [markdown]
# ## Speedup
# A round costs γ draft passes and one target pass. If a draft pass costs $c$ target passes, the
# walltime improvement over plain decoding is (Leviathan et al., Theorem 3.8)
# $$\text{speedup} = \frac{1-\alpha^{\gamma+1}}{(1-\alpha)(\gamma c + 1)}.$$
# Too small a γ wastes the draft's accuracy, too large a γ pays for drafts that will be discarded:

# %%
fig = plot_speedup_vs_gamma()

# %%
for alpha in (Fraction(6, 10), Fraction(8, 10)):
    for c in (Fraction(1, 20), Fraction(1, 5)):
        best = optimal_gamma(alpha, c)
        print(f"alpha = {alpha}, c = {c}: best gamma = {best}, speedup = {float(speedup(alpha, best, c)):.3f}")
assert optimal_gamma(Fraction(8, 10), Fraction(1, 20)) == 8

# %% [markdown]
# ### The article's worked example
# Plain decoding: 10 ms per token. Speculative: the draft proposes 4 tokens in 3 ms in all, one
# verification pass over 4 positions takes 12 ms, and a round yields 3 tokens on average (bonus included).
# Speedup = 3 × 10 / (3 + 12) = 2:

# %%
assert article_speedup_example() == 2
print("article:", article_speedup_example())

# %% [markdown]
# Two checks the article does not make. First, 3 tokens per round with γ = 4 needs $\alpha \approx 0.741$
# under the constant-α model. Second, the Leviathan model charges a verification as *one* target pass
# (10 ms); with $c = (3/4)/10 = 3/40$ it predicts 3 / (4 · 3/40 + 1) = 30/13 ≈ 2.31. The article's 2x
# is the same formula with the verification's real cost, 12 ms = 1.2 target passes.

# %%
alpha_3 = alpha_for_expected_tokens(3, 4)
model = speedup_from_timings(3, 10, 3, 10)  # verification priced as one 10 ms target pass
print(f"alpha for 3 tokens per round at gamma = 4: {alpha_3:.4f}")
print(f"model speedup with a 10 ms verification: {model} ~ {float(model):.3f}")
assert model == Fraction(30, 13)
assert abs(float(speedup(alpha_3, 4, Fraction(3, 40))) - 30 / 13) < 1e-9

# %% [markdown]
# **Explorer:** [08 · 3. A speculative round](08_explorers.ipynb#3.-A-speculative-round): slide $\alpha$, $\gamma$ and $c$ and watch the tokens per round, the speedup and the best $\gamma$.

# %% [markdown]
# ## Summary
# - Verification is parallel because the draft supplies every context: one target pass returns the
#   laws of all γ+1 next tokens. The output at input position t is the law of token t+1; reading it one
#   position late changes the output law (exact TV above).
# - A round accepts draft tokens in order, replaces the first rejected one from norm(max(0, p − q)) and
#   stops, or adds a bonus token from $p$ when all γ are accepted: 1 to γ+1 tokens per target pass.
# - After a rejection the KV cache keeps the prefix and the accepted drafts and discards the rest; the
#   replacement's KV is computed by the next pass.
# - One round and many rounds are lossless, proved with exact fractions for γ = 1..5 (tests: random toy LMs).
# - Tokens per round follow $(1-\alpha^{\gamma+1})/(1-\alpha)$ only when α is constant; the exact round law
#   handles context-dependent α. The article's 2x example is exactly 2.
#
# ## Exercises
# 1. Change `DRAFT_TABLE` in `specmath/speculative/examples.py` so the draft says "learning" after
#    "love" with probability 1. How do α after "love" and `expected_round_tokens` change? Is the round still lossless?
# 2. Rewrite `late_logits_round` to read the logits one position *early* (use $p(\cdot \mid \text{prefix}\;x_1..x_{i-2})$).
#    Which token's law is wrong now, and by how much (exact TV)?
# 3. Prove with `generate_law` that generation stays lossless when γ changes from round to round
#    (hint: a program that picks γ from the context length).
# 4. For α = 0.7, find the cost ratio c above which speculating (γ ≥ 1) no longer pays (`optimal_gamma` returns 0).
# 5. The article assumes 3 tokens per round. What is the largest speedup its timings allow with γ = 4,
#    and what α would it need?
