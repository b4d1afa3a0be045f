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
# ## 3. Vertical sub-slides
# A slide continues downwards when a section holds more than about 26 lines (a figure counts 16): the
# structure comes from `specmath.course.slides.slide_types`.

# %%
from pathlib import Path  # noqa: E402

import nbformat  # noqa: E402

from specmath.course.slides import slide_types  # noqa: E402

try:
    root = Path(__file__).resolve().parents[1]  # run as a script
except NameError:
    root = Path.cwd().parent  # run in Jupyter from solutions/
path = root / "notebooks" / "01_two_token_world.ipynb"
kinds = slide_types(nbformat.read(path, as_version=4))
print(f"{kinds.count('slide')} slides, {kinds.count('subslide')} vertical sub-slides")
assert kinds.count("slide") >= 5
