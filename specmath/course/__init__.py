"""Internal: specmath.course: the notebooks as a course: static HTML and reveal.js slides, built offline.

``export`` turns the executed notebooks into ``_build/html`` and ``_build/slides`` with local
copies of MathJax (from the PyPI package ``jupyter-server-mathjax``) and reveal.js (from
``sphinx-revealjs``), so nothing is fetched from a CDN when the pages are viewed.

Layer 5 (audits and views) of the layers in docs/explanation/architecture.md: imports the layers
before it and ``specmath.figures``.
"""

from specmath.course.export import export_html, export_slides, locate_mathjax, locate_reveal

__all__ = ["export_html", "export_slides", "locate_mathjax", "locate_reveal"]
