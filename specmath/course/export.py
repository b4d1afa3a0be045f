"""Export the executed notebooks to static HTML and reveal.js slides that work offline.

nbconvert's templates load require.js, MathJax, mermaid and reveal.js from CDNs when a page is
viewed. Here nothing is fetched at view time:

* MathJax 2.7 comes from the PyPI package ``jupyter-server-mathjax`` (the files Jupyter's classic
  notebook served), copied to ``<out>/_static/mathjax`` and loaded with the combined configuration
  ``TeX-AMS-MML_HTMLorMML-full`` (the package ships no CommonHTML output, which nbconvert's default
  ``TeX-AMS_CHTML-full`` would need);
* reveal.js 5 comes from the PyPI package ``sphinx-revealjs`` (its ``_static/revealjs`` folder:
  ``dist/`` and the notes plugin), copied to ``<out>/_static/reveal.js``;
* cell tags say what an export leaves out (``TAGS``, the names myst-nb and Jupyter Book use):
  ``remove-cell`` drops the cell (set-up that a reader of the page or a slide needs not see, such as an
  import wall), ``hide-input`` and ``remove-input`` keep only the output (the code that draws a figure
  or renders a table), ``remove-output`` keeps only the code; nbconvert's ``TagRemovePreprocessor``
  applies them to the HTML pages and the slides alike, and the notebooks themselves keep every cell;
* slides are a 1280 x 720 deck without the In/Out prompts; ``specmath.course.slides`` decides where
  each slide starts, after the tags have removed what they remove;
* the templates ``specmath_lab`` and ``specmath_reveal`` (beside this file) drop require.js,
  mermaid and the widget manager, and load reveal.js with plain script tags;
* each export's ``index.html`` lists the notebooks in the course's order, in the look of the docs
  (``specmath.course.index_page``).

The packages are located through ``importlib.metadata``; neither is imported. The notebooks are
exported as committed (``make notebooks`` executes them); a notebook with an error output is
refused, so a page never shows a traceback. Run ``python -m specmath.course html|slides``.

References: nbconvert's ``HTMLExporter.mathjax_url`` and ``SlidesExporter.reveal_url_prefix``
options; reveal.js (https://revealjs.com), MathJax 2.7.
"""

from __future__ import annotations

import copy
import importlib.metadata
import re
import shutil
from collections.abc import Iterable
from pathlib import Path

import nbformat

from specmath.course.index_page import write_index
from specmath.course.slide_sizes import DECK_HEIGHT, DECK_WIDTH
from specmath.course.slides import with_slide_metadata

__all__ = ["locate_mathjax", "locate_reveal", "export_html", "export_slides", "error_cells", "notebook_title", "link_pages",
           "remove_tagged", "MATHJAX_CONFIG", "TAGS"]

TEMPLATES = Path(__file__).resolve().parent / "templates"
MATHJAX_PACKAGE = "jupyter-server-mathjax"
REVEAL_PACKAGE = "sphinx-revealjs"
#: the MathJax 2 configuration the package ships: TeX input, HTML-CSS output, Safe mode
MATHJAX_CONFIG = "TeX-AMS-MML_HTMLorMML-full,Safe"
#: the cell tags the exports honour: tag -> what the HTML pages and the slides leave out of the cell
TAGS = {"remove-cell": "the whole cell", "hide-input": "the code (the output stays)",
        "remove-input": "the code (the output stays)", "remove-output": "the output (the code stays)"}


def _locate(package: str, suffix: str) -> Path:
    """The folder holding the installed file of ``package`` whose path ends with ``suffix``."""
    try:
        dist = importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError:
        raise ValueError(f"{package} is not installed: run `pip install {package}` (it ships the offline files)") from None
    for f in dist.files or []:
        if str(f).replace("\\", "/").endswith(suffix):
            path = Path(dist.locate_file(f))
            if path.exists():
                return path.parents[suffix.count("/") - 1]
    raise ValueError(f"{package} is installed but ships no {suffix}")


def locate_mathjax() -> Path:
    """The MathJax 2.7 folder (holding MathJax.js) inside ``jupyter-server-mathjax``."""
    return _locate(MATHJAX_PACKAGE, "static/MathJax.js")


def locate_reveal() -> Path:
    """The reveal.js folder (holding dist/reveal.js) inside ``sphinx-revealjs``."""
    return _locate(REVEAL_PACKAGE, "revealjs/dist/reveal.js")


def error_cells(nb: nbformat.NotebookNode) -> list[int]:
    """Indices of code cells with an error output (a traceback)."""
    return [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and any(o.get("output_type") == "error" for o in c.get("outputs", []))]


