"""Sphinx configuration of specmath's documentation site (``make docs``: offline, warnings are errors).

The site is organised as tutorials (the course notebooks), how-to guides, explanation, reference
(the public API from its docstrings, and the command line from its parser) and measurements (dated
notes: the command, the commit, the machine, every run).

* Notebooks are rendered by myst-nb from their committed outputs and never executed here
  (``nb_execution_mode = "off"``): ``make notebooks`` executes them, the site shows what they show.
  Each build copies them into ``docs/tutorials/`` first (git-ignored; see ``_ext/specmath_docs.py``
  for why a copy and not a symbolic link), so the site always shows the notebooks as committed.
* Math (``$...$`` in notebooks and pages) is typeset by MathJax 2.7 from the PyPI package
  ``jupyter-server-mathjax``, copied into the built site, as ``make html`` does for the course:
  nothing is fetched when a page is viewed.
* ``docs/_ext/specmath_docs.py`` reads docstrings as the plain text they are written in and renders
  ``specmath --help`` for every subcommand.
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
# this checkout's specmath (not an installed copy elsewhere), and the local extension
sys.path[:0] = [str(ROOT), str(DOCS / "_ext")]

from specmath.course.export import MATHJAX_CONFIG  # noqa: E402

project = "specmath"
author = "the specmath authors"
copyright = "the specmath authors, MIT licence"
release = version = "0.1.0"

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "specmath_docs",
]

root_doc = "index"
exclude_patterns = ["_build", "**/.ipynb_checkpoints", "Thumbs.db", ".DS_Store"]
# the notebooks' jupytext pairs (NN_name.py) sit beside them; Sphinx reads only these suffixes
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}

# -- notebooks: rendered from committed outputs, never executed ----------------------------------
nb_execution_mode = "off"
# the notebooks print Markdown tables and links (notebook 00's course plan) as text/markdown outputs
nb_render_markdown_format = "myst"
# widgets need a live kernel; each explorer is followed by a static call whose output is shown
nb_mime_priority_overrides = [("html", "application/vnd.jupyter.widget-view+json", None)]

myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# the anchors Jupyter gives headings, which the notebooks' links to each other's sections use
myst_heading_slug_func = "specmath_docs.jupyter_heading_slug"

# -- math, offline ----------------------------------------------------------------------------------
mathjax_path = f"mathjax/MathJax.js?config={MATHJAX_CONFIG}"
# Sphinx writes math as \(...\) and \[...\] inside elements of class "math"; MathJax 2 typesets exactly those
# (and the local MathJax ships only the STIX-Web fonts: use them, as the course's HTML export does)
mathjax2_config = {
    "tex2jax": {"inlineMath": [["\\(", "\\)"]], "displayMath": [["\\[", "\\]"]], "processEscapes": True,
                "ignoreClass": "document", "processClass": "math"},
    "HTML-CSS": {"availableFonts": [], "preferredFont": None, "webFont": "STIX-Web", "imageFont": None,
                 "linebreaks": {"automatic": True}},
}
# myst-parser would mark pages "mathjax_ignore" and configure MathJax 3 only; the classes above suffice
myst_update_mathjax = False

# -- reference ----------------------------------------------------------------------------------------
autodoc_default_options = {"members": True, "member-order": "bysource", "show-inheritance": True}
autodoc_typehints = "signature"
autodoc_typehints_format = "short"
python_use_unqualified_type_names = True
# literal blocks without a language (the docstrings' formulas) are shown as plain text
highlight_language = "text"
autodoc_preserve_defaults = True
autosummary_generate = False
# annotations name classes by their short names (Law, Fraction); they are not cross-reference targets
nitpicky = False

# -- HTML -----------------------------------------------------------------------------------------------
html_theme = "furo"
html_title = "specmath"
html_static_path = ["_static"]
html_css_files = ["specmath.css"]
html_theme_options = {"navigation_with_keys": True, "top_of_page_buttons": []}
html_show_sourcelink = False
html_copy_source = False
