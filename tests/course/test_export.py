"""make html / make slides: every notebook rendered, offline, no error cells; slide structure rules."""

import re
from pathlib import Path

import nbformat
import pytest

from specmath.course.export import export_html, export_slides
from specmath.course.slides import FIGURE_LINES, slide_types, with_slide_metadata

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
# a src/href to another host would be fetched when the page is viewed
REMOTE = re.compile(r"""<(?:script|link|img)[^>]+(?:src|href)=["']?(?:https?:)?//""", re.I)


@pytest.fixture(scope="module")
def html_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("html")
    export_html(NOTEBOOKS, out)
    return out


@pytest.fixture(scope="module")
def slides_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("slides")
    export_slides(NOTEBOOKS, out)
    return out


def test_html_export_writes_one_offline_page_per_notebook_with_figures_and_no_tracebacks(html_dir):
    index = (html_dir / "index.html").read_text(encoding="utf-8")
    assert (html_dir / "_static" / "mathjax" / "MathJax.js").is_file()
    for nb_path in NOTEBOOKS:
        page = html_dir / f"{nb_path.stem}.html"
        text = page.read_text(encoding="utf-8")
        assert f'href="{page.name}"' in index
        assert not REMOTE.search(text), f"{page.name} loads something from the network"
        assert "_static/mathjax/MathJax.js" in text
        assert "Traceback (most recent call last)" not in text
        nb = nbformat.read(nb_path, as_version=4)
        figures = sum("image/png" in o.get("data", {}) for c in nb.cells for o in c.get("outputs", []))
        assert text.count("<img") >= figures, f"{page.name}: {figures} figures in the notebook, fewer <img> in the page"


def test_slides_export_writes_reveal_decks_with_local_reveal_js_and_several_slides_each(slides_dir):
    assert (slides_dir / "_static" / "reveal.js" / "dist" / "reveal.js").is_file()
    assert (slides_dir / "_static" / "reveal.js" / "plugin" / "notes" / "notes.js").is_file()
    for nb_path in NOTEBOOKS:
        text = (slides_dir / f"{nb_path.stem}.slides.html").read_text(encoding="utf-8")
        assert not REMOTE.search(text)
        assert '<script src="_static/reveal.js/dist/reveal.js">' in text and "Reveal.initialize" in text
        # one <section> per slide (nested ones for vertical subslides)
        assert text.count("<section") >= 4, f"{nb_path.name} presents as fewer than 4 slides"
        assert "Traceback (most recent call last)" not in text


def _notebook(*cells, executed=True):
    nb = nbformat.v4.new_notebook(cells=list(cells))
    for i, c in enumerate(nb.cells):
        if c.cell_type == "code" and executed:
            c.execution_count = i + 1
    return nb


def test_export_refuses_a_notebook_with_an_error_output(tmp_path):
    cell = nbformat.v4.new_code_cell("1/0")
    cell.outputs = [nbformat.v4.new_output("error", ename="ZeroDivisionError", evalue="division by zero", traceback=[])]
    path = tmp_path / "bad.ipynb"
    nbformat.write(_notebook(nbformat.v4.new_markdown_cell("# Bad"), cell), path)
    with pytest.raises(ValueError, match="error outputs in code cells \\[1\\]"):
        export_html([path], tmp_path / "out")


def test_export_refuses_an_unexecuted_notebook_and_an_empty_list(tmp_path):
    path = tmp_path / "raw.ipynb"
    nbformat.write(_notebook(nbformat.v4.new_code_cell("x = 1"), executed=False), path)
    with pytest.raises(ValueError, match="not executed"):
        export_slides([path], tmp_path / "out")
    with pytest.raises(ValueError, match="no notebooks"):
        export_html([], tmp_path / "out")


def test_headings_open_slides_overflow_opens_subslides_and_explicit_metadata_wins():
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    figure = code("plot()")
    figure.outputs = [nbformat.v4.new_output("display_data", data={"image/png": "AAAA", "text/plain": "<Figure>"})]
    explicit = md("a note")
    explicit.metadata["slideshow"] = {"slide_type": "notes"}
    nb = _notebook(md("# Title"), code("x = 1"), md("## Part"), code("\n" * 20), figure, explicit, md("### small heading"))
    assert FIGURE_LINES > 5
    assert slide_types(nb) == ["slide", "-", "slide", "-", "subslide", "notes", "-"]
    filled = with_slide_metadata(nb)
    assert [c.metadata["slideshow"]["slide_type"] for c in filled.cells] == slide_types(nb)
    assert "slideshow" not in nb.cells[1].metadata  # the input notebook is not modified
    with pytest.raises(ValueError, match="budget"):
        slide_types(nb, budget=0)


def test_a_short_introduction_moves_with_the_cell_it_introduces_and_an_intro_only_slide_keeps_its_cell():
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell

    def tall():
        cell = code("\n" * 14)
        cell.outputs = [nbformat.v4.new_output("display_data", data={"image/png": "AAAA", "text/plain": "<Figure>"})]
        return cell  # 15 source lines + a figure: more than a slide

    nb = _notebook(md("# Title"), code("\n" * 14), md("The static call:"), tall(), md("## Part"), tall())
    assert slide_types(nb) == ["slide", "-", "subslide", "-", "slide", "-"]


def test_links_between_notebooks_point_at_the_exported_pages():
    from specmath.course.export import link_pages

    body = '<a href="08_explorers.ipynb#1.-The-two-token-world">explorer</a> <a href="https://x.org/a.ipynb">other</a>'
    assert link_pages(body, ".html") == (
        '<a href="08_explorers.html#1.-The-two-token-world">explorer</a> <a href="https://x.org/a.ipynb">other</a>')
    assert 'href="08_explorers.slides.html"' in link_pages(body, ".slides.html")
