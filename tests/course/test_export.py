"""make html / make slides: every notebook rendered, offline, no error cells; slide structure rules."""

import re
from pathlib import Path

import nbformat
import pytest

from specmath.course.export import export_html, export_slides
from specmath.course.slides import SLIDE_BUDGET, cell_height, png_size, slide_types, split_markdown, with_slide_metadata

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


def _png(width: int, height: int) -> str:
    """A base64 PNG header of the given size (enough for ``png_size``; the slide rules never decode pixels)."""
    import base64
    import struct

    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">II", width, height)
                            + b"\x08\x06\x00\x00\x00").decode()


def _figure_cell(source: str, width: int = 1000, height: int = 800):
    cell = nbformat.v4.new_code_cell(source)
    cell.outputs = [nbformat.v4.new_output("display_data", data={"image/png": _png(width, height), "text/plain": "<Figure>"})]
    return cell


def test_figure_heights_come_from_the_png_header_capped_as_the_template_caps_them():
    assert png_size(_png(640, 480)) == (640, 480)
    small, tall = _figure_cell("", 600, 300), _figure_cell("", 600, 3000)
    small.source = tall.source = ""
    assert cell_height(small) < cell_height(tall) <= SLIDE_BUDGET


def test_headings_open_slides_overflow_opens_subslides_and_explicit_metadata_wins():
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    explicit = md("a note")
    explicit.metadata["slideshow"] = {"slide_type": "notes"}
    nb = _notebook(md("# Title"), code("x = 1"), md("## Part"), code("\n" * 20), _figure_cell("plot()"), explicit,
                   md("### small heading"))
    assert slide_types(nb) == ["slide", "-", "slide", "-", "subslide", "notes", "-"]
    filled = with_slide_metadata(nb)
    assert [c.metadata["slideshow"]["slide_type"] for c in filled.cells] == slide_types(nb)
    assert "slideshow" not in nb.cells[1].metadata  # the input notebook is not modified
    with pytest.raises(ValueError, match="budget"):
        slide_types(nb, budget=0)


def test_a_short_introduction_moves_with_the_cell_it_introduces_and_a_heading_keeps_its_cell():
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    # a 14-line cell fills the first slide; the figure cell after "The static call:" does not fit under it, so the
    # introduction moves to the next slide with it; the figure under "## Part" overflows, but a heading keeps its cell
    nb = _notebook(md("# Title"), code("\n" * 14), md("The static call:"), _figure_cell("\n" * 4, 1000, 400),
                   md("## Part"), _figure_cell("\n" * 8, 1000, 400))
    assert slide_types(nb) == ["slide", "-", "subslide", "-", "slide", "-"]


def test_long_text_splits_at_paragraphs_and_before_headings_and_tall_output_continues_on_the_next_slide():
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    assert split_markdown("one\ntwo\n\n```\ncode\n\nmore\n```\n\n$$\nx\n\ny\n$$\n\nend") == [
        "one\ntwo", "```\ncode\n\nmore\n```", "$$\nx\n\ny\n$$", "end"]
    printed = code("for i in range(90): print(i)")
    printed.outputs = [nbformat.v4.new_output("stream", name="stdout", text="".join(f"line {i}\n" for i in range(90)))]
    long_text = "\n\n".join(f"Paragraph {i}: " + "words " * 60 for i in range(8))
    nb = _notebook(md("# Title\n\nShort text.\n\n## Summary\n\n- a point"), md(long_text), printed)
    filled = with_slide_metadata(nb)
    kinds = [c.metadata["slideshow"]["slide_type"] for c in filled.cells]
    texts = [c.source for c in filled.cells if c.cell_type == "markdown"]
    assert texts[:2] == ["# Title\n\nShort text.", "## Summary\n\n- a point"] and kinds[:2] == ["slide", "slide"]
    assert len(texts) == 2 + 8  # the long text: one cell per paragraph
    pieces = [c for c in filled.cells if c.cell_type == "code"]
    assert len(pieces) >= 3 and pieces[0].source == printed.source and all(not p.source for p in pieces[1:])
    assert all(p.metadata["transient"] == {"remove_source": True} for p in pieces[1:])
    assert "".join(o["text"] for p in pieces for o in p.outputs) == printed.outputs[0]["text"]  # every line, once, in order
    assert all(cell_height(c) <= SLIDE_BUDGET for c in filled.cells)
    assert all(kinds[filled.cells.index(p)] == "subslide" for p in pieces[1:])


def test_tags_remove_cells_code_or_output_from_the_html_pages_and_the_slides(tmp_path):
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    cells = [md("# Tags"), code("import setup_wall"), code("draw_the_figure()"), code("shown_code()"), code("plain_cell()")]
    for cell, tag in zip(cells[1:4], ["remove-cell", "hide-input", "remove-output"], strict=True):
        cell.metadata["tags"] = [tag]
    for cell, text in zip(cells[1:], ["SETUP-OUT", "FIGURE-OUT", "CODE-OUT", "PLAIN-OUT"], strict=True):
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text + "\n")]
    path = tmp_path / "tags.ipynb"
    nbformat.write(_notebook(*cells), path)
    for page in (export_html([path], tmp_path / "html")[0], export_slides([path], tmp_path / "slides")[0]):
        text = page.read_text(encoding="utf-8")
        assert "setup_wall" not in text and "SETUP-OUT" not in text  # remove-cell: gone
        assert "draw_the_figure" not in text and "FIGURE-OUT" in text  # hide-input: output only
        assert "shown_code" in text and "CODE-OUT" not in text  # remove-output: code only
        assert "plain_cell" in text and "PLAIN-OUT" in text


def test_each_index_page_links_the_other_exports_index_page(tmp_path):
    path = ROOT / "notebooks" / "00_index.ipynb"
    html_index = export_html([path], tmp_path / "html")[0].with_name("index.html")
    slides_index = export_slides([path], tmp_path / "slides")[0].with_name("index.html")
    for index in (html_index, slides_index):
        links = re.findall(r'href="(\.\./[^"]+)"', index.read_text(encoding="utf-8"))
        assert links and all((index.parent / link).resolve().is_file() for link in links), links
    assert 'href="../slides/index.html">To present them: the slides</a>' in html_index.read_text(encoding="utf-8")


def test_links_between_notebooks_point_at_the_exported_pages():
    from specmath.course.export import link_pages

    body = '<a href="08_explorers.ipynb#1.-The-two-token-world">explorer</a> <a href="https://x.org/a.ipynb">other</a>'
    assert link_pages(body, ".html") == (
        '<a href="08_explorers.html#1.-The-two-token-world">explorer</a> <a href="https://x.org/a.ipynb">other</a>')
    assert 'href="08_explorers.slides.html"' in link_pages(body, ".slides.html")
