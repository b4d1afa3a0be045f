"""``specmath.show(fn)``: the source of a program, syntax-highlighted, wherever a notebook is read.

The notebooks prove programs that live in the library (``speculative_step``, ``rand7_basic``, the
coin, a round). A student should read the ten lines before the one-line proof, so a notebook cell
calls ``show(speculative_step)`` and the cell's output is the function's source.

The returned object carries three representations, and each reader picks the one it renders:

* ``text/html``: Pygments HTML with *inline* styles (no stylesheet needed), so JupyterLab, the
  static HTML export and the reveal.js slides all show the same colours; long lines wrap instead
  of running off a slide (``white-space: pre-wrap``);
* ``text/markdown``: a fenced ``python`` block (renderers that prefer Markdown highlight it);
* ``text/plain``: the bare source (a terminal, ``print``).

Notation of the programs shown: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).
"""

from __future__ import annotations

import html
import inspect
import textwrap
from collections.abc import Callable

__all__ = ["show", "ShownSource", "source_of"]

#: the box around the code: a light frame, wrapped long lines, the notebook's monospace font
_BOX_STYLE = (
    "background: #f7f7f7; border: 1px solid #ddd; border-radius: 3px; padding: 6px 10px; margin: 4px 0;"
    " font-size: 13px; line-height: 1.35; white-space: pre-wrap; overflow-wrap: anywhere;"
    " font-family: var(--jp-code-font-family, monospace);"
)


def source_of(fn: Callable) -> str:
    """The source text of a function, class or module, dedented (``ValueError`` if Python has none)."""
    try:
        source = inspect.getsource(fn)
    except (TypeError, OSError) as error:
        raise ValueError(f"no Python source for {fn!r}: {error}") from None
    return textwrap.dedent(source).rstrip() + "\n"


class ShownSource:
    """A program's source with HTML, Markdown and plain-text representations (see the module doc)."""

    def __init__(self, source: str, title: str):
        self.source = source
        self.title = title

    def _highlighted(self) -> str:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer

        # noclasses: inline colours, so the export needs no Pygments stylesheet of its own
        formatter = HtmlFormatter(noclasses=True, nowrap=True, style="default")
        return highlight(self.source, PythonLexer(), formatter)

    def _repr_html_(self) -> str:
        caption = f'<div style="font-size: 12px; color: #555;">{html.escape(self.title)}</div>'
        return f'<div class="specmath-source">{caption}<pre style="{_BOX_STYLE}">{self._highlighted()}</pre></div>'

    def _repr_markdown_(self) -> str:
        return f"*{self.title}*\n\n```python\n{self.source}```\n"

    def __repr__(self) -> str:
        return self.source

    def __str__(self) -> str:
        return self.source


def show(fn: Callable) -> ShownSource:
    """Display the source of ``fn`` (a function, class or module) in a notebook, highlighted.

    Returns a ``ShownSource``: the last expression of a cell, or ``IPython.display.display(show(fn))``.
    """
    name = getattr(fn, "__qualname__", getattr(fn, "__name__", repr(fn)))
    module = getattr(fn, "__module__", None) or getattr(fn, "__name__", "")
    title = f"{module}.{name}" if module and module != name else name
    return ShownSource(source_of(fn), title)
