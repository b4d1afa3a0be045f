"""Slide structure for reveal.js: which cell opens a slide, which continues it, where a long text splits.

nbconvert's slides exporter reads ``cell.metadata.slideshow.slide_type`` ("slide", "subslide",
"fragment", "-" = continue, "skip", "notes"); a notebook without it becomes one endless slide.
``with_slide_metadata`` proposes a structure for a 1280 x 720 deck (``DECK_WIDTH`` x ``DECK_HEIGHT``,
the reveal template's size), and explicit metadata always wins:

* a cell whose ``slide_type`` is ``skip`` is left out of the deck (the HTML page keeps it): the way to
  show a long function in the HTML only;
* a markdown cell taller than half a slide, or with more than ``SLIDE_PROSE`` characters of prose, is split
  at its blank lines (outside code fences and display math) into one cell per paragraph (a long list
  between its items), so a long introduction, or a Summary followed by Exercises, spreads over several
  slides instead of running off one;
* a function shown with ``specmath.show`` longer than ``SOURCE_LINES`` lines is split between its
  statements into pieces of about equal length, the later ones captioned "(continued)";
* a code cell taller than a slide continues in output-only cells (its outputs divided between them, a
  long printed text cut at line ends, a generated Markdown table continued under its header), each of
  which fits a slide;
* a markdown cell whose first line is a ``#`` or ``##`` heading opens a new slide (``slide``);
* a cell that would push the current slide past ``budget`` pixels, or its prose past ``SLIDE_PROSE``
  characters, opens a vertical ``subslide``, taking a short markdown introduction just before it (a line
  or a few ending with a colon, or a heading alone) along;
* everything else continues the current slide (``-``).

Code is set at ``CODE_FONT`` px on the deck (the template's CSS), which a 1024 x 768 projector shows at
0.8 of that: the size a back row still reads, and the reason a long function is split or left to the
HTML page rather than shrunk.

Heights and prose are counted by ``specmath.course.slide_sizes``, the pieces cut by
``specmath.course.slide_pieces``. The browser test measures every slide.
"""

from __future__ import annotations

import copy
import re

import nbformat

from specmath.course.slide_pieces import split_list, split_markdown, split_source, split_table
from specmath.course.slide_sizes import (
    CELL_PAD,
    CODE_CHARS,
    CODE_LINE,
    SHORT_CELL,
    SHORT_INTRO,
    SHORT_PROSE,
    SLIDE_BUDGET,
    SLIDE_PROSE,
    TEXT_LINE,
    cell_height,
    prose_chars,
    source_removed,
    wrapped,
)
from specmath.validation import check_integer

__all__ = ["slide_types", "with_slide_metadata"]


def _shown_source(output: nbformat.NotebookNode) -> tuple[str, str] | None:
    """(title, source) of an output written by ``specmath.show``, else None."""
    data = output.get("data", {})
    html_text = "".join(data.get("text/html", ""))
    markdown = "".join(data.get("text/markdown", ""))
    if 'class="specmath-source"' not in html_text or not markdown.startswith("*"):
        return None
    return markdown.split("\n", 1)[0].strip("*"), "".join(data.get("text/plain", ""))


