"""Every notebook runs top to bottom in a fresh kernel, as ``make demo`` and a student run it.

Executed through ``specmath.course.execute`` (the code ``make demo`` and ``make notebooks`` use): the cell
timeout there is a guard against a hang (10 minutes), never a speed requirement, so a busy machine makes
these tests slower but not red. The index (00) reads every other notebook's "What you will learn" list:
its committed outputs must be what it prints now (pure Python, no floats), or ``make notebooks`` is due.
"""

import asyncio
from pathlib import Path
from queue import Empty

import nbformat
import pytest

from specmath.course.execute import _sliced, clean_for_commit, execute_notebook

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_top_to_bottom_without_an_error(path):
    nb = execute_notebook(path)  # raises CellExecutionError, with the cell and its traceback, on any error
    assert not any(o.get("output_type") == "error" for c in nb.cells for o in c.get("outputs", []))
    if path.stem == "00_index":
        fresh, _ = clean_for_commit(nb)
        committed = nbformat.read(path, as_version=4)
        for new, old in zip(fresh.cells, committed.cells, strict=True):
            assert new.get("outputs") == old.get("outputs"), (
                f"00_index's committed output differs from what it prints now (cell {new.source[:40]!r}): "
                "a notebook's title or 'What you will learn' list changed; run `make notebooks`")


def test_the_reply_wait_polls_in_slices_until_its_timeout_and_only_then_gives_up():
    calls = []

    def missed_twice(timeout):
        # the socket reports nothing twice (a missed wakeup), then hands over the waiting reply
        calls.append(timeout)
        if len(calls) < 3:
            raise Empty
        return {"msg": "reply"}

    assert asyncio.run(_sliced(missed_twice, 2.0)(timeout=None)) == {"msg": "reply"}
    assert calls == [2.0, 2.0, 2.0]

    def never(timeout):
        calls.append(timeout)
        raise Empty

    calls.clear()
    with pytest.raises(Empty):
        asyncio.run(_sliced(never, 2.0)(timeout=0.0))  # nothing left of the timeout: one look, then Empty
    assert calls == [0.0]


def test_a_notebook_imports_specmath_from_the_checkout_it_sits_in(tmp_path):
    # the kernel starts in notebooks/; the installed specmath may be another checkout's (editable)
    (tmp_path / "specmath").mkdir()
    (tmp_path / "specmath" / "__init__.py").write_text("WHERE = 'beside the notebook'\n", encoding="utf-8")
    (tmp_path / "notebooks").mkdir()
    path = tmp_path / "notebooks" / "probe.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import specmath; print(specmath.WHERE)")]), path)
    nb = execute_notebook(path)
    assert nb.cells[0].outputs[0].text == "beside the notebook\n"
