"""The course plan: the notebooks in order, what each needs first, and a glossary English / Chinese.

The learning goals are not copied here: ``learning_goals`` reads them from each notebook's
"What you will learn" list, so the index (notebooks/00_index) always shows what the notebooks say.
The glossary uses the seed article's own Chinese terms where it has one (its English terms in
brackets are kept as the article writes them, e.g. "大模型 (Target Model)").
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Lesson", "COURSE", "TRACKS", "EXPLORERS", "GLOSSARY", "learning_goals", "lesson_title", "course_table", "track_of"]


@dataclass(frozen=True)
class Lesson:
    """One notebook of the course."""

    stem: str  # notebooks/<stem>.ipynb
    purpose: str  # one line: the question the notebook answers
    prerequisites: tuple  # stems to read first
    minutes: int  # time to work through it in class


COURSE = (
    Lesson("00_index", "where to start: the order, the prerequisites, the glossary", (), 5),
    Lesson("01_two_token_world", "why one accept/reject/resample step outputs exactly p", ("00_index",), 30),
    Lesson("02_rand5_to_rand7", "how rejection makes rand7 from rand5, and what recycling saves", ("00_index",), 30),
    Lesson("03_coin_reservoir_rejection", "the article's other samplers: von Neumann's coin, reservoirs, rejection", ("02_rand5_to_rand7",), 30),
    Lesson("04_speculative_rounds", "gamma-token rounds, the bonus token, the KV cache, tokens per round and speedup", ("01_two_token_world",), 45),
    Lesson("05_beyond_the_article", "warps, greedy, block verification, multi-draft, and lossy variants with their sources", ("04_speculative_rounds",), 45),
    Lesson("06_entropy_limit", "how close rand7 and coin extractors get to the entropy limit", ("02_rand5_to_rand7", "03_coin_reservoir_rejection"), 40),
    Lesson("07_real_models", "speculative decoding of real language models in torch: histograms and timing", ("04_speculative_rounds",), 45),
    Lesson("08_explorers", "sliders for the two-token world, rand_a -> rand_b, a round, a real-model step", ("01_two_token_world", "02_rand5_to_rand7", "04_speculative_rounds"), 20),
    Lesson("09_test_your_sampler", "property-test your own rule or sampler: strategies, smallest counterexamples, an end-to-end audit", ("01_two_token_world", "04_speculative_rounds"), 40),
    Lesson("10_trees", "token trees: SpecInfer, top-k trees (EAGLE-2, SGLang, TensorRT-LLM), typical acceptance (Medusa), exactly", ("04_speculative_rounds", "05_beyond_the_article"), 45),
)

#: the two paths through the course, each in its own order (00 opens both; a notebook on no path serves both)
TRACKS = {
    "speculative decoding": ("01_two_token_world", "04_speculative_rounds", "05_beyond_the_article", "07_real_models", "10_trees"),
    "exact sampling": ("02_rand5_to_rand7", "03_coin_reservoir_rejection", "06_entropy_limit"),
}

#: the explorers of notebooks/08_explorers: section heading -> the chapter it belongs to (which links to it)
EXPLORERS = {
    "1. The two-token world": "01_two_token_world",
    "2. rand_a to rand_b": "02_rand5_to_rand7",
    "3. A speculative round": "04_speculative_rounds",
    "4. One round of a real model pair": "07_real_models",
}


def track_of(stem: str) -> str | None:
    """The track a notebook belongs to, or None for one that serves both (the index, the explorers)."""
    return next((name for name, stems in TRACKS.items() if stem in stems), None)


#: (English, Chinese as the seed article writes it, what it means here)
GLOSSARY = (
    ("speculative decoding", "投机解码 (Speculative Decoding)", "draft several tokens cheaply, verify them with the target in one pass"),
    ("target model, target law p", "大模型 (Target Model); 目标分布", "the model whose output law must be kept exactly; p(x)"),
    ("draft model, draft law q", "小模型 (Draft Model)", "the cheap model that proposes tokens; q(x)"),
    ("draft tokens, gamma per round", "候选 token", "the gamma tokens the draft proposes before one verification"),
    ("verification", "验证", "the target's one forward pass that scores every draft token in parallel (并行)"),
    ("acceptance, acceptance rate alpha", "接受, 接受率", "keep x with min(1, p(x)/q(x)); alpha = sum_x min(p(x), q(x))"),
    ("rejection", "拒绝", "the draft token is dropped, and with it every later draft token of the round"),
    ("residual distribution", "修正分布 (Residual Distribution), 残差分布", "norm(max(0, p - q)): where a rejected round resamples from"),
    ("bonus token", "Bonus Token (额外的 token)", "when all gamma drafts are accepted, one more token ~ p for free"),
    ("KV cache", "KV Cache", "the stored keys/values of past positions; rejected positions are dropped"),
    ("autoregressive", "自回归", "one token at a time, each conditioned on the ones before"),
    ("proposal distribution", "提议分布", "the law a rejection sampler draws candidates from (q, or uniform on 1..25 for rand7)"),
    ("rejection sampling", "拒绝采样 (Rejection Sampling)", "draw from q, accept with a probability, else try again"),
    ("reservoir sampling", "蓄水池采样 (Reservoir Sampling)", "keep a uniform sample of k items from a stream of unknown length"),
    ("uniform distribution", "均匀分布", "every outcome equally likely, e.g. rand7 on 1..7"),
    ("von Neumann's fair coin", "冯·诺依曼 (用不均匀硬币做公平决断)", "flip twice: HT -> heads, TH -> tails, else flip again"),
    ("probability distribution (law)", "概率分布", "a law: outcome -> probability, exact fractions in specmath"),
)


def lesson_title(path: str | Path) -> str | None:
    """The first '# ' heading of a notebook, or None if the file does not exist."""
    path = Path(path)
    if not path.exists():
        return None
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "markdown":
            for line in "".join(cell["source"]).splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return path.stem


def learning_goals(path: str | Path) -> list[str]:
    """The bullet points under "What you will learn" in a notebook ([] if it has none or is missing)."""
    path = Path(path)
    if not path.exists():
        return []
    goals, inside = [], False
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        for line in "".join(cell["source"]).splitlines():
            if "What you will learn" in line:
                inside = True
            elif inside and line.startswith(("- ", "* ")):  # either markdown bullet
                goals.append(line[2:].strip())
            elif inside and line.startswith("  ") and goals:
                goals[-1] += " " + line.strip()  # a wrapped bullet continues
            elif inside and goals:
                return goals
    return goals


def course_table(notebook_dir: str | Path = "notebooks") -> list[dict]:
    """One row per lesson: stem, title (None if not written yet), purpose, prerequisites, minutes, goals."""
    rows = []
    for lesson in COURSE:
        path = Path(notebook_dir) / f"{lesson.stem}.ipynb"
        rows.append(
            {
                "stem": lesson.stem,
                "title": lesson_title(path),
                "purpose": lesson.purpose,
                "prerequisites": lesson.prerequisites,
                "minutes": lesson.minutes,
                "goals": learning_goals(path),
            }
        )
    return rows
