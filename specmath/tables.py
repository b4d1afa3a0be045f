"""Tables as text: one renderer for the Markdown tables of the docs and the aligned columns of the terminal.

Every table specmath prints or writes goes through these two functions, so a table's layout is decided
once::

    markdown_table(["engine", "verdict"], [["specmath", "PASS"]])
    # | engine | verdict |
    # |---|---|
    # | specmath | PASS |

    text_table(["engine", "verdict"], [["specmath", "PASS"]])
    # engine    verdict
    # specmath  PASS

Cells are written with ``str``; a caller formats its numbers first (the number of digits is part of
what a table says).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from specmath.validation import InvalidArgument

__all__ = ["markdown_table", "text_table"]

#: how a text column is aligned: "<" padded on the right, ">" padded on the left
ALIGNMENTS = ("<", ">")


def _cells(header: Sequence[object], rows: Iterable[Sequence[object]]) -> list[list[str]]:
    table = [[str(cell) for cell in header]] + [[str(cell) for cell in row] for row in rows]
    for i, row in enumerate(table[1:], start=1):
        if len(row) != len(table[0]):
            raise InvalidArgument(f"table row {i} has {len(row)} cells, the header {len(table[0])}: {row!r}")
    return table


def markdown_table(header: Sequence[object], rows: Iterable[Sequence[object]], *, escape: bool = False) -> str:
    """A GitHub Markdown table: the header line, the ``|---|`` rule, one line per row.

    ``escape``: write a ``|`` inside a cell as ``\\|`` (else it would end the cell); off for cells that
    hold Markdown of their own (links, code) the caller has checked.
    """
    header_cells, *body = _cells(header, rows)
    if escape:
        body = [[cell.replace("|", "\\|") for cell in row] for row in body]
    lines = ["| " + " | ".join(header_cells) + " |", "|" + "---|" * len(header_cells)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in body])


def text_table(header: Sequence[object], rows: Iterable[Sequence[object]], *, align: str | Sequence[str] = "<",
               gap: str = "  ", indent: str = "") -> str:
    """Columns padded to their widest cell, ``gap`` between them, each line after ``indent``, trailing spaces dropped.

    ``align``: "<" (left) or ">" (right), for every column or one per column.
    """
    table = _cells(header, rows)
    columns = len(table[0])
    aligns = [align] * columns if isinstance(align, str) else list(align)
    if len(aligns) != columns or any(a not in ALIGNMENTS for a in aligns):
        raise InvalidArgument(f"align must be one of {ALIGNMENTS} or one of them per column ({columns}), got {align!r}")
    widths = [max(len(row[i]) for row in table) for i in range(columns)]
    return "\n".join(
        (indent + gap.join(cell.ljust(w) if a == "<" else cell.rjust(w)
                           for cell, w, a in zip(row, widths, aligns, strict=True))).rstrip()
        for row in table)
