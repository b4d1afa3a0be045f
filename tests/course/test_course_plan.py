"""The course plan (notebooks/00_index): complete, ordered, and its glossary uses the article's words."""

import re
from pathlib import Path

import pytest

from specmath.course.plan import COURSE, GLOSSARY, course_table, learning_goals

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
SEED_DIRS = [ROOT.parent / "shared" / "seed", ROOT / "shared" / "seed", Path("/work/shared/seed")]


def test_course_plan_lists_every_numbered_notebook_on_disk_in_number_order():
    stems = [lesson.stem for lesson in COURSE]
    assert stems == sorted(stems)
    on_disk = {p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")}
    assert on_disk <= set(stems), f"add these notebooks to specmath.course.plan.COURSE: {sorted(on_disk - set(stems))}"


def test_every_prerequisite_comes_earlier_in_the_course():
    order = [lesson.stem for lesson in COURSE]
    for lesson in COURSE:
        for first in lesson.prerequisites:
            assert order.index(first) < order.index(lesson.stem), (lesson.stem, first)


def test_learning_goals_are_read_from_every_existing_notebook():
    for row in course_table(NOTEBOOKS):
        if row["title"] is not None and row["stem"] != "00_index":
            assert len(row["goals"]) >= 2, f"{row['stem']}: no 'What you will learn' bullets found"
            assert all(g and not g.startswith("-") for g in row["goals"])


def test_learning_goals_joins_wrapped_bullets(tmp_path):
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("**What you will learn**\n\n- one\n  continued\n* two\n\nText after.")])
    path = tmp_path / "x.ipynb"
    nbformat.write(nb, path)
    assert learning_goals(path) == ["one continued", "two"]
    assert learning_goals(tmp_path / "missing.ipynb") == []


def test_glossary_has_the_terms_the_issue_asks_for():
    english = " ".join(en for en, _, _ in GLOSSARY)
    for term in ("draft model", "target model", "acceptance", "residual distribution", "bonus token", "KV cache"):
        assert term in english


def test_glossary_chinese_terms_are_the_seed_articles_words():
    seed = next((d for d in SEED_DIRS if d.is_dir() and list(d.glob("*.txt"))), None)
    if seed is None:
        pytest.skip("the seed article (shared/seed/*.txt) is not beside this checkout")
    text = "".join(p.read_text(encoding="utf-8") for p in seed.glob("*.txt"))
    for _, chinese, _ in GLOSSARY:
        # every Chinese (or article-English) phrase outside brackets and the notes in brackets must occur
        for phrase in re.split(r"[;,()（）]\s*|\s+\(", chinese):
            phrase = phrase.strip(" )")
            if phrase:
                assert phrase in text, f"{phrase!r} is not in the seed article"


def test_each_track_is_a_path_in_prerequisite_order_and_no_notebook_is_on_two():
    from specmath.course.plan import TRACKS, track_of

    stems = {lesson.stem for lesson in COURSE}
    needs = {lesson.stem: set(lesson.prerequisites) for lesson in COURSE}
    seen = []
    for name, path in TRACKS.items():
        assert set(path) <= stems, name
        for i, stem in enumerate(path):
            # what a notebook needs from its own track comes before it on that track
            assert needs[stem] & set(path) <= set(path[:i]), (name, stem)
            assert track_of(stem) == name
        seen += path
    assert len(seen) == len(set(seen))
    assert track_of("00_index") is None


def test_every_explorer_is_linked_from_its_chapter_and_the_link_names_an_existing_heading():
    import json

    from specmath.course.plan import EXPLORERS

    explorers = "".join("".join(c["source"]) for c in json.loads((NOTEBOOKS / "08_explorers.ipynb").read_text())["cells"])
    for heading, chapter in EXPLORERS.items():
        assert f"## {heading}" in explorers, heading
        anchor = heading.replace(" ", "-")
        text = "".join("".join(c["source"]) for c in json.loads((NOTEBOOKS / f"{chapter}.ipynb").read_text())["cells"])
        assert f"08_explorers.ipynb#{anchor}" in text, f"{chapter} does not link to the explorer {heading!r}"


def test_the_index_shows_each_notebooks_current_learning_goals_and_title():
    # 00 copies every notebook's "What you will learn" list into its output: when a list changes, 00's
    # committed output is stale until `make notebooks` runs it again
    import nbformat

    index = nbformat.read(NOTEBOOKS / "00_index.ipynb", as_version=4)
    shown = {}
    for cell in index.cells:
        for out in cell.get("outputs", []):
            text = "".join(out.get("data", {}).get("text/markdown", ""))
            heading = re.match(r"\*\*(\d\d_\w+)\*\*\n", text)
            if heading:
                shown[heading.group(1)] = [line[2:] for line in text.splitlines()[1:] if line.startswith("- ")]
    rows = [row for row in course_table(NOTEBOOKS) if row["stem"] != "00_index"]
    assert {row["stem"]: row["goals"] for row in rows} == shown
    outputs = "".join("".join(o.get("data", {}).get("text/markdown", "")) for c in index.cells for o in c.get("outputs", []))
    for row in rows:
        assert row["title"].split(" · ", 1)[-1] in outputs, f"00 does not show the current title of {row['stem']}"