def notebook_title(nb: nbformat.NotebookNode, fallback: str) -> str:
    """The first '# ' heading of the notebook's markdown, else ``fallback``."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return fallback


def _read_checked(path: Path) -> nbformat.NotebookNode:
    nb = nbformat.read(path, as_version=4)
    bad = error_cells(nb)
    if bad:
        raise ValueError(f"{path} has error outputs in code cells {bad}: run `make notebooks` and fix them before exporting")
    if not any(c.cell_type == "code" and c.get("execution_count") for c in nb.cells):
        raise ValueError(f"{path} is not executed: run `make notebooks` first")
    return nb


#: a link from one notebook to another (``href="08_explorers.ipynb#anchor"``), as Jupyter follows it
NOTEBOOK_LINK = re.compile(r'href="(\d\d_[A-Za-z0-9_]+)\.ipynb(#[^"]*)?"')


def link_pages(body: str, suffix: str) -> str:
    """Point links between notebooks at the exported pages: ``08_x.ipynb#a`` -> ``08_x<suffix>#a``.

    On slides an anchor names a heading that reveal.js does not scroll to, so the link opens the deck.
    """
    def page(match: re.Match) -> str:
        anchor = match.group(2) or ""
        return f'href="{match.group(1)}{suffix}{"" if suffix == ".slides.html" else anchor}"'

    return NOTEBOOK_LINK.sub(page, body)


def _copy_assets(out: Path, reveal: bool) -> None:
    static = out / "_static"
    # the translations are not needed for English pages; everything else MathJax may load lazily
    shutil.copytree(locate_mathjax(), static / "mathjax", dirs_exist_ok=True, ignore=shutil.ignore_patterns("localization"))
    if reveal:
        src = locate_reveal()
        for part in ("dist", "plugin/notes"):
            shutil.copytree(src / part, static / "reveal.js" / part, dirs_exist_ok=True)


def remove_tagged(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``nb`` with ``TAGS`` applied by nbconvert's ``TagRemovePreprocessor`` (as both exports do)."""
    from nbconvert.preprocessors import TagRemovePreprocessor

    remove = TagRemovePreprocessor(remove_cell_tags={"remove-cell"}, remove_input_tags={"hide-input", "remove-input"},
                                   remove_all_outputs_tags={"remove-output"})
    out, _ = remove.preprocess(copy.deepcopy(nb), {})
    return out


def _export(notebooks: Iterable[str | Path], out_dir: str | Path, exporter, suffix: str, what: str) -> list[Path]:
    out = Path(out_dir)
    paths = [Path(p) for p in notebooks]
    if not paths:
        raise ValueError("no notebooks to export")
    out.mkdir(parents=True, exist_ok=True)
    _copy_assets(out, reveal=suffix == ".slides.html")
    pages = []
    for path in paths:
        nb = remove_tagged(_read_checked(path))
        if suffix == ".slides.html":
            nb = with_slide_metadata(nb)  # cells without slide metadata get a proposed structure
        body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": path.stem}})
        page = out / f"{path.stem}{suffix}"
        page.write_text(link_pages(body, suffix), encoding="utf-8")
        pages.append((page, notebook_title(nb, path.stem)))
    write_index(out, pages, what)
    return [p for p, _ in pages]


def export_html(notebooks: Iterable[str | Path], out_dir: str | Path = "_build/html") -> list[Path]:
    """Write ``<stem>.html`` for every notebook (lab template, local MathJax) and an index.html."""
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(
        template_name="specmath_lab",
        extra_template_basedirs=[str(TEMPLATES)],
        mathjax_url=f"_static/mathjax/MathJax.js?config={MATHJAX_CONFIG}",
    )
    return _export(notebooks, out_dir, exporter, ".html", "HTML")


def export_slides(notebooks: Iterable[str | Path], out_dir: str | Path = "_build/slides") -> list[Path]:
    """Write ``<stem>.slides.html`` (reveal.js, local copy) for every notebook and an index.html."""
    from nbconvert import SlidesExporter

    exporter = SlidesExporter(
        template_name="specmath_reveal",
        extra_template_basedirs=[str(TEMPLATES)],
        mathjax_url=f"_static/mathjax/MathJax.js?config={MATHJAX_CONFIG}",
        reveal_url_prefix="_static/reveal.js",
        reveal_theme="white",
        reveal_width=str(DECK_WIDTH),
        reveal_height=str(DECK_HEIGHT),
        exclude_input_prompt=True,
        exclude_output_prompt=True,
    )
    return _export(notebooks, out_dir, exporter, ".slides.html", "slides")
