"""Slide structure for reveal.js: which cell opens a slide, which continues it, where a long text splits.

nbconvert's slides exporter reads ``cell.metadata.slideshow.slide_type`` ("slide", "subslide",
"fragment", "-" = continue, "skip", "notes"); a notebook without it becomes one endless slide.
``with_slide_metadata`` proposes a structure for a 1280 x 720 deck (``DECK_WIDTH`` x ``DECK_HEIGHT``,
the reveal template's size), and explicit metadata always wins:

* a cell whose ``slide_type`` is ``skip`` is left out of the deck (the HTML page keeps it): the way to
  show a long function in the HTML only;
* a markdown cell taller than half a slide, or with more than ``SLIDE_PROSE`` characters of prose, is split
  at its blank lines (outside code fences and display math) into one cell per paragraph (a long list
  between its items), so a long introduction, or a Summary followed by
  Exercises, spreads over several slides instead of running off one;
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

Heights are estimates in deck pixels (``cell_height``): wrapped lines of text and code at the
template's font sizes, figures at their real size (read from the PNG header, scaled to the slide
width and capped at ``FIGURE_MAX_HEIGHT``, as the template's CSS does). A cell whose input is
removed by a tag (``export.TAGS``) counts its output only. The browser test measures every slide.
"""

from __future__ import annotations

import base64
import copy
import io
import math
import re
import struct
import tokenize
import unicodedata

import nbformat

from specmath.validation import check_integer

__all__ = ["slide_types", "with_slide_metadata", "split_markdown", "split_source", "split_table", "split_list", "cell_height", "prose_chars",
           "DECK_WIDTH", "DECK_HEIGHT", "SLIDE_BUDGET", "SLIDE_PROSE", "FIGURE_MAX_HEIGHT", "CODE_FONT", "SOURCE_LINES"]

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


def _wrapped(lines: list[str], width: int) -> int:
    return sum(max(1, math.ceil(len(line) / width)) for line in lines)


def _markdown_height(text: str) -> int:
    height, in_math, fenced = 0, False, False
    for line in text.splitlines():
        stripped = line.strip()
        heading = re.match(r"(#{1,6}) ", stripped)
        if stripped.startswith("```") or fenced:
            # a code block (``specmath.show`` renders a function this way): code lines, wrapped at the code width
            fenced = fenced != stripped.startswith("```")
            height += CODE_LINE * _wrapped([line], CODE_CHARS)
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


def _statement_starts(source: str) -> list[int]:
    """0-based indices of the lines of ``source`` where a statement or a blank line begins at bracket depth 0
    (never inside a string, a call's arguments or a continued line), found with ``tokenize``."""
    starts, depth = {0}, 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.OP and token.string in "([{":
                depth += 1
            elif token.type == tokenize.OP and token.string in ")]}":
                depth -= 1
            elif token.type in (tokenize.NEWLINE, tokenize.NL) and depth == 0:
                starts.add(token.end[0])  # the line after this one (tokenize counts lines from 1)
    except (tokenize.TokenError, SyntaxError):
        return [0]
    return sorted(starts)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip()) if line.strip() else 0


def split_source(source: str, lines: int = SOURCE_LINES) -> list[str]:
    """``source`` cut between statements into pieces of about equal length, each at most ``lines`` lines
    where the statements allow it (a single statement longer than that stays whole)."""
    lines = check_integer(lines, "lines per piece", min_value=1)
    text = source.splitlines(keepends=True)
    if len(text) <= lines:
        return [source]
    pieces_wanted = math.ceil(len(text) / lines)
    starts = [i for i in _statement_starts(source) if 0 < i < len(text)]
    cuts, begin = [], 0
    for k in range(1, pieces_wanted):
        target = begin + math.ceil((len(text) - begin) / (pieces_wanted - k + 1))
        fitting = [i for i in starts if begin < i <= begin + lines]
        if not fitting:
            fitting = [i for i in starts if i > begin][:1]
        if not fitting:
            break
        # near the even cut, the outermost statement: a piece rather ends after a loop than inside it
        near = [i for i in fitting if abs(i - target) <= 4] or fitting
        cut = min(near, key=lambda i: (_indent(text[i]), abs(i - target)))
        cuts.append(cut)
        begin = cut
    bounds = [0, *cuts, len(text)]
    return ["".join(text[a:b]) for a, b in zip(bounds, bounds[1:]) if a < b]


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


LIST_ITEM = re.compile(r" {0,3}([-*]|\d+\.) ")


def split_list(paragraph: str, chars: int = SLIDE_PROSE) -> list[str]:
    """A paragraph holding a list with more than ``chars`` characters of prose, cut between its items into
    pieces of at most ``chars`` where the items allow it (lines before the first item stay with it; a
    numbered list continues with its own numbers, which Markdown keeps)."""
    lines = paragraph.splitlines()
    if prose_chars(nbformat.v4.new_markdown_cell(paragraph)) <= chars or not any(LIST_ITEM.match(x) for x in lines):
        return [paragraph]
    items: list[list[str]] = [[]]
    for line in lines:
        if LIST_ITEM.match(line) and any(LIST_ITEM.match(x) for x in items[-1]):
            items.append([])
        items[-1].append(line)
    pieces, current = [], []
    for item in items:
        if current and prose_chars(nbformat.v4.new_markdown_cell("\n".join(current + item))) > chars:
            pieces.append("\n".join(current))
            current = []
        current += item
    return pieces + ["\n".join(current)]


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


def split_table(markdown: str, budget: int = SLIDE_BUDGET) -> list[str]:
    """``markdown`` cut so that each piece fits ``budget`` pixels: a table taller than that continues in
    another table under the same header; text before a table stays with its first rows, text after it
    with its last."""
    lines = markdown.splitlines()
    pieces, current, header = [], [], []
    for i, line in enumerate(lines):
        is_row = line.strip().startswith("|")
        if is_row and i + 1 < len(lines) and set(lines[i + 1].strip()) <= set("|-: ") and lines[i + 1].strip():
            header = [line, lines[i + 1]]  # a header row and the rule under it
        elif is_row and header and line not in header and current and \
                _markdown_height("\n".join(current + [line])) > budget:
            pieces.append("\n".join(current))
            current = list(header)
        elif not is_row:
            header = []
        current.append(line)
    pieces.append("\n".join(current))
    return pieces


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
        shows_code = bool(cell.source.strip()) and not _source_removed(cell)
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


def _introduces(cell: nbformat.NotebookNode) -> bool:
    """Whether a markdown cell leads into the next one: a line or two ending with a colon, or a heading alone."""
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
