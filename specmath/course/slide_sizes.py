"""How tall a cell is on a slide, and how much prose it holds: the estimates ``specmath.course.slides`` lays out by.

A 1280 x 720 deck (``DECK_WIDTH`` x ``DECK_HEIGHT``, the reveal template's size) holds ``SLIDE_BUDGET``
pixels of content. Heights are estimates in deck pixels (``cell_height``): wrapped lines of text and code
at the template's font sizes, table rows by their cells' text, figures at their real size (read from the
PNG header, scaled to the slide width and capped at ``FIGURE_MAX_HEIGHT``, as the template's CSS does).
A cell whose input is removed by a tag (``export.TAGS``) counts its output only. Code is set at
``CODE_FONT`` px, which a 1024 x 768 projector shows at 0.8 of that: the size a back row still reads.
``prose_chars`` counts a markdown cell's running text, for the ``SLIDE_PROSE`` a slide holds.
"""

from __future__ import annotations

import base64
import math
import re
import struct
import unicodedata

import nbformat

__all__ = ["cell_height", "markdown_height", "prose_chars", "png_size", "source_removed", "DECK_WIDTH", "DECK_HEIGHT",
           "SLIDE_BUDGET", "SLIDE_PROSE", "FIGURE_MAX_HEIGHT", "CODE_FONT", "SOURCE_LINES", "wrapped"]

#: the deck's size in reveal.js pixels (16:9, a projector's 1280 x 720 at scale 1)
DECK_WIDTH, DECK_HEIGHT = 1280, 720
#: pixels of content a slide takes before it overflows (the deck's height less reveal's padding and a margin
#: for the estimates' error)
SLIDE_BUDGET = 620
#: the template caps a figure's height (``.reveal .jp-RenderedImage img { max-height }``)
FIGURE_MAX_HEIGHT = 500
#: the font size (deck px) of code and printed output on a slide, as the template's CSS sets it
CODE_FONT = 18
#: width of the content column, and characters per line of text (20 px) and of code (``CODE_FONT`` px of a
#: monospace font whose glyphs are 0.6 em wide, less a margin) at the template's fonts
CONTENT_WIDTH = 1180
TEXT_CHARS, CODE_CHARS = 105, 100
#: line heights (px) of markdown text, list items, code and output (1.25 x ``CODE_FONT``), and the padding around one cell
TEXT_LINE, LIST_LINE, CODE_LINE, CELL_PAD = 27, 32, 23, 16
#: the most lines of a function shown with ``specmath.show`` on one slide (with its caption and a line of text above)
SOURCE_LINES = 22
#: the most characters of prose on one slide: more is a page to read, not a slide to listen to
SLIDE_PROSE = 900
HEADING = {1: 76, 2: 58, 3: 44}
DISPLAY_MATH = 72
#: a table row of one line (18 px text and the cell padding), and the characters a row holds per line: tables
#: lay their columns out by content, so a row's text wraps about as a line of its total length would
TABLE_ROW, TABLE_CHARS = 30, 110
#: a cell this short (an assert, a one-line call) may use the budget's margin rather than sit alone on a slide
SHORT_CELL = 60
#: a slide holding only this much markdown (a heading and a line or two) keeps the next cell whatever its height
SHORT_INTRO = 170
#: a slide holding only this much prose (an introduction) keeps the next paragraph whatever its length
SHORT_PROSE = 200


def _width(text: str) -> int:
    """Columns ``text`` takes: a wide (CJK) character counts twice."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def wrapped(lines: list[str], width: int) -> int:
    """Lines that ``lines`` take when each wraps at ``width`` characters."""
    return sum(max(1, math.ceil(len(line) / width)) for line in lines)


def markdown_height(text: str) -> int:
    """Estimated height of a markdown text on a slide, in deck pixels."""
    height, in_math, fenced = 0, False, False
    for line in text.splitlines():
        stripped = line.strip()
        heading = re.match(r"(#{1,6}) ", stripped)
        if stripped.startswith("```") or fenced:
            # a code block (``specmath.show`` renders a function this way): code lines, wrapped at the code width
            fenced = fenced != stripped.startswith("```")
            height += CODE_LINE * wrapped([line], CODE_CHARS)
        elif stripped.startswith("$$") or in_math:
            # display math: a fraction or a sum with limits is about two and a half text lines tall
            opened = stripped.count("$$") % 2 == 1
            if not in_math:
                height += DISPLAY_MATH
            in_math = in_math != opened
        elif heading:
            height += HEADING.get(len(heading.group(1)), 40)
        elif not stripped:
            height += 10  # a paragraph break
        elif stripped.startswith("|"):
            # a row of cells; the separator row |---|---| is a rule, not a line of text
            cells = [cell.strip() for cell in stripped.strip("|").split("|")]
            text = sum(_width(cell) + 2 for cell in cells)  # the cells' text and a little padding each
            height += 4 if set(stripped) <= set("|-: ") else TABLE_ROW * max(1, math.ceil(text / TABLE_CHARS))
        elif re.match(r"([-*]|\d+\.) ", stripped):
            height += LIST_LINE * wrapped([stripped], TEXT_CHARS - 4)
        elif line.startswith("    "):
            height += CODE_LINE
        else:
            height += TEXT_LINE * wrapped([stripped], TEXT_CHARS)
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


def source_removed(cell: nbformat.NotebookNode) -> bool:
    """Whether a tag removed the cell's code (``TagRemovePreprocessor`` marks it in ``metadata.transient``)."""
    return bool(cell.get("metadata", {}).get("transient", {}).get("remove_source"))


def cell_height(cell: nbformat.NotebookNode) -> int:
    """Estimated height of a cell on a slide, in deck pixels: its source (unless removed) and its outputs."""
    if cell.cell_type == "markdown":
        return markdown_height(cell.source) + CELL_PAD
    height = 0 if source_removed(cell) else CODE_LINE * wrapped(cell.source.splitlines(), CODE_CHARS) + CELL_PAD
    for out in cell.get("outputs", []):
        data = out.get("data", {})
        if "image/png" in data:
            height += _figure_height(out) + CELL_PAD
        elif any(k.startswith("image/") for k in data):
            height += FIGURE_MAX_HEIGHT
        elif "text" in out:
            height += CODE_LINE * wrapped("".join(out["text"]).splitlines(), CODE_CHARS) + CELL_PAD
        elif "text/markdown" in data:
            height += markdown_height("".join(data["text/markdown"])) + CELL_PAD
        elif "text/html" in data:
            height += CODE_LINE * len("".join(data["text/html"]).splitlines()) + CELL_PAD
        elif "text/plain" in data:
            height += CODE_LINE * wrapped("".join(data["text/plain"]).splitlines(), CODE_CHARS) + CELL_PAD
    return height


def prose_chars(cell: nbformat.NotebookNode) -> int:
    """Characters of running text in a markdown cell: its lines outside code fences, display math and tables."""
    if cell.cell_type != "markdown":
        return 0
    count, fenced = 0, False
    for line in cell.source.splitlines():
        stripped = line.strip()
        if stripped.startswith("```") or stripped.startswith("$$"):
            fenced = fenced != (stripped.startswith("```") or stripped.count("$$") % 2 == 1)
            continue
        if not fenced and not stripped.startswith("|") and not stripped.startswith("#"):
            count += len(stripped)
    return count
