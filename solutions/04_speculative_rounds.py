# %% [markdown]
# # Solutions · 04 Multi-token rounds
# Notation: $p$ = target law, $q$ = draft law, $\gamma$ = draft tokens per round, $\alpha = \sum_x \min(p(x), q(x))$,
# $c$ = draft pass cost / target pass cost.

# %%
from fractions import Fraction

from specmath import exact, tv_distance
from specmath.speculative import accept_block, autoregressive_law, draft_block, generate_law, speculative_round
from specmath.speculative.costs import expected_round_tokens, position_acceptance_rate
from specmath.speculative.examples import DRAFT_TABLE, ROUND_DRAFT, ROUND_PREFIX, ROUND_TARGET, bigram_lm
from specmath.speculative.toy_lm import ToyLM
from specmath.theory import alpha_for_expected_tokens, optimal_gamma, speedup, speedup_from_timings

target, draft, prefix = ROUND_TARGET, ROUND_DRAFT, ROUND_PREFIX

# %% [markdown]
# ## 1. A draft that always says "learning" after "love"
# $\alpha$ after "love" drops from $\min(3/6, 2/3) + \min(2/6, 1/3) = 5/6$ to $p(\text{learning} \mid \text{love}) = 1/6$, and
# the round emits fewer tokens on average. It stays lossless: losslessness holds for *every* draft.

# %%
stubborn = bigram_lm({**DRAFT_TABLE, "love": {"learning": 1}}, "stubborn draft")
assert position_acceptance_rate(target, draft, prefix) == Fraction(5, 6)
assert position_acceptance_rate(target, stubborn, prefix) == Fraction(1, 6)
before, after = expected_round_tokens(target, draft, prefix, 3), expected_round_tokens(target, stubborn, prefix, 3)
print(f"E[tokens per round], gamma = 3: {before} ≈ {float(before):.3f} -> {after} ≈ {float(after):.3f}")
assert after < before
assert generate_law(target, stubborn, prefix, 3, 4) == autoregressive_law(target, prefix, 4)

# %% [markdown]
# ## 2. Logits read one position early
# Position $i$ is checked against $p(\cdot \mid \text{prefix}\, x_1..x_{i-2})$: the first draft token is verified with
# $p(\cdot \mid \text{I})$ instead of $p(\cdot \mid \text{I love})$, so the very first emitted token is already wrong.

# %%
def early_logits_round(target, draft, prefix, gamma):
    tokens, q_laws = yield from draft_block(draft, prefix, gamma)
    early = ToyLM(lambda context: target(context[:-1]), target.vocabulary, name="target read one position early")
    return (yield from accept_block(early, prefix, tokens, q_laws))


first = exact(early_logits_round, target, draft, prefix, 2).law.map(lambda e: e[0])
tv = tv_distance(first, target(prefix))
print("first token:", {x: str(w) for x, w in first.items()}, " TV from p(. | I love) =", tv)
assert tv > 0

# %% [markdown]
# ## 3. gamma that changes from round to round
# Any rule for choosing $\gamma$ from what is already known keeps every round lossless, so the whole generation is too.

# %%
def variable_gamma_generation(target, draft, prefix, length):
    generated = ()
    while len(generated) < length:
        gamma = 1 + len(prefix + generated) % 3  # 1, 2 or 3 depending on the context length
        generated += yield from speculative_round(target, draft, prefix + generated, gamma)
    return generated[:length]


assert exact(variable_gamma_generation, target, draft, prefix, 4).law == autoregressive_law(target, prefix, 4)

# %% [markdown]
# ## 4. When does speculating stop paying at alpha = 0.7?
# Speculating pays iff some $\gamma \ge 1$ has $\alpha + \alpha^2 + \dots + \alpha^\gamma > \gamma c$; the average of
# $\alpha^k$ is largest at $\gamma = 1$, so the condition is $c < \alpha$: the threshold is $c = 0.7$.

# %%
alpha = Fraction(7, 10)
assert optimal_gamma(alpha, alpha - Fraction(1, 1000)) >= 1
assert optimal_gamma(alpha, alpha) == 0 and speedup(alpha, 1, alpha) == 1  # a tie: no gain

# %% [markdown]
# ## 5. The article's timings with gamma = 4
# A round costs 3 + 12 ms; at most $\gamma + 1 = 5$ tokens come out, so the speedup is at most $5 \cdot 10 / 15 = 10/3$,
# reached only at $\alpha = 1$. The article's 3 tokens per round need $\alpha \approx 0.741$.

# %%
assert speedup_from_timings(5, 10, 3, 12) == Fraction(10, 3)
assert speedup_from_timings(3, 10, 3, 12) == 2
a3 = alpha_for_expected_tokens(3, 4)
print(f"alpha for 3 tokens per round at gamma = 4: {a3:.4f}")
assert abs(a3 - 0.7411) < 1e-3
