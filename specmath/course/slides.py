"""Slide structure for reveal.js: which cell opens a slide, which continues it, where a long text splits.

nbconvert's slides exporter reads ``cell.metadata.slideshow.slide_type`` ("slide", "subslide",
"fragment", "-" = continue, "skip", "notes"); a notebook without it becomes one endless slide.
``with_slide_metadata`` proposes a structure for a 1280 x 720 deck (``DECK_WIDTH`` x ``DECK_HEIGHT``,
the reveal template's size), and explicit metadata always wins:

* a markdown cell taller than half a slide is split at its blank lines (outside code fences and
  display math) into one cell per paragraph, so a long introduction, or a Summary followed by
  Exercises, spreads over several slides instead of running off one;
* a code cell taller than a slide continues in output-only cells (its outputs divided between them, a
  long printed text cut at line ends), each of which fits a slide;
* a markdown cell whose first line is a ``#`` or ``##`` heading opens a new slide (``slide``);
* a cell that would push the current slide past ``budget`` pixels opens a vertical ``subslide``,
  taking a short markdown introduction just before it along;
* everything else continues the current slide (``-``).

Heights are estimates in deck pixels (``cell_height``): wrapped lines of text and code at the
template's font sizes, figures at their real size (read from the PNG header, scaled to the slide
width and capped at ``FIGURE_MAX_HEIGHT``, as the template's CSS does). A cell whose input is
removed by a tag (``export.TAGS``) counts its output only. The browser test measures every slide.
"""

from __future__ import annotations

import base64
import copy
import math
import re
import struct

import nbformat

from specmath.validation import check_integer

__all__ = ["slide_types", "with_slide_metadata", "split_markdown", "cell_height", "DECK_WIDTH", "DECK_HEIGHT",
           "SLIDE_BUDGET", "FIGURE_MAX_HEIGHT"]

#: the deck's size in reveal.js pixels (16:9, a projector's 1280 x 720 at scale 1)
DECK_WIDTH, DECK_HEIGHT = 1280, 720
#: pixels of content a slide takes before it overflows (the deck's height less reveal's padding and a margin
#: for the estimates' error)
SLIDE_BUDGET = 620
#: the template caps a figure's height (``.reveal .jp-RenderedImage img { max-height }``)
FIGURE_MAX_HEIGHT = 500
#: width of the content column, and characters per line of text and of code at the template's fonts
CONTENT_WIDTH = 1180
TEXT_CHARS, CODE_CHARS = 105, 120
#: line heights (px) of markdown text, list items, code and output, and the padding around one cell
TEXT_LINE, LIST_LINE, CODE_LINE, CELL_PAD = 27, 32, 19, 16
HEADING = {1: 76, 2: 58, 3: 44}
DISPLAY_MATH = 72
TABLE_ROW = 27
#: a cell this short (an assert, a one-line call) may use the budget's margin rather than sit alone on a slide
SHORT_CELL = 60
#: a slide holding only this much markdown (a heading and a line or two) keeps the next cell whatever its height
SHORT_INTRO = 170


def _wrapped(lines: list[str], width: int) -> int:
    return sum(max(1, math.ceil(len(line) / width)) for line in lines)


def _markdown_height(text: str) -> int:
    height, math, fenced = 0, False, False
    for line in text.splitlines():
        stripped = line.strip()
        heading = re.match(r"(#{1,6}) ", stripped)
        if stripped.startswith("```") or fenced:
            # a code block (``specmath.show`` renders a function this way): code lines, wrapped at the code width
            fenced = fenced != stripped.startswith("```")
            height += CODE_LINE * _wrapped([line], CODE_CHARS)
        elif stripped.startswith("$$") or math:
            # display math: a fraction or a sum with limits is about two and a half text lines tall
            opened = stripped.count("$$") % 2 == 1
            if not math:
                height += DISPLAY_MATH
            math = math != opened
        elif heading:
            height += HEADING.get(len(heading.group(1)), 40)
        elif not stripped:
            height += 10  # a paragraph break
        elif stripped.startswith("|"):
            height += TABLE_ROW
        elif re.match(r"([-*]|\d+\.) ", stripped):
            height += LIST_LINE * _wrapped([stripped], TEXT_CHARS - 4)
        elif line.startswith("    "):
            height += CODE_LINE
        else:
            height += TEXT_LINE * _wrapped([stripped], TEXT_CHARS)
    return height


def png_size(data: str) -> tuple[int, int] | None:
    """(width, height) of a base64 PNG from its IHDR chunk, or None if it is not a PNG."""
    try:
        head = base64.b64decode(data[:64] if isinstance(data, str) else b"".join(data)[:64])
    except ValueError:
        return None
    if head[:8] != b"\x89PNG\r\n\x1a\n" or len(head) < 24:
        return None
    return struct.unpack(">II", head[16:24])


def _figure_height(output: nbformat.NotebookNode) -> int:
    size = png_size(output["data"]["image/png"])
    if size is None:
        return FIGURE_MAX_HEIGHT
    width, height = size
    shown = output.get("metadata", {}).get("image/png", {}).get("width")
    scale = min(1.0, CONTENT_WIDTH / width, (shown or width) / width)
    return min(FIGURE_MAX_HEIGHT, math.ceil(height * scale))


