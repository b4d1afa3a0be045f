"""Execute notebooks headless: in place and clean for a commit (``make notebooks``), or into a build folder.

``python -m specmath.course execute [NOTEBOOK ...]`` runs each notebook top to bottom in a fresh
python3 kernel and writes it back *clean*: no execution timestamps (``record_timing=False``), no
widget state or widget views (their model ids are random; sliders need a live kernel anyway), and no
output of cells tagged ``machine-dependent`` (timings): those go to the untracked ``timings.json``.
Everything else the notebooks print is seeded, so a second run on the same machine rewrites the same
bytes. ``make demo`` executes into ``_build/executed/`` instead and keeps every output there.

Kernels run with one OpenMP thread unless ``OMP_NUM_THREADS`` says otherwise: notebooks run two at
a time on two cores (``workers``), and two OpenMP threads per kernel on a shared machine spin-wait
for each other and run many times slower.

The client waits for each cell's reply in slices of ``REPLY_POLL_SECONDS``. nbclient waits for it with
one poll of the shell socket lasting the whole cell timeout, and on a busy machine that poll now and
then misses the reply's arrival (the kernel is idle, the reply waits in the socket; seen with the widget
cells of notebook 08, jupyter/nbclient#312): the cell then "passes" after the whole timeout. Polling
again every few seconds finds the waiting reply at the next slice, so the timeout is only a guard
against a hung cell and never the time a cell takes.
"""

from __future__ import annotations

import copy
import json
import os
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from queue import Empty

import nbformat

from specmath.validation import check_integer

__all__ = ["MACHINE_DEPENDENT_TAG", "REPLY_POLL_SECONDS", "CELL_TIMEOUT", "Executed", "clean_for_commit", "execute_notebook",
           "notebook_client", "run_notebooks"]

#: cells whose outputs are measured times: kept out of the committed notebook
MACHINE_DEPENDENT_TAG = "machine-dependent"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: seconds between two looks at the shell socket while a cell runs
REPLY_POLL_SECONDS = 2.0
#: seconds a cell may run before it counts as hung: a guard against a hang, far above any cell's time
CELL_TIMEOUT = 600


def _sliced(original: Callable, slice_seconds: float) -> Callable:
    """``original(timeout=...)`` (a channel's ``get_msg``) polled in slices of ``slice_seconds`` until ``timeout``;
    Empty only once the whole timeout has passed."""
    from jupyter_core.utils import ensure_async

    async def get_msg(timeout: float | None = None, **kwargs):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = slice_seconds if deadline is None else min(slice_seconds, max(0.0, deadline - time.monotonic()))
            try:
                return await ensure_async(original(timeout=left, **kwargs))
            except Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise

    return get_msg


def notebook_client(nb: nbformat.NotebookNode, folder: str | Path, timeout: int = CELL_TIMEOUT):
    """An nbclient ``NotebookClient`` for ``nb`` (cwd ``folder``) whose wait for a cell's reply polls in slices."""
    from nbclient import NotebookClient

    class SlicedPollClient(NotebookClient):
        async def async_start_new_kernel_client(self):
            kc = await super().async_start_new_kernel_client()
            kc.shell_channel.get_msg = _sliced(kc.shell_channel.get_msg, REPLY_POLL_SECONDS)
            return kc

    # widget state is kept while running (interactive() outputs need it) and dropped by clean_for_commit
    return SlicedPollClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(folder)}})


def clean_for_commit(nb: nbformat.NotebookNode) -> tuple[nbformat.NotebookNode, dict]:
    """A copy of an executed notebook fit to commit, and the machine-dependent outputs taken out of it.

    Removes per-cell ``execution`` metadata (timestamps), notebook ``widgets`` state, widget views (a
    random model id each run, and a live panel that a static page cannot show), splits of printed text
    into several stream outputs (they depend on timing) and the outputs of cells tagged
    ``machine-dependent`` (returned as ``{cell index: text}``).
    """
    out = copy.deepcopy(nb)
    out.metadata.pop("widgets", None)
    taken = {}
    for i, cell in enumerate(out.cells):
        cell.metadata.pop("execution", None)
        if cell.cell_type != "code":
            continue
        if MACHINE_DEPENDENT_TAG in cell.metadata.get("tags", []):
            taken[i] = "".join(o.get("text", "") or o.get("data", {}).get("text/plain", "") for o in cell.outputs)
            cell.outputs = []
            continue
        # a widget view (a slider panel, a progress bar) is live state: its text beside it is only a repr
        outputs = [o for o in cell.outputs if WIDGET_VIEW not in o.get("data", {})]
        # the kernel splits printed text into messages by timing: join neighbours of one stream
        merged = []
        for o in outputs:
            if merged and o.output_type == "stream" and merged[-1].output_type == "stream" and merged[-1].name == o.name:
                merged[-1].text += o.text
            else:
                merged.append(o)
        cell.outputs = merged
    return out, taken


