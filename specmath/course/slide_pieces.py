"""Cutting what is too long for one slide into pieces: paragraphs, list items, statements, table rows.

``split_markdown`` cuts a text at its blank lines (never inside a code fence or display math),
``split_list`` a long list between its items, ``split_source`` a function's source between its
statements (found with ``tokenize``, so never inside a string or a call), ``split_table`` a table
between its rows under a repeated header. ``specmath.course.slides`` decides when to use them.
"""

from __future__ import annotations

import io
import math
import re
import tokenize

import nbformat

from specmath.course.slide_sizes import SLIDE_BUDGET, SLIDE_PROSE, SOURCE_LINES, markdown_height, prose_chars
from specmath.validation import check_integer

__all__ = ["split_markdown", "split_list", "split_source", "split_table"]


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
                markdown_height("\n".join(current + [line])) > budget:
            pieces.append("\n".join(current))
            current = list(header)
        elif not is_row:
            header = []
        current.append(line)
    pieces.append("\n".join(current))
    return pieces