def _source_removed(cell: nbformat.NotebookNode) -> bool:
    """Whether a tag removed the cell's code (``TagRemovePreprocessor`` marks it in ``metadata.transient``)."""
    return bool(cell.get("metadata", {}).get("transient", {}).get("remove_source"))


def cell_height(cell: nbformat.NotebookNode) -> int:
    """Estimated height of a cell on a slide, in deck pixels: its source (unless removed) and its outputs."""
    if cell.cell_type == "markdown":
        return _markdown_height(cell.source) + CELL_PAD
    height = 0 if _source_removed(cell) else CODE_LINE * _wrapped(cell.source.splitlines(), CODE_CHARS) + CELL_PAD
    for out in cell.get("outputs", []):
        data = out.get("data", {})
        if "image/png" in data:
            height += _figure_height(out) + CELL_PAD
        elif any(k.startswith("image/") for k in data):
            height += FIGURE_MAX_HEIGHT
        elif "text" in out:
            height += CODE_LINE * _wrapped("".join(out["text"]).splitlines(), CODE_CHARS) + CELL_PAD
        elif "text/markdown" in data:
            height += _markdown_height("".join(data["text/markdown"])) + CELL_PAD
        elif "text/html" in data:
            height += CODE_LINE * len("".join(data["text/html"]).splitlines()) + CELL_PAD
        elif "text/plain" in data:
            height += CODE_LINE * _wrapped("".join(data["text/plain"]).splitlines(), CODE_CHARS) + CELL_PAD
    return height


def split_markdown(source: str) -> list[str]:
    """The paragraphs of a markdown text: split at blank lines, never inside a code fence or display math."""
    parts, current, fenced = [], [], False
    for line in source.splitlines():
        stripped = line.strip()
        if stripped.startswith("```") or stripped == "$$":
            fenced = not fenced
        if not stripped and not fenced:
            if current:
                parts.append("\n".join(current))
            current = []
        else:
            current.append(line)
    if current:
        parts.append("\n".join(current))
    return parts


def _explicit(cell: nbformat.NotebookNode) -> str | None:
    return cell.get("metadata", {}).get("slideshow", {}).get("slide_type")


def _split_long_markdown(nb: nbformat.NotebookNode, budget: int) -> nbformat.NotebookNode:
    """A copy of ``nb`` whose markdown cells are split before each ``#`` or ``##`` heading inside them (a
    heading opens a slide), and those taller than half a slide into one cell per paragraph."""
    out = copy.deepcopy(nb)
    cells = []
    for cell in out.cells:
        if cell.cell_type != "markdown":
            cells.append(cell)
            continue
        paragraphs = split_markdown(cell.source)
        if cell_height(cell) <= budget // 2:
            # keep short text whole, but not across a heading
            parts, current = [], []
            for paragraph in paragraphs:
                if current and re.match(r"#{1,2} ", paragraph):
                    parts.append("\n\n".join(current))
                    current = []
                current.append(paragraph)
            paragraphs = parts + ["\n\n".join(current)] if current else parts
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
        shows_code = bool(cell.source.strip()) and not _source_removed(cell)
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
                    line_height = CODE_LINE * _wrapped([lines[taken].rstrip("\n")], CODE_CHARS)
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


def slide_types(nb: nbformat.NotebookNode, budget: int = SLIDE_BUDGET) -> list[str]:
    """One slide type per cell: explicit metadata, else heading -> slide, overflow -> subslide, else '-'."""
    budget = check_integer(budget, "budget (pixels per slide)", min_value=1)
    types, used, intro_only = [], 0, False
    for i, cell in enumerate(nb.cells):
        height = cell_height(cell)
        first = cell.source.lstrip().splitlines()[0] if cell.source.strip() else ""
        kind = _explicit(cell)
        if kind is None:
            margin = SHORT_CELL if height <= SHORT_CELL else 0
            if i == 0 or (cell.cell_type == "markdown" and (first.startswith("# ") or first.startswith("## "))):
                kind = "slide"
            elif used > 0 and used + height > budget + margin and not (intro_only and used <= SHORT_INTRO):
                # the cell would overflow the slide: continue below, on a vertical subslide (a heading with a
                # line or two under it keeps the cell instead: a slide holding only a title is no slide)
                kind = "subslide"
                previous = i - 1
                intro = nb.cells[previous]
                if types[previous] == "-" and intro.cell_type == "markdown" and cell_height(intro) <= 3 * TEXT_LINE + CELL_PAD \
                        and cell_height(intro) + height <= budget:
                    # a short introduction ("The static call:") moves down with the cell it introduces
                    types[previous], kind = "subslide", "-"
                    used = cell_height(intro)
            else:
                kind = "-"
        if kind in ("slide", "subslide"):
            used, intro_only = 0, True
        if kind not in ("skip", "notes"):
            used += height
            intro_only = intro_only and cell.cell_type == "markdown"
        types.append(kind)
    return types


def with_slide_metadata(nb: nbformat.NotebookNode, budget: int = SLIDE_BUDGET) -> nbformat.NotebookNode:
    """A copy of ``nb``, long markdown and tall outputs split, whose cells all carry ``metadata.slideshow.slide_type``."""
    out = _split_tall_outputs(_split_long_markdown(nb, budget), budget)
    for cell, kind in zip(out.cells, slide_types(out, budget), strict=True):
        cell.setdefault("metadata", {}).setdefault("slideshow", {})["slide_type"] = kind
    return out