def execute_notebook(path: str | Path, timeout: int = CELL_TIMEOUT, kernel_log=None) -> nbformat.NotebookNode:
    """Run a notebook top to bottom in a fresh python3 kernel (cwd: its folder); return it executed.

    ``timeout``: seconds a single cell may run before it counts as hung (a guard, far above any cell's
    time). ``kernel_log``: an open file for the kernel process's own stdout/stderr (its start-up
    warnings); by default they go to this process's terminal.
    """
    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    client = notebook_client(nb, path.parent, timeout)
    streams = {} if kernel_log is None else {"stdout": kernel_log, "stderr": kernel_log}
    client.execute(env=kernel_environment(path), **streams)
    return nb


def kernel_environment(path: Path) -> dict[str, str]:
    """The kernel's environment: this one, with the checkout that holds ``path`` first on ``PYTHONPATH``.

    The kernel starts in the notebook's folder, so without this ``import specmath`` finds whichever
    copy the environment installed, which may be another checkout's (an editable install elsewhere):
    the notebooks run against the code beside them.
    """
    env = dict(os.environ)
    root = path.resolve().parent.parent
    if (root / "specmath" / "__init__.py").is_file():
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    return env


@dataclass(frozen=True)
class Executed:
    """One executed notebook: where it was written, how long it took, its machine-dependent outputs."""

    stem: str
    written: Path
    seconds: float
    machine_dependent: dict  # {cell index: text}, taken out of a notebook written clean


def _execute_one(path: str, out_dir: str | None, log_path: str | None) -> Executed:
    """Worker: execute ``path``; write it clean in place (``out_dir`` None) or whole into ``out_dir``."""
    os.environ.setdefault("TQDM_DISABLE", "1")  # progress bars carry elapsed times: none in the kernels
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    path = Path(path)
    start = time.perf_counter()
    if log_path is None:
        nb = execute_notebook(path)
    else:
        with open(log_path, "a", encoding="utf-8") as kernel_log:
            nb = execute_notebook(path, kernel_log=kernel_log)
    seconds = time.perf_counter() - start
    if out_dir is None:
        clean, taken = clean_for_commit(nb)
        nbformat.write(clean, path)
        return Executed(path.stem, path, seconds, taken)
    written = Path(out_dir) / path.name
    nbformat.write(nb, written)
    return Executed(path.stem, written, seconds, {})


def run_notebooks(paths: list[Path], *, out_dir: str | Path | None = None, workers: int = 2, timings: str | Path | None = None,
                  kernel_log: str | Path | None = None, report: Callable[[Executed], None] | None = None) -> list[Executed]:
    """Execute ``paths``, ``workers`` at a time; return them in the order given.

    ``out_dir`` None writes each notebook back clean (``clean_for_commit``); otherwise the executed
    notebook, every output kept, goes to ``out_dir``. ``report`` is called as each one finishes (the
    demo prints a line); ``timings``: a JSON file for seconds per notebook and the machine-dependent
    outputs; ``kernel_log``: a file for the kernels' own start-up messages.
    """
    workers = check_integer(workers, "workers (notebooks run at a time)", min_value=1)
    if out_dir is not None:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
    done: dict[Path, Executed] = {}
    args = (None if out_dir is None else str(out_dir), None if kernel_log is None else str(kernel_log))
    # spawned workers: each starts its own kernels with a clean interpreter (no inherited torch threads)
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        futures = {pool.submit(_execute_one, str(p), *args): Path(p) for p in paths}
        for future in as_completed(futures):
            executed = future.result()
            done[futures[future]] = executed
            if report is not None:
                report(executed)
    ordered = [done[Path(p)] for p in paths]
    if timings is not None:
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
        record = {"cpus": os.cpu_count(), "load_average_at_end": load, "workers": workers,
                  "notebooks": {e.stem: {"seconds": round(e.seconds, 2),
                                         "machine_dependent_outputs": {str(k): v for k, v in e.machine_dependent.items()}}
                                for e in ordered}}
        Path(timings).parent.mkdir(parents=True, exist_ok=True)
        Path(timings).write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return ordered
