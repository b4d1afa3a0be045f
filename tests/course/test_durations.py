"""Every page that says how long ``make demo`` takes says the one measured figure, with its machine and date.

The figure is the record ``scripts/time_demo.py`` writes (``specmath.course.durations``); the README's
quick-start table, the Makefile's comment on the target, the how-to page on presenting the course and
notebook 00's committed output state it, and nothing beside them states another duration for the demo.
"""

import re
from pathlib import Path

import nbformat
import pytest

from specmath.course.durations import DemoTiming, demo_timing

ROOT = Path(__file__).resolve().parents[2]
#: a duration as the pages write one: "73 s", "2.4 min", "about 2 minutes", "two minutes"
DURATION = re.compile(r"\b(\d+(?:\.\d+)?|one|two|three|a few) ?(s|sec|seconds?|min|minutes?)\b", re.I)


@pytest.fixture(scope="module")
def timing() -> DemoTiming:
    return demo_timing()


def _demo_passages(text: str) -> list[str]:
    """The paragraphs (a Makefile target with its comment, a paragraph of a page) that speak of the demo, each
    with its comment lines joined into one line of text."""
    blocks = [re.sub(r"\n#+ ", " ", block) for block in text.split("\n\n")]
    return [block for block in blocks if "make demo" in block or "\ndemo:" in block]


def test_the_record_is_one_timed_run_of_make_demo_with_its_machine_load_and_date(timing):
    assert timing.command == "make demo" and timing.seconds > 0 and len(timing.notebook_seconds) == len(
        list((ROOT / "notebooks").glob("[0-9]*.ipynb")))
    assert re.fullmatch(r"a \d+-core \S+ CPU \(.+\)", timing.machine) and re.fullmatch(r"\d{4}-\d\d-\d\d", timing.date)
    line = timing.machine_line()
    assert timing.machine in line and timing.date in line and ("shared with other work" in line) == timing.loaded


def test_the_readme_states_the_recorded_figure_and_machine(timing):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith("| `make demo` |"))
    assert row.split(" | ")[-1] == f"{timing.figure} ({len(timing.notebook_seconds)} notebooks, two at a time) |"
    assert f"`make demo` timed on {timing.machine_line()}" in re.sub(r"\s+", " ", readme)


def test_the_makefile_and_the_how_to_page_state_the_same_figure_and_no_other(timing):
    for path in (ROOT / "Makefile", ROOT / "docs" / "how-to" / "present-the-course.md"):
        passages = _demo_passages(path.read_text(encoding="utf-8"))
        assert any(f"{timing.figure} on {timing.machine}" in p and timing.date in p for p in passages), path.name
        stated = {m.group(0) for p in passages for m in DURATION.finditer(p)}
        assert stated == {timing.figure}, f"{path.name} states {sorted(stated)} for make demo, the record {timing.figure}"


def test_notebook_00_shows_the_recorded_sentence(timing):
    notebook = nbformat.read(ROOT / "notebooks" / "00_index.ipynb", as_version=4)
    shown = ["".join(o.get("data", {}).get("text/markdown", "")) for c in notebook.cells if c.cell_type == "code"
             for o in c.get("outputs", [])]
    assert any(timing.sentence() in text for text in shown), "re-execute notebooks/00_index.ipynb after scripts/time_demo.py"
    prose = " ".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    assert not DURATION.search(prose), f"notebook 00 states a duration in prose: {DURATION.search(prose).group(0)}"
