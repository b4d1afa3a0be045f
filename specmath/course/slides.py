"""Slide structure for reveal.js: which cell opens a slide, which continues it.

nbconvert's slides exporter reads ``cell.metadata.slideshow.slide_type`` ("slide", "subslide",
"fragment", "-" = continue, "skip", "notes"); a notebook without it becomes one endless slide.
``slide_types`` proposes a structure for cells that have none, and explicit metadata always wins:

* a markdown cell whose first line is a ``#`` or ``##`` heading opens a new slide (``slide``);
* a cell that would push the current slide past ``budget`` lines opens a vertical ``subslide``
  (a slide at 20 px holds about 26 lines; a figure counts as ``FIGURE_LINES``), taking a short
  markdown introduction just before it along; a slide that so far holds only its markdown
  introduction keeps the next cell (the page scrolls if it is too tall);
* everything else continues the current slide (``-``).

``with_slide_metadata`` returns a copy of the notebook with the proposed types filled in; the
export applies it, so notebooks without metadata still present one idea per slide.
"""

from __future__ import annotations

import copy

import nbformat

from specmath.validation import check_integer

__all__ = ["slide_types", "with_slide_metadata", "cell_lines", "FIGURE_LINES", "SLIDE_LINES"]

#: lines a slide holds at the reveal template's 20 px fonts and 800 px height
SLIDE_LINES = 26
#: lines one figure takes on a slide
FIGURE_LINES = 16


def cell_lines(cell: nbformat.NotebookNode) -> int:
    """Estimated height of a cell in text lines: its source, text outputs and figures."""
    lines = len(cell.source.splitlines())
    for out in cell.get("outputs", []):
        data = out.get("data", {})
        if any(k.startswith("image/") for k in data):
            lines += FIGURE_LINES
        elif "text" in out:
            lines += len("".join(out["text"]).splitlines())
        elif "text/markdown" in data:
            # a rendered table or list: about one line per source line, wrapped cells make it taller
            lines += 2 * len("".join(data["text/markdown"]).splitlines())
        elif "text/plain" in data:
            lines += len("".join(data["text/plain"]).splitlines())
    return lines


def _explicit(cell: nbformat.NotebookNode) -> str | None:
    return cell.get("metadata", {}).get("slideshow", {}).get("slide_type")


def slide_types(nb: nbformat.NotebookNode, budget: int = SLIDE_LINES) -> list[str]:
    """One slide type per cell: explicit metadata, else heading -> slide, overflow -> subslide, else '-'."""
    budget = check_integer(budget, "budget (lines per slide)", min_value=1)
    types, used, only_intro = [], 0, False
    for i, cell in enumerate(nb.cells):
        height = cell_lines(cell)
        first = cell.source.lstrip().splitlines()[0] if cell.source.strip() else ""
        kind = _explicit(cell)
        if kind is None:
            if i == 0 or (cell.cell_type == "markdown" and (first.startswith("# ") or first.startswith("## "))):
                kind = "slide"
            elif used > 0 and used + height > budget and not only_intro:
                # the cell would overflow the slide: continue below, on a vertical subslide
                kind = "subslide"
                previous = i - 1
                if types[previous] == "-" and nb.cells[previous].cell_type == "markdown" and cell_lines(nb.cells[previous]) <= 3:
                    # a one-line introduction ("The static call:") moves down with the cell it introduces
                    types[previous], kind = "subslide", "-"
                    used = cell_lines(nb.cells[previous])
            else:
                # (a slide holding only its markdown introduction keeps the cell and scrolls if needed)
                kind = "-"
        if kind in ("slide", "subslide"):
            used = 0
        if kind not in ("skip", "notes"):
            # a slide opened by markdown and holding nothing else is only an introduction so far
            only_intro = kind in ("slide", "subslide") and cell.cell_type == "markdown"
            used += height
        types.append(kind)
    return types


def with_slide_metadata(nb: nbformat.NotebookNode, budget: int = SLIDE_LINES) -> nbformat.NotebookNode:
    """A copy of ``nb`` whose cells all carry ``metadata.slideshow.slide_type`` (explicit ones kept)."""
    out = copy.deepcopy(nb)
    for cell, kind in zip(out.cells, slide_types(nb, budget), strict=True):
        cell.setdefault("metadata", {}).setdefault("slideshow", {})["slide_type"] = kind
    return out
