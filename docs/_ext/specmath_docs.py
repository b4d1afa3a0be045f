"""Sphinx glue for specmath's site: plain-text formulas in docstrings, the command line, offline MathJax.

* specmath's docstrings are plain text with formulas, read here as their authors lay them out:
  an indented block after a paragraph (a formula, a table of definitions) is shown as written, line
  by line, rather than reflowed as a reStructuredText block quote (a ``::`` line is put before it);
  and ``|a(x) - b(x)|`` is an absolute value, ``E[accepted | block]`` a condition, whereas
  reStructuredText reads ``|...|`` as a substitution, so every bar outside a literal (````...````, a
  ``::`` block, a ``>>>`` example) is escaped: a bar stays a bar.
* ``.. specmath-modules:: PACKAGE`` documents every module of a package (the package first, then
  its modules in name order), each under its own heading, so a module added to the package appears
  in the reference without an edit here; ``:only:`` / ``:exclude:`` pick modules by name. A package
  with ``__all__`` is documented by its docstring and a list of its public names, each linked where
  it is defined, so no object is documented twice. A module whose docstring starts with "Internal:"
  (``is_internal``) is left out, and documented only where the directive says ``:internal:`` (the
  internals page), which documents nothing else.
* ``.. specmath-cli::`` renders ``specmath --help`` and every subcommand's ``--help`` from
  ``specmath.cli.build_parser()``, so the reference cannot drift from the parser.
* The course notebooks (``notebooks/NN_name.ipynb``) are copied into ``docs/tutorials/`` when a build
  starts (a copy per build, git-ignored, that the build refreshes; a notebook that is gone is removed).
  Not a symbolic link: Sphinx resolves links between documents through ``Path.resolve()``
  (``BuildEnvironment.relfn2path``), so a notebook reached through a link would resolve its links to
  the other notebooks (``08_explorers.ipynb#1.-The-two-token-world``) outside the source folder.
* MathJax 2.7 (``specmath.course.export.locate_mathjax``) is copied to ``_static/mathjax`` of the
  built HTML, where ``mathjax_path`` in conf.py points.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
import re
import shutil
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

#: a double-backquoted literal, kept as it is
_LITERAL = re.compile(r"``.+?``")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _escape_bars(text: str) -> str:
    """``text`` with every ``|`` outside a double-backquoted literal escaped as ``\\|``."""
    out, start = [], 0
    for match in _LITERAL.finditer(text):
        out.append(text[start:match.start()].replace("|", "\\|"))
        out.append(match.group())
        start = match.end()
    out.append(text[start:].replace("|", "\\|"))
    return "".join(out)


def escape_bars_in_docstring(lines: list[str]) -> list[str]:
    """Escape the bars of a docstring's prose lines, leaving ``::`` literal blocks and ``>>>`` examples as written."""
    result: list[str] = []
    opener: int | None = None  # indent of a line ending in "::" whose block has not started yet
    literal: int | None = None  # indent of the line that opened the literal block we are in
    for line in lines:
        indent = _indent(line)
        if line.strip():
            if literal is not None and indent <= literal:
                literal = None  # the block ended at the first line indented no deeper than its opener
            if opener is not None:
                literal = opener if indent > opener else None
                opener = None
        if literal is not None or line.lstrip().startswith(">>>"):
            result.append(line)
        else:
            result.append(_escape_bars(line))
        if line.rstrip().endswith("::"):
            opener = indent
    return result


def jupyter_heading_slug(text: str) -> str:
    """The anchor Jupyter gives a heading: its text with spaces as '-' ("1. The step" -> "1.-The-step").

    The notebooks link to each other's sections by these anchors (``08_explorers.ipynb#1.-The-two-token-world``),
    as JupyterLab and nbconvert's HTML do; with the same slugs in the site, the same links work there.
    """
    return re.sub(r"\s+", "-", text.strip())


#: the start of a list item: its content is indented past the marker
_BULLET = re.compile(r"^(\s*)([*+-]|\d+[.)]|#\.)\s+")


def indented_blocks_as_written(lines: list[str]) -> list[str]:
    """Put a ``::`` line before every indented block that follows a paragraph after a blank line.

    reStructuredText would read such a block as a block quote and reflow it; the docstrings mean a
    formula or an aligned table, so it becomes a literal block. Left alone: a block the paragraph
    already opens with ``::``, a directive's content, a list item's own continuation, a ``>>>`` example.
    """
    result: list[str] = []
    paragraph: str | None = None  # the first line of the paragraph before the current blank lines
    last: str | None = None  # the last non-blank line
    blank_since_paragraph = False
    for line in lines:
        if not line.strip():
            blank_since_paragraph = paragraph is not None
            result.append(line)
            continue
        if blank_since_paragraph and paragraph is not None and last is not None:
            bullet = _BULLET.match(paragraph)
            content = bullet.end() if bullet else _indent(paragraph)
            opens_block = (_indent(line) > content and not last.rstrip().endswith("::")
                           and not paragraph.lstrip().startswith("..") and not line.lstrip().startswith(">>>"))
            if opens_block:
                while result and not result[-1].strip():
                    result.pop()
                result += ["", " " * content + "::", ""]
        if blank_since_paragraph or paragraph is None:
            paragraph = line
        blank_since_paragraph = False
        last = line
        result.append(line)
    return result


def _process_docstring(app, what, name, obj, options, lines: list[str]) -> None:
    lines[:] = escape_bars_in_docstring(indented_blocks_as_written(lines))


