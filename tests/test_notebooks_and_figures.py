"""Repository hygiene that users see: notebooks paired and executed, figures made by code."""

from pathlib import Path

import jupytext
import nbformat
import pytest

from specmath.course.plan import COURSE
from specmath.figures import load_all, regenerate

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_the_notebooks_on_disk_are_exactly_the_course_plans_lessons():
    # every lesson of the course has its notebook and every notebook is a lesson of the course
    assert [p.stem for p in NOTEBOOKS] == [lesson.stem for lesson in COURSE]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_paired_with_its_py_percent_file_and_in_sync(path):
    pair = path.with_suffix(".py")
    assert pair.exists(), f"{path.name} has no py:percent pair"
    from_py = jupytext.read(pair)
    from_ipynb = nbformat.read(path, as_version=4)
    src_py = [(c.cell_type, c.source.strip()) for c in from_py.cells]
    src_nb = [(c.cell_type, c.source.strip()) for c in from_ipynb.cells]
    assert src_py == src_nb, f"{path.name} and {pair.name} differ: run jupytext --sync"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_committed_executed_without_errors_and_ends_with_summary_and_exercises(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    assert all(c.get("execution_count") for c in code), f"{path.name} has unexecuted cells"
    assert not any(o.get("output_type") == "error" for c in code for o in c.get("outputs", [])), f"{path.name} has an error output"
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "## Summary" in text and "## Exercises" in text
    assert "What you will learn" in text or path.name.startswith("00_")


def test_every_file_in_figures_is_produced_by_a_registered_plotting_function():
    registered = set(load_all())
    on_disk = {p.name for p in (ROOT / "figures").iterdir() if p.suffix in {".png", ".svg"}}
    assert on_disk <= registered, f"figures without a producer: {sorted(on_disk - registered)}"
    assert registered <= on_disk, f"registered figures not generated: run make figures: {sorted(registered - on_disk)}"


def test_regenerate_writes_the_named_figures_as_png_files(tmp_path):
    # what each figure plots is checked in test_figures_plot_their_data.py; here: the files
    names = ["two_token_paths.png", "rand7_levels.png", "von_neumann_flips.png"]
    written = regenerate(tmp_path, only=names)
    assert [p.name for p in written] == names
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in written)
