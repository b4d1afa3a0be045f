"""``make demo``: run the whole course headless and print one summary block.

The job, in order:

1. execute every notebook (``notebooks/[0-9]*.ipynb``) in a fresh kernel and write it back *clean*:
   no execution timestamps (``record_timing=False``), no widget state or widget views (their model ids
   are random; sliders need a live kernel anyway), and no output of cells tagged ``machine-dependent`` (timings): those outputs go to the
   untracked ``_build/timings.json``; everything else the notebooks print is seeded, so a second run
   rewrites the same bytes and ``git status`` stays clean;
2. regenerate ``figures/`` (figures that plot measured times go to ``_build/figures`` instead);
3. check the article's numbers (``specmath.article``);
4. prove every registered sampler lossless (``specmath.proofs``) and the speculative step for all p, q
   on 2-4 tokens (``specmath.speculative.symbolic_step``);
5. export the HTML pages and reveal.js slides into ``_build/`` from the executed notebooks (timings
   included there, since ``_build`` is not tracked).

Everything the steps print goes to ``_build/demo.log``; the terminal gets the summary block only.
Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p, q).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

__all__ = ["MACHINE_DEPENDENT_TAG", "MEASURED_FIGURES", "clean_for_commit", "execute_notebook", "run_demo", "DemoSummary"]

#: cells whose outputs are measured times: kept out of the committed notebook
MACHINE_DEPENDENT_TAG = "machine-dependent"
#: figures that plot measured times: written to _build/figures, not to the tracked figures/
MEASURED_FIGURES = ("lm_timing.png",)
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def clean_for_commit(nb: nbformat.NotebookNode) -> tuple[nbformat.NotebookNode, dict]:
    """A copy of an executed notebook fit to commit, and the machine-dependent outputs taken out of it.

    Removes per-cell ``execution`` metadata (timestamps), notebook ``widgets`` state, widget views (a
    random model id each run, and a live panel that a static page cannot show), splits of printed text
    into several stream outputs (they depend on timing) and the outputs of cells tagged
    ``machine-dependent`` (returned as ``{cell index: text}``).
    """
    import copy

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


def execute_notebook(path: str | Path, timeout: int = 600, kernel_log=None) -> nbformat.NotebookNode:
    """Run a notebook top to bottom in a fresh python3 kernel (cwd: its folder); return it executed.

    ``kernel_log``: an open file for the kernel process's own stdout/stderr (its start-up warnings);
    by default they go to this process's terminal.
    """
    from nbclient import NotebookClient

    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    # widget state is kept while running (interactive() outputs need it) and dropped by clean_for_commit
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(path.parent)}})
    streams = {} if kernel_log is None else {"stdout": kernel_log, "stderr": kernel_log}
    client.execute(**streams)
    return nb


@dataclass
class DemoSummary:
    """What ``make demo`` did, for the one summary block."""

    notebooks: list[tuple[str, float]] = field(default_factory=list)  # (stem, seconds)
    figures: int = 0
    measured_figures: int = 0
    claims: int = 0
    claims_agree: int = 0
    contradicted: list[str] = field(default_factory=list)
    samplers: int = 0
    samplers_lossless: int = 0
    symbolic_cases: dict = field(default_factory=dict)  # tokens -> regions proved
    symbolic_lossless: bool = False
    pages: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.samplers_lossless == self.samplers and self.symbolic_lossless

    def block(self) -> str:
        slow = ", ".join(f"{stem[:2]} {s:.0f}s" for stem, s in self.notebooks)
        cases = ", ".join(f"{n} tokens: {c}" for n, c in self.symbolic_cases.items())
        lines = [
            "== specmath demo " + "=" * 43,
            f"notebooks run      {len(self.notebooks)} ({slow})",
            f"figures written    {self.figures} in figures/, {self.measured_figures} measured in _build/figures/",
            f"article numbers    {self.claims} checked: {self.claims_agree} agree, {len(self.contradicted)} contradicted"
            + (f" ({', '.join(self.contradicted)})" if self.contradicted else ""),
            f"samplers proved    {self.samplers_lossless} of {self.samplers} lossless (exact)",
            f"symbolic step      output == p for every p, q: {'proved' if self.symbolic_lossless else 'NOT proved'} ({cases} regions)",
            f"exports            {self.pages} pages in _build/html and _build/slides",
            f"details            _build/demo.log, timings in _build/timings.json; {self.seconds:.0f} s in all",
            "=" * 60,
        ]
        return "\n".join(lines)


def _notebooks(folder: Path) -> list[Path]:
    return sorted(folder.glob("[0-9]*.ipynb"))


def run_notebooks(paths: list[Path], build: Path, log, summary: DemoSummary | None = None, kernel_log=None) -> dict:
    """Execute and clean each notebook in place; return {stem: executed notebook with every output}.

    ``log`` gets one line per notebook; ``kernel_log`` (an open file) the kernels' own start-up messages.
    """
    os.environ.setdefault("TQDM_DISABLE", "1")  # progress bars carry elapsed times: none in the kernels
    timings, executed = {}, {}
    for path in paths:
        start = time.perf_counter()
        nb = execute_notebook(path, kernel_log=kernel_log)
        seconds = time.perf_counter() - start
        clean, taken = clean_for_commit(nb)
        nbformat.write(clean, path)
        executed[path.stem] = nb
        timings[path.stem] = {"seconds": round(seconds, 2), "machine_dependent_outputs": {str(k): v for k, v in taken.items()}}
        print(f"executed {path} in {seconds:.1f} s", file=log)
        if summary is not None:
            summary.notebooks.append((path.stem, seconds))
    build.mkdir(parents=True, exist_ok=True)
    (build / "timings.json").write_text(json.dumps(timings, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return executed


def run_demo(root: str | Path = ".", build: str | Path = "_build") -> DemoSummary:
    """The whole job (see the module docstring); returns the summary."""
    from specmath.article import claims_table
    from specmath.course.export import export_html, export_slides
    from specmath.figures import load_all, regenerate
    from specmath.proofs import VERIFIERS, verify
    from specmath.speculative.symbolic_step import prove_step_for_sizes

    root, start = Path(root), time.perf_counter()
    build = root / build
    build.mkdir(parents=True, exist_ok=True)
    summary = DemoSummary()
    with open(build / "demo.log", "w", encoding="utf-8") as log, contextlib.redirect_stdout(log):
        paths = _notebooks(root / "notebooks")
        executed = run_notebooks(paths, build, log, summary, kernel_log=log)

        names = list(load_all())
        stable = [n for n in names if n not in MEASURED_FIGURES]
        summary.figures = len(regenerate(root / "figures", stable))
        measured = [n for n in names if n in MEASURED_FIGURES]
        summary.measured_figures = len(regenerate(build / "figures", measured)) if measured else 0

        rows = claims_table()
        summary.claims = len(rows)
        summary.claims_agree = sum(bool(r["agrees"]) for r in rows)
        summary.contradicted = [r["key"] for r in rows if not r["agrees"]]
        for r in rows:
            print(f"claim {r['key']}: article {r['stated']}, exact {r['exact']}, {'ok' if r['agrees'] else 'WRONG'}")

        results = [verify(n) for n in VERIFIERS]
        summary.samplers = len(results)
        summary.samplers_lossless = sum(r.lossless for r in results)
        for r in results:
            print(r.report())
        proofs = prove_step_for_sizes((2, 3, 4))
        summary.symbolic_cases = {len(p.tokens): p.cases for p in proofs}
        summary.symbolic_lossless = all(p.lossless for p in proofs)
        for p in proofs:
            print(f"symbolic step, {len(p.tokens)} tokens: {p.cases} regions, lossless {p.lossless}, {p.seconds:.2f} s")

        # the exports show the executed notebooks with every output, timings included
        staged = build / "executed"
        staged.mkdir(exist_ok=True)
        for stem, nb in executed.items():
            nbformat.write(nb, staged / f"{stem}.ipynb")
        staged_paths = [staged / f"{p.stem}.ipynb" for p in paths]
        summary.pages = len(export_html(staged_paths, build / "html")) + len(export_slides(staged_paths, build / "slides"))
    summary.seconds = time.perf_counter() - start
    return summary


def main() -> int:
    """Run the demo, print the summary block; exit 1 if a proof failed."""
    with contextlib.redirect_stderr(io.StringIO()) as noise:
        summary = run_demo()
    Path("_build/demo.log").open("a", encoding="utf-8").write(noise.getvalue())
    print(summary.block())
    return 0 if summary.ok else 1


if __name__ == "__main__":
    sys.exit(main())
