# %% [markdown]
# # Solutions · 07 Real models
# Notation: $p$ = target law, $q$ = draft law, $\gamma$ = draft tokens per round, $\alpha = \sum_x \min(p(x), q(x))$,
# $c$ = draft forward cost / target forward cost. The bundled character-level pair, no download.

# %%
import json
from fractions import Fraction

from specmath.laws import Law, tv_distance
from specmath.lm.bench import bench_pair
from specmath.lm.bundled import bundled_dir
from specmath.lm.histogram import first_token_law
from specmath.lm.pairs import load_named_pair
from specmath.lm.speculative_decode import speculative_generate
from specmath.sampling_options import SamplingOptions
from specmath.speculative import acceptance_rate, step_law
from specmath.stats import detectable_tv
from specmath.theory import optimal_gamma, speedup

pair = load_named_pair("bundled")
target, draft_model, tok = pair.target, pair.draft.model, pair.tokenizer
prompt = tok("It was the best of times, ", add_special_tokens=False)["input_ids"]


def laws(sampling: SamplingOptions) -> tuple[Law, Law]:
    """p and q after the prompt as exact laws over the union of their supports."""
    p, q = first_token_law(target, prompt, sampling), first_token_law(draft_model, prompt, sampling)
    vocab = set(p) | set(q)
    return Law({x: p.prob(x) for x in vocab}), Law({x: q.prob(x) for x in vocab})


p1, q1 = laws(SamplingOptions(top_k=20))

# %% [markdown]
# ## 1. N for a detectable TV of 0.01, and the scaling
# The G-test's power depends on $N \cdot \text{TV}^2$, so the detectable TV falls like $1/\sqrt{N}$: four times the
# samples halve it.

# %%
n = 1000
while detectable_tv(p1, n) > 0.01:
    n *= 2
print(f"N = {n:,} samples: detectable TV {detectable_tv(p1, n):.4f}")
ratio = detectable_tv(p1, 4 * n) / detectable_tv(p1, n)
assert 0.45 < ratio < 0.55, ratio

# %% [markdown]
# ## 2. The "resample from p" control: exact TV, and the N that catches it
# Its output law is $\min(p, q) + (1 - \alpha)\,p$ instead of $p$; its TV from $p$ is computed exactly below, and it is
# below $1 - \alpha$. The test rejects it (with probability 0.99) once `detectable_tv` falls below that TV.

# %%
def resample_from_target(p, q, x):
    return min(Fraction(1), p[x] / q[x]), p


lossy = step_law(p1, q1, resample_from_target)
tv = tv_distance(lossy, p1)
alpha = acceptance_rate(p1, q1)
assert lossy == Law({x: min(p1[x], q1[x]) + (1 - alpha) * p1[x] for x in p1})
n_catch = 100
while detectable_tv(p1, n_catch) > tv:
    n_catch = int(n_catch * 1.25) + 1
print(f"alpha = {float(alpha):.4f}; TV of the control = {float(tv):.5f}; caught w.p. 0.99 from N ~ {n_catch:,}")
assert 0 < tv < 1 - alpha

# %% [markdown]
# ## 3. Temperature 0.5 on both sides: alpha and the speedup
# Sharpening both laws moves mass to each model's favourites: alpha rises where the models agree on the top tokens
# and falls where they disagree. At $T \to 0$ alpha is 1 or 0: do the argmaxes agree? The speedup follows alpha
# through the model $(1 - \alpha^{\gamma+1}) / ((1 - \alpha)(\gamma c + 1))$: the cost ratio $c$ does not depend on
# the temperature (a forward pass costs the same), so a higher alpha means more tokens per round at the same cost.
# One context is one sample of alpha: the decoder's mean alpha over many contexts is what sets the real speedup.

# %%
c_measured = json.loads((bundled_dir() / "metrics.json").read_text())["metrics"]["c"]
by_temperature = {}
for temperature in (1.0, 0.5, 0.0):
    p, q = laws(SamplingOptions(temperature=temperature, top_k=20))
    a = acceptance_rate(p, q)
    assert a == 1 - tv_distance(p, q)
    by_temperature[temperature] = (float(a), speedup(float(a), 4, c_measured))
    print(f"T = {temperature}: alpha = {float(a):.4f}, predicted speedup at gamma 4: {by_temperature[temperature][1]:.3f}")
p0, q0 = laws(SamplingOptions(temperature=0))
assert acceptance_rate(p0, q0) == (1 if max(p0, key=p0.get) == max(q0, key=q0.get) else 0)
# the model is increasing in alpha at fixed gamma and c: the ordering of speedups is the ordering of alphas
ranked = sorted(by_temperature, key=lambda t: by_temperature[t][0])
assert [by_temperature[t][1] for t in ranked] == sorted(by_temperature[t][1] for t in ranked)

# %% [markdown]
# ## 4. The best gamma for the measured alpha and c, then measured
# `metrics.json` holds the pair's measured cost ratio $c$ and its held-out $\alpha$; the speedup model picks $\gamma$.
# Then run the decoder at that $\gamma$ and at $\gamma = 1$: the tokens per round are seeded (the same on every run
# of this machine), the wall-clock speedup is a timing on a shared CPU (noisy: printed, compared only loosely).

# %%
metrics = json.loads((bundled_dir() / "metrics.json").read_text())["metrics"]
a_held, c = metrics["alpha_held_out"], metrics["c"]
best = optimal_gamma(a_held, c)
print(f"alpha = {a_held:.3f}, c = {c:.3f}: best gamma = {best}, predicted speedup {speedup(a_held, best, c):.3f}")
assert all(speedup(a_held, best, c) >= speedup(a_held, g, c) for g in range(0, 16))

measured = {g: speculative_generate(target, pair.draft, pair.prompts, 24, gamma=g, seed=0) for g in (1, best)}
for g, run in measured.items():
    print(f"gamma = {g}: {run.tokens_per_round:.2f} tokens per round (model {(1 - a_held ** (g + 1)) / (1 - a_held):.2f})")
# a round emits at least one and at most gamma + 1 tokens; longer rounds emit more per round on average
assert 1 <= measured[1].tokens_per_round <= 2 and measured[best].tokens_per_round > measured[1].tokens_per_round
timed = bench_pair(pair, prompts=pair.prompts[:1], max_new_tokens=24, gamma=best, hf=False, progress=False)
print(f"measured speedup at gamma {best}: {timed.measured_speedup_vs_plain:.2f}x (predicted {timed.predicted_speedup:.2f}x)")
assert timed.measured_speedup_vs_plain > 0  # a timing: its value depends on the machine, so only its sign is checked