def _split_shown_sources(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``nb`` in which a function shown with ``specmath.show`` longer than ``SOURCE_LINES`` lines is
    shown as several outputs, cut between statements, the later ones captioned "(continued)"."""
    from specmath.source_view import ShownSource

    out = copy.deepcopy(nb)
    for cell in out.cells:
        if cell.cell_type != "code":
            continue
        outputs = []
        for output in cell.get("outputs", []):
            shown = _shown_source(output)
            pieces = split_source(shown[1]) if shown else []
            if len(pieces) <= 1:
                outputs.append(output)
                continue
            for i, piece in enumerate(pieces):
                view = ShownSource(piece, shown[0] + (" (continued)" if i else ""))
                part = copy.deepcopy(output)
                part["data"] = {"text/html": view._repr_html_(), "text/markdown": view._repr_markdown_(), "text/plain": piece}
                outputs.append(part)
        cell.outputs = outputs
    return out


def _explicit(cell: nbformat.NotebookNode) -> str | None:
    return cell.get("metadata", {}).get("slideshow", {}).get("slide_type")


def _split_long_markdown(nb: nbformat.NotebookNode, budget: int) -> nbformat.NotebookNode:
    """A copy of ``nb`` whose markdown cells are split before each ``#`` or ``##`` heading inside them (a
    heading opens a slide), and those taller than half a slide or with more than ``SLIDE_PROSE`` characters
    of prose into one cell per paragraph, a long list between its items (``split_list``)."""
    out = copy.deepcopy(nb)
    cells = []
    for cell in out.cells:
        if cell.cell_type != "markdown":
            cells.append(cell)
            continue
        paragraphs = split_markdown(cell.source)
        if cell_height(cell) <= budget // 2 and prose_chars(cell) <= SLIDE_PROSE:
            # keep short text whole, but not across a heading
            parts, current = [], []
            for paragraph in paragraphs:
                if current and re.match(r"#{1,2} ", paragraph):
                    parts.append("\n\n".join(current))
                    current = []
                current.append(paragraph)
            paragraphs = parts + ["\n\n".join(current)] if current else parts
        else:
            paragraphs = [piece for paragraph in paragraphs for piece in split_list(paragraph)]
        if len(paragraphs) <= 1:
            cells.append(cell)
            continue
        for i, part in enumerate(paragraphs):
            piece = nbformat.v4.new_markdown_cell(part, metadata=copy.deepcopy(cell.metadata) if i == 0 else {})
            if "id" in cell:
                piece.id = f"{cell.id}-{i}"  # unique and the same on every export
            cells.append(piece)
    out.cells = cells
    return out


def _split_tables(output: nbformat.NotebookNode, budget: int) -> list[nbformat.NotebookNode]:
    """A Markdown output (a table the notebook generated) taller than a slide, as several outputs (``split_table``)."""
    data = output.get("data", {})
    if "text/markdown" not in data or "text/html" in data:
        return [output]
    pieces = split_table("".join(data["text/markdown"]), budget - CELL_PAD)
    parts = []
    for piece in pieces:
        part = copy.deepcopy(output)
        part["data"] = {"text/markdown": piece, "text/plain": piece}
        parts.append(part)
    return parts


def _split_tall_outputs(nb: nbformat.NotebookNode, budget: int) -> nbformat.NotebookNode:
    """A copy of ``nb`` in which a code cell taller than a slide continues in output-only cells: its outputs
    divided between them, a long printed text cut at line ends, so each piece fits one slide."""
    out = copy.deepcopy(nb)
    cells = []
    for cell in out.cells:
        if cell.cell_type != "code" or cell_height(cell) <= budget:
            cells.append(cell)
            continue
        head = copy.deepcopy(cell)
        head.outputs = []
        shows_code = bool(cell.source.strip()) and not source_removed(cell)
        cell.outputs = [part for output in cell.outputs for part in _split_tables(output, budget - SHORT_INTRO)]
        pieces: list[list] = [[]]
        # the first slide also holds the code and room for a short introduction above it
        used = (cell_height(head) if shows_code else 0) + SHORT_INTRO

        for output in cell.outputs:
            if output.get("output_type") != "stream":
                probe = nbformat.v4.new_code_cell("", metadata={"transient": {"remove_source": True}})
                probe.outputs = [output]
                height = cell_height(probe)
                if (pieces[-1] or shows_code) and used + height > budget:
                    pieces.append([])
                    used = 0
                pieces[-1].append(output)
                used += height
                continue
            lines = "".join(output["text"]).splitlines(keepends=True)
            while lines:
                # as many lines as fit under what this slide holds; a fresh slide takes at least one
                fresh, room = used == 0, budget - used - CELL_PAD
                taken, height = 0, 0
                while taken < len(lines):
                    line_height = CODE_LINE * wrapped([lines[taken].rstrip("\n")], CODE_CHARS)
                    if height + line_height > room and (taken or not fresh):
                        break
                    taken, height = taken + 1, height + line_height
                if taken:
                    part = copy.deepcopy(output)
                    part["text"] = "".join(lines[:taken])
                    pieces[-1].append(part)
                    used += height + CELL_PAD
                    lines = lines[taken:]
                if lines:
                    pieces.append([])
                    used = 0
        for i, outputs in enumerate(pieces):
            piece = copy.deepcopy(head) if i == 0 else nbformat.v4.new_code_cell(
                "", execution_count=cell.get("execution_count"), metadata={"transient": {"remove_source": True}})
            if i and "id" in cell:
                piece.id = f"{cell.id}-{i}"  # unique and the same on every export
            piece.outputs = outputs
            if outputs or (i == 0 and shows_code):
                cells.append(piece)
    out.cells = cells
    return out


def _introduces(cell: nbformat.NotebookNode) -> bool:
    """Whether a markdown cell leads into the next one: a few lines ending with a colon, or a heading alone."""
    text = cell.source.strip()
    return text.endswith(":") or bool(re.fullmatch(r"#{1,6} [^\n]*", text))


def slide_types(nb: nbformat.NotebookNode, budget: int = SLIDE_BUDGET) -> list[str]:
    """One slide type per cell: explicit metadata, else heading -> slide, overflow -> subslide, else '-'."""
    budget = check_integer(budget, "budget (pixels per slide)", min_value=1)
    types, used, intro_only, prose = [], 0, False, 0
    for i, cell in enumerate(nb.cells):
        height, chars = cell_height(cell), prose_chars(cell)
        first = cell.source.lstrip().splitlines()[0] if cell.source.strip() else ""
        kind = _explicit(cell)
        if kind is None:
            margin = SHORT_CELL if height <= SHORT_CELL else 0
            if i == 0 or (cell.cell_type == "markdown" and (first.startswith("# ") or first.startswith("## "))):
                kind = "slide"
            elif used > 0 and ((used + height > budget + margin and not (intro_only and used <= SHORT_INTRO))
                               or (chars and prose > SHORT_PROSE and prose + chars > SLIDE_PROSE)):
                # the cell would overflow the slide, or give it more prose than a slide holds: continue below, on a
                # vertical subslide (a heading with a line or two under it keeps the cell instead: a slide holding
                # only a title is no slide)
                kind = "subslide"
                previous = i - 1
                intro = nb.cells[previous]
                if types[previous] == "-" and intro.cell_type == "markdown" and _introduces(intro) \
                        and cell_height(intro) <= 5 * TEXT_LINE + CELL_PAD and cell_height(intro) + height <= budget:
                    # a short introduction ("The static call:") or a heading moves down with the cell it introduces
                    types[previous], kind = "subslide", "-"
                    used, prose = cell_height(intro), prose_chars(intro)
            else:
                kind = "-"
        if kind in ("slide", "subslide"):
            used, intro_only, prose = 0, True, 0
        if kind not in ("skip", "notes"):
            used += height
            prose += chars
            intro_only = intro_only and cell.cell_type == "markdown"
        types.append(kind)
    return types


def with_slide_metadata(nb: nbformat.NotebookNode, budget: int = SLIDE_BUDGET) -> nbformat.NotebookNode:
    """A copy of ``nb`` without its ``skip`` cells, long markdown, long shown functions and tall outputs split,
    whose cells all carry ``metadata.slideshow.slide_type``."""
    kept = copy.copy(nb)
    kept.cells = [cell for cell in nb.cells if _explicit(cell) != "skip"]
    out = _split_tall_outputs(_split_shown_sources(_split_long_markdown(kept, budget)), budget)
    for cell, kind in zip(out.cells, slide_types(out, budget), strict=True):
        cell.setdefault("metadata", {}).setdefault("slideshow", {})["slide_type"] = kind
    return out