def package_modules(package: str) -> list[str]:
    """The package and its direct modules (not subpackages' modules), files with no code left out."""
    pkg = importlib.import_module(package)
    init = getattr(pkg, "__file__", None)  # None for a folder without __init__.py
    names = [package] if init and Path(init).read_text().strip() else []
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
        if info.ispkg or info.name.startswith("_"):
            continue
        spec = importlib.util.find_spec(f"{package}.{info.name}")
        if spec and spec.origin and Path(spec.origin).read_text().strip():
            names.append(f"{package}.{info.name}")
    return names


#: how a module's docstring says it is not public API: its first line starts with this
INTERNAL_MARK = "Internal:"


def is_internal(name: str) -> bool:
    """Whether module ``name`` is internal: its docstring, or its package's, starts with ``INTERNAL_MARK``."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        doc = importlib.import_module(".".join(parts[:i])).__doc__ or ""
        if doc.lstrip().startswith(INTERNAL_MARK):
            return True
    return False


def _public_names(module) -> list[str]:
    """``:py:obj:`` references to each name of ``module.__all__``, at the module that defines it."""
    refs = []
    for name in module.__all__:
        obj = getattr(module, name)
        home = getattr(obj, "__module__", None)
        qualname = getattr(obj, "__qualname__", None)
        if home and qualname and home.startswith("specmath") and home != module.__name__:
            refs.append(f":py:obj:`{name} <{home}.{qualname}>`")
        else:
            refs.append(f"``{name}``")
    return refs


def module_rst(name: str) -> list[str]:
    """reStructuredText for one module: a heading and its automodule (with its public names for a package)."""
    module = importlib.import_module(name)
    lines = [name, "-" * len(name), "", f".. automodule:: {name}"]
    if hasattr(module, "__path__") and hasattr(module, "__all__"):
        lines += ["   :ignore-module-all:", "", "Public names: " + ", ".join(_public_names(module)) + "."]
    lines.append("")
    return lines


def _names(argument: str) -> list[str]:
    return [n.strip() for n in argument.replace(",", " ").split() if n.strip()]


class SpecmathModules(SphinxDirective):
    """Every module of a package, each under its own heading (see the module docstring)."""

    required_arguments = 1
    option_spec = {"only": _names, "exclude": _names, "internal": lambda argument: True}

    def run(self) -> list[nodes.Node]:
        package = self.arguments[0]
        names = package_modules(package)
        if "only" in self.options:
            wanted = {f"{package}.{n}" if n != package else n for n in self.options["only"]}
            unknown = wanted - set(names)
            if unknown:
                raise self.error(f"specmath-modules: no module {sorted(unknown)} in {package}")
            names = [n for n in names if n in wanted]
        excluded = {f"{package}.{n}" for n in self.options.get("exclude", [])}
        internal = "internal" in self.options
        names = [n for n in names if n not in excluded and is_internal(n) == internal]
        lines = [line for name in names for line in module_rst(name)]
        container = nodes.section()
        container.document = self.state.document
        nested_parse_with_titles(self.state, StringList(lines, source=f"<specmath-modules {package}>"), container)
        return container.children


class SpecmathCli(SphinxDirective):
    """``specmath --help`` and each subcommand's ``--help``, one literal block per command under its heading."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        from specmath.cli import build_parser

        previous = os.environ.get("COLUMNS")
        os.environ["COLUMNS"] = "86"  # argparse wraps at the terminal's width: the width of a page's code block
        try:
            parser = build_parser()
            subparsers = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
            pages = [("specmath", parser.format_help())]
            pages += [(f"specmath {name}", sub.format_help()) for name, sub in subparsers.choices.items()]
        finally:
            if previous is None:
                os.environ.pop("COLUMNS", None)
            else:
                os.environ["COLUMNS"] = previous
        result = []
        for title, text in pages:
            section = nodes.section(ids=[nodes.make_id(title)])
            section += nodes.title(text=title)
            section += nodes.literal_block(text, text, language="text")
            result.append(section)
        return result


def sync_notebooks(source: Path, target: Path) -> list[str]:
    """Copy every ``NN_name.ipynb`` of ``source`` into ``target`` where it differs; remove copies of
    notebooks that no longer exist. Returns the names copied."""
    wanted = {p.name: p for p in sorted(source.glob("[0-9][0-9]_*.ipynb"))}
    for stale in target.glob("[0-9][0-9]_*.ipynb"):
        if stale.name not in wanted:
            stale.unlink()
    copied = []
    for name, path in wanted.items():
        copy = target / name
        if not copy.exists() or copy.read_bytes() != path.read_bytes():
            shutil.copy2(path, copy)
            copied.append(name)
    return copied


def _sync_notebooks(app: Sphinx, config) -> None:
    srcdir = Path(app.srcdir)
    sync_notebooks(srcdir.parent / "notebooks", srcdir / "tutorials")


def _copy_mathjax(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    from specmath.course.export import locate_mathjax

    target = Path(app.outdir) / "_static" / "mathjax"
    # English pages need no translations; everything else MathJax may load lazily
    shutil.copytree(locate_mathjax(), target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("localization"))


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", _sync_notebooks)
    app.connect("autodoc-process-docstring", _process_docstring)
    app.connect("build-finished", _copy_mathjax)
    app.add_directive("specmath-cli", SpecmathCli)
    app.add_directive("specmath-modules", SpecmathModules)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
