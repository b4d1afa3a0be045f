"""make html / make slides: every notebook rendered, offline, no error cells; slide structure rules."""

import html
import re
from pathlib import Path

import nbformat
import pytest

from specmath.course.export import export_html, export_slides
from specmath.course.slide_pieces import split_markdown
from specmath.course.slide_sizes import SLIDE_BUDGET, cell_height, png_size
from specmath.course.slides import slide_types, with_slide_metadata

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
    assert '<li><a href="../slides/index.html">Slides to present</a></li>' in html_index.read_text(encoding="utf-8")
    assert '<li><a href="../html/index.html">Pages to read</a></li>' in slides_index.read_text(encoding="utf-8")


def test_the_index_pages_list_the_course_in_its_order_in_the_docs_look_and_name_the_article(html_dir, slides_dir):
    from specmath.article import ARTICLE_TITLE, ARTICLE_TITLE_EN
    from specmath.course.index_page import CJK_FONTS
    from specmath.course.plan import COURSE, TRACKS

    for folder, suffix in ((html_dir, ".html"), (slides_dir, ".slides.html")):
        index = (folder / "index.html").read_text(encoding="utf-8")
        assert '<link rel="stylesheet" href="_static/course.css">' in index and not REMOTE.search(index)
        css = (folder / "_static" / "course.css").read_text(encoding="utf-8")
        assert "--color-brand-content: #2757dd" in css and CJK_FONTS in css  # furo's link colour; the CJK fallback
        assert f'<span lang="zh">《{ARTICLE_TITLE}》</span>' in index and ARTICLE_TITLE_EN in index
        # 00 first, then each track in its own order, then the notebooks for both, each once, with its purpose
        linked = re.findall(r'href="(\d\d_[a-z0-9_]+)' + re.escape(suffix) + '"', index)
        tracks = [stem for stems in TRACKS.values() for stem in stems]
        both = [lesson.stem for lesson in COURSE if lesson.stem not in tracks and lesson.stem != "00_index"]
        assert linked == ["00_index", *tracks, *both] and sorted(linked) == [p.stem for p in NOTEBOOKS]
        assert all(html.escape(f"{lesson.purpose}; {lesson.minutes} minutes") in index for lesson in COURSE)


def test_links_between_notebooks_point_at_the_exported_pages():
    from specmath.course.export import link_pages

    body = '<a href="08_explorers.ipynb#1.-The-two-token-world">explorer</a> <a href="https://x.org/a.ipynb">other</a>'
    assert link_pages(body, ".html") == (
        '<a href="08_explorers.html#1.-The-two-token-world">explorer</a> <a href="https://x.org/a.ipynb">other</a>')
    assert 'href="08_explorers.slides.html"' in link_pages(body, ".slides.html")


def _shown_cell(fn):
    from specmath.source_view import show

    view = show(fn)
    cell = nbformat.v4.new_code_cell(f"show({fn.__name__})")
    cell.outputs = [nbformat.v4.new_output("display_data", data={
        "text/html": view._repr_html_(), "text/markdown": view._repr_markdown_(), "text/plain": view.source})]
    return cell


def test_a_long_shown_function_is_cut_between_statements_into_captioned_pieces_that_fit_a_slide():
    import tokenize

    from specmath.course.slide_pieces import split_source
    from specmath.course.slide_sizes import SOURCE_LINES
    from specmath.lm.block_verify import block_stop_probabilities
    from specmath.source_view import source_of

    source = source_of(block_stop_probabilities)
    pieces = split_source(source)
    assert len(source.splitlines()) > SOURCE_LINES and len(pieces) == 2 and "".join(pieces) == source
    assert all(len(p.splitlines()) <= SOURCE_LINES for p in pieces)
    # each piece ends where a statement ends: no string, call or bracket is left open
    for piece in pieces:
        list(tokenize.generate_tokens(iter(piece.splitlines(keepends=True)).__next__))
    assert split_source("x = 1\n") == ["x = 1\n"]
    # a statement longer than a piece stays whole
    long_call = "f(\n" + "    1,\n" * 40 + ")\ny = 2\n"
    assert split_source(long_call, 10) == ["f(\n" + "    1,\n" * 40 + ")\n", "y = 2\n"]

    filled = with_slide_metadata(_notebook(nbformat.v4.new_markdown_cell("# Shown"), _shown_cell(block_stop_probabilities)))
    outputs = [o for c in filled.cells if c.cell_type == "code" for o in c.outputs]
    assert [o["data"]["text/plain"] for o in outputs] == pieces
    assert "(continued)" not in outputs[0]["data"]["text/html"] and "(continued)</div>" in outputs[1]["data"]["text/html"]
    assert all(cell_height(c) <= SLIDE_BUDGET for c in filled.cells)


