"""A speedup stated in a notebook's prose or in the README is one the committed measurements hold.

Timings in the notebooks come from code (``specmath.course.measurements`` renders the committed JSON) or are
written in prose beside the page that records them; the prose is where a number can go stale. Every
speedup written the course's way ("2.09x", "2.09x-2.34x") in a markdown cell must be a value of
``data/measurements/`` or of a dated page of ``docs/measurements/``, and a range the smallest and largest
of a recorded series (``specmath.course.measurements.disagreeing_speedups``).
"""

from pathlib import Path

import nbformat
import pytest

from specmath.course.measurements import committed_speedups, disagreeing_speedups, stated_speedups

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))


@pytest.fixture(scope="module")
def committed():
    return committed_speedups()


def test_a_range_that_no_recorded_series_spans_is_found_and_the_recorded_ones_pass(committed):
    # the CPU page records the lean draft's five token-wise runs as 2.09x, 2.24x, 2.30x, 2.34x and 2.17x;
    # a sentence giving them as 2.02x-2.21x contradicts it, and so does a range no page states
    text = ("five consecutive runs went from 1.74x-1.99x to 2.02x-2.21x over plain decoding token by token, "
            "and to 2.32x-2.63x with block verification; the ratio fell (1.69x-2.33x); prompt lookup gave 2.73x")
    assert stated_speedups(text) == ["1.74x-1.99x", "2.02x-2.21x", "2.32x-2.63x", "1.69x-2.33x", "2.73x"]
    assert disagreeing_speedups(text, committed) == ["2.02x-2.21x", "1.69x-2.33x"]
    assert disagreeing_speedups("token by token 2.09x-2.34x, then 1.57x-2.10x with the target lean", committed) == []
    # a single value no measurement holds, and one the GPU's JSON holds (the bundled pair, block verification)
    assert disagreeing_speedups("a 9.99x speedup; the H200 measured 2.35x", committed) == ["9.99x"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_speedup_in_a_notebooks_prose_is_a_committed_measurement(path, committed):
    cells = nbformat.read(path, as_version=4).cells
    bad = {i: found for i, cell in enumerate(cells) if cell.cell_type == "markdown"
           if (found := disagreeing_speedups(cell.source, committed))}
    assert not bad, f"{path.name}: speedups in markdown cells that no committed measurement states (cell: values): {bad}"


def test_every_speedup_in_the_readme_is_a_committed_measurement(committed):
    assert disagreeing_speedups((ROOT / "README.md").read_text(encoding="utf-8"), committed) == []
