# %% [markdown]
# # Solutions · 00 The course

# %%
from specmath.course.plan import COURSE, GLOSSARY

# %% [markdown]
# ## 1. What to read before 05
# Follow the "read first" column back: 05 needs 04, which needs 01, which needs 00.

# %%
needs = {lesson.stem: lesson.prerequisites for lesson in COURSE}


def before(stem: str) -> list[str]:
    out = []
    for first in needs[stem]:
        out += [s for s in before(first) + [first] if s not in out]
    return out


assert before("05_beyond_the_article") == ["00_index", "01_two_token_world", "04_speculative_rounds"]

# %% [markdown]
# ## 2. The residual distribution
# The article defines the 修正分布 (Residual Distribution) as $\text{norm}(\max(0, p(x) - q(x)))$: notebook 01's
# `residual_law`, and the mass it normalises by is $1 - \alpha$.

# %%
assert any(zh.startswith("修正分布") for _, zh, _ in GLOSSARY)

# %% [markdown]
# ## 3. Where the two tracks meet
# 07 (speculative track) needs 04, 01 and 00: nothing from the exact-sampling track, so its student reads 01 and 04
# first. The other way, `knuth_yao` (notebook 06, exact-sampling track) samples the speculative step's residual
# law $\text{norm}(\max(0, p - q))$ from a fair die, exactly.

# %%
from fractions import Fraction  # noqa: E402

from specmath import exact  # noqa: E402
from specmath.course.plan import TRACKS  # noqa: E402
from specmath.entropy.knuth_yao import knuth_yao  # noqa: E402
from specmath.laws import Law  # noqa: E402
from specmath.speculative import residual_law  # noqa: E402

beyond_own = [stem for stem in before("07_real_models") if stem not in TRACKS["exact sampling"] and stem != "00_index"]
assert beyond_own == ["01_two_token_world", "04_speculative_rounds"]
p = Law({"a": Fraction(1, 2), "b": Fraction(1, 3), "c": Fraction(1, 6)})
q = Law({"a": Fraction(1, 6), "b": Fraction(1, 6), "c": Fraction(2, 3)})
residual = residual_law(p, q)  # max(0, p - q) = {a: 1/3, b: 1/6, c: 0}, normalised by 1/2
assert exact(knuth_yao, residual, 5).law == residual == Law({"a": Fraction(2, 3), "b": Fraction(1, 3), "c": 0})
print("before 07, from the speculative track:", beyond_own)