def test_a_cell_marked_skip_is_left_out_of_the_slides_and_kept_in_the_html_page(tmp_path):
    from specmath.lm.block_verify import block_stop_probabilities

    shown = _shown_cell(block_stop_probabilities)
    shown.metadata["slideshow"] = {"slide_type": "skip"}
    nb = _notebook(nbformat.v4.new_markdown_cell("# Skip"), shown, nbformat.v4.new_code_cell("after()"))
    assert [c.source for c in with_slide_metadata(nb).cells] == ["# Skip", "after()"]
    path = tmp_path / "skip.ipynb"
    nbformat.write(nb, path)
    caption = "specmath.lm.block_verify.block_stop_probabilities"
    assert caption in export_html([path], tmp_path / "html")[0].read_text(encoding="utf-8")
    assert caption not in export_slides([path], tmp_path / "slides")[0].read_text(encoding="utf-8")


def test_a_slide_holds_at_most_slide_prose_characters_and_a_long_list_splits_between_items():
    from specmath.course.slide_pieces import split_list
    from specmath.course.slide_sizes import SLIDE_PROSE, prose_chars

    md = nbformat.v4.new_markdown_cell
    items = "\n".join(f"{i}. " + "word " * 40 for i in range(1, 9))  # eight items of 200 characters
    pieces = split_list("Intro line\n" + items)
    assert len(pieces) > 1 and "\n".join(pieces) == "Intro line\n" + items and pieces[0].startswith("Intro line\n1. ")
    assert all(prose_chars(md(p)) <= SLIDE_PROSE for p in pieces)
    assert split_list("no list " * 200) == ["no list " * 200]
    paragraph = "word " * 100  # 500 characters: two fit the height of a slide (5 lines each), not its prose budget
    nb = _notebook(md("# Title"), md(paragraph), md(paragraph), md(paragraph))
    assert slide_types(nb) == ["slide", "-", "subslide", "subslide"]


def test_a_generated_table_taller_than_a_slide_continues_under_its_header():
    from specmath.course.slide_pieces import split_table

    header = "| term | meaning |\n|---|---|"
    rows = [f"| row {i} | " + "word " * 30 + "|" for i in range(30)]
    pieces = split_table("Before.\n\n" + header + "\n" + "\n".join(rows) + "\n\nAfter.", 400)
    assert len(pieces) >= 3 and pieces[0].startswith("Before.") and pieces[-1].endswith("After.")
    assert all(p.count(header) == 1 for p in pieces)
    assert [line for p in pieces for line in p.splitlines() if line.startswith("| row")] == rows  # every row once, in order


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_slide_of_a_deck_holds_more_prose_than_a_slide_is_read_in(path):
    from specmath.course.export import remove_tagged
    from specmath.course.slide_sizes import SHORT_PROSE, SLIDE_PROSE, prose_chars

    nb = with_slide_metadata(remove_tagged(nbformat.read(path, as_version=4)))
    slides = []
    for cell in nb.cells:
        kind = cell.metadata["slideshow"]["slide_type"]
        if kind in ("slide", "subslide") or not slides:
            slides.append([])
        if kind not in ("skip", "notes"):
            slides[-1].append(prose_chars(cell))
    # more than SLIDE_PROSE only where one paragraph, after at most a short introduction, is that long
    heavy = [(i, sum(s)) for i, s in enumerate(slides) if sum(s) > SLIDE_PROSE and sum(s) - max(s) > SHORT_PROSE]
    assert not heavy, f"{path.name}: slides with more than {SLIDE_PROSE} characters of prose: {heavy}"


def test_the_how_to_page_states_the_slide_rules_as_slides_py_sets_them():
    from specmath.course.slide_sizes import CODE_FONT, SLIDE_PROSE, SOURCE_LINES

    page = re.sub(r"\s+", " ", (ROOT / "docs" / "how-to" / "present-the-course.md").read_text(encoding="utf-8"))
    for words in (f"printed output are set at {CODE_FONT} px ({CODE_FONT * 0.8:g} px on that projector)",
                  f"longer than {SOURCE_LINES} lines", f"at most {SLIDE_PROSE} characters of prose",
                  f"sets no code below {CODE_FONT} px", "fonts-noto-cjk"):
        assert words in page, words
