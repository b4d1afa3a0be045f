# %% [markdown]
# # Solutions · 01 The two-token world
# Notation: $p$ = target law, $q$ = draft law, $\alpha = \sum_x \min(p(x), q(x))$.
# Run from anywhere: `python solutions/01_two_token_world.py` (or open it in Jupyter with jupytext).

# %%
from fractions import Fraction

import pytest

from specmath import Law, exact, tv_distance
from specmath.laws import LawError
from specmath.speculative import acceptance_rate, residual_law, speculative_step
from specmath.speculative.two_token import TARGET, acceptance_by_token, two_token_world
from specmath.stats import detectable_tv

# %% [markdown]
# ## 1. q = {A: 0.7, B: 0.3}
# Then $q = p$: every token is accepted with $\min(1, p/q) = 1$, and $\max(0, p - q) = 0$ everywhere, so the
# residual does not exist and `residual_law` raises. The sampler only builds the residual when a rejection
# has positive probability, which here it never has; the output law is still $p$.

# %%
q = Law({"A": "7/10", "B": "3/10"})
assert acceptance_by_token(TARGET, q) == {"A": 1, "B": 1}
with pytest.raises(LawError, match="zero everywhere"):
    residual_law(TARGET, q)
assert exact(two_token_world, TARGET, q).law == TARGET

# %% [markdown]
# ## 2. Three tokens with alpha = 1/2
# Put half of $q$'s mass where $p$ has none: $\alpha = 0 + 1/2 + 0$.

# %%
p3 = Law({"a": "1/2", "b": "1/2", "c": 0})
q3 = Law({"a": 0, "b": "1/2", "c": "1/2"})
assert acceptance_rate(p3, q3) == Fraction(1, 2)
assert acceptance_rate(p3, q3) == 1 - tv_distance(p3, q3)  # alpha = 1 - TV(p, q) always

# %% [markdown]
# ## 3. Resample from p instead of the residual
# The output law is $\min(p, q) + (1 - \alpha)\,p$, not $p$: here $\{A: 0.4 + 0.3 \cdot 0.7, B: 0.3 + 0.3 \cdot 0.3\}
# = \{A: 0.61, B: 0.39\}$, at TV distance $0.09$ from $p$.

# %%
def resample_from_target(p, q, x):
    return min(Fraction(1), p[x] / q[x]), p


wrong = exact(speculative_step, TARGET, Law({"A": "2/5", "B": "3/5"}), resample_from_target).law
assert wrong == Law({"A": Fraction(61, 100), "B": Fraction(39, 100)})
assert tv_distance(wrong, TARGET) == Fraction(9, 100)
print("law:", dict(wrong), "TV:", tv_distance(wrong, TARGET))

# %% [markdown]
# ## 4. Samples needed to detect TV 0.01
# `detectable_tv` falls like $1/\sqrt{n}$; bisect for the smallest $n$ at which it reaches 0.01.

# %%
lo, hi = 1_000, 10_000_000
while hi - lo > 1:
    mid = (lo + hi) // 2
    lo, hi = (lo, mid) if detectable_tv(TARGET, mid) <= 0.01 else (mid, hi)
n_needed = hi
assert detectable_tv(TARGET, n_needed) <= 0.01 < detectable_tv(TARGET, n_needed - 1)
print(f"n = {n_needed:,} samples detect any deviation of TV >= 0.01 with probability 0.99 at level 1e-6")

# %% [markdown]
# ## 5. Edit the program: accept with min(1, p/q) squared
# A copy of `speculative_step` with one line changed. A is still always accepted ($1^2 = 1$); B is accepted
# with $(1/2)^2 = 1/4$ instead of $1/2$, and every rejected B is resampled as A (the residual is $\{A: 1\}$):
# $P(A) = 0.4 + 0.6 \cdot 3/4 = 0.85$, $P(B) = 0.6 \cdot 1/4 = 0.15$, at TV $0.15$ from $p$.

# %%
from specmath import coin, draw  # noqa: E402  (the requests a program yields)
from specmath.speculative.step import standard_rule  # noqa: E402


def my_step(p, q, rule=standard_rule):
    x = yield draw(q, label="draft")
    accept_probability, resample = rule(p, q, x)
    accepted = yield coin(accept_probability**2, label="accept")  # the edit: squared
    if accepted:
        return x
    if resample is None:
        raise LawError(f"the rule rejected token {x!r} but gave no law to resample from")
    y = yield draw(resample, label="resample")
    return y


DRAFT = Law({"A": "2/5", "B": "3/5"})
squared = exact(my_step, TARGET, DRAFT).law
assert squared == Law({"A": Fraction(17, 20), "B": Fraction(3, 20)}) and tv_distance(squared, TARGET) == Fraction(3, 20)


# undo the edit: the copy is the library's program again, and lossless
def my_step_undone(p, q, rule=standard_rule):
    x = yield draw(q, label="draft")
    accept_probability, resample = rule(p, q, x)
    accepted = yield coin(accept_probability, label="accept")
    if accepted:
        return x
    y = yield draw(resample, label="resample")
    return y


assert exact(my_step_undone, TARGET, DRAFT).law == TARGET == exact(speculative_step, TARGET, DRAFT).law
print("squared acceptance:", {x: str(w) for x, w in squared.items()}, " undone: lossless")
