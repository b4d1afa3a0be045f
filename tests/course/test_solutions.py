"""Every exercise solution in solutions/ runs to the end: its asserts are the answers' checks."""

import os
import runpy
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import pytest

from specmath.course.plan import COURSE

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = sorted((ROOT / "solutions").glob("[0-9][0-9]_*.py"))
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
#: notebooks whose solutions are still to be written (listed here, so none is forgotten silently)
PENDING: set[str] = set()


def test_every_notebook_has_a_solution_file_except_the_listed_pending_ones():
    solved = {p.stem for p in SOLUTIONS}
    stems = {p.stem for p in NOTEBOOKS}
    planned = {lesson.stem for lesson in COURSE}
    assert solved <= planned, f"solutions for no notebook of the course: {sorted(solved - planned)}"
    assert stems - solved <= PENDING, f"notebooks without solutions/<name>.py: {sorted(stems - solved - PENDING)}"
    assert not (PENDING & solved), f"remove from PENDING, the solution exists: {sorted(PENDING & solved)}"


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_solution_runs_and_its_checks_pass(path, monkeypatch):
    monkeypatch.chdir(path.parent)
    monkeypatch.setitem(os.environ, "MPLBACKEND", "Agg")
    try:
        runpy.run_path(str(path), run_name="__main__")
    finally:
        plt.close("all")
