"""make notebooks writes notebooks that a second run reproduces byte for byte (nothing timed, dated or random);
make demo writes only under _build/ and says what it did."""

from fractions import Fraction

import nbformat
from nbformat.v4 import new_code_cell, new_notebook, new_output

from specmath.article import ARTICLE_TITLE, ARTICLE_TITLE_EN
from specmath.course.demo import SLOW_FIGURES, Contradiction, DemoSummary, contradictions, exact_text
from specmath.course.execute import clean_for_commit


def _executed():
    plain = new_code_cell("print(1)", metadata={"execution": {"iopub.execute_input": "2026-01-01T00:00:00Z"}})
    plain.outputs = [new_output("stream", name="stdout", text="1\n"), new_output("stream", name="stdout", text="2\n"),
                     new_output("stream", name="stderr", text="warning\n")]
    widget = new_code_cell("display(slider)")
    widget.outputs = [new_output("display_data", data={"application/vnd.jupyter.widget-view+json": {"model_id": "a1b2"},
                                                         "text/plain": "IntSlider(value=3)"})]
    timed = new_code_cell("t = forward_cost()", metadata={"tags": ["machine-dependent"]})
    timed.outputs = [new_output("stream", name="stdout", text="1 token: 3.21 ms\n")]
    nb = new_notebook(cells=[plain, widget, timed], metadata={"widgets": {"state": {"a1b2": {}}}})
    return nb


def test_clean_for_commit_drops_timestamps_widget_state_and_timings_but_keeps_seeded_outputs():
    nb = _executed()
    clean, taken = clean_for_commit(nb)
    assert "widgets" not in clean.metadata
    assert all("execution" not in c.metadata for c in clean.cells)
    # printed text arrives in timing-dependent pieces: one output per stream run, whatever the split
    assert [(o.name, o.text) for o in clean.cells[0].outputs] == [("stdout", "1\n2\n"), ("stderr", "warning\n")]
    assert clean.cells[1].outputs == []  # a live slider panel: nothing a static page can show
    assert clean.cells[2].outputs == [] and taken == {2: "1 token: 3.21 ms\n"}
    # the executed notebook itself is untouched (the exports show it whole)
    assert nb.cells[2].outputs and "widgets" in nb.metadata
    nbformat.validate(clean)


def test_the_summary_is_one_block_naming_each_part_of_the_job():
    wrong = [Contradiction("a bound", "< 0.3%", "2/625 = 0.32%"), Contradiction("a mean", "≈ 2.21", "5816/2625 = 2.216")]
    s = DemoSummary(notebooks=[("00_index", 3.0), ("07_real_models", 40.0)], figures=13, claims=30,
                    claims_agree=28, contradicted=wrong, samplers=18, samplers_lossless=18,
                    symbolic_cases={2: 3, 3: 7, 4: 15}, symbolic_lossless=True, pages=18, seconds=100)
    block = s.block()
    for words in ("notebooks run      2 (00 3s, 07 40s)", "figures written    13 in _build/figures",
                  f"({len(SLOW_FIGURES)} slow ones", "30 checked against their exact values: 28 agree, 2 contradicted",
                  "(the article's own numbers are wrong):", "a bound: the article says < 0.3%, exact 2/625 = 0.32%",
                  "a mean: the article says ≈ 2.21, exact 5816/2625 = 2.216",
                  "18 of 18 lossless", "proved (2 tokens: 3, 3 tokens: 7, 4 tokens: 15 regions)", "18 pages"):
        assert words in block
    # the article is named, in Chinese as it prints its title and in English
    assert f"the article        {ARTICLE_TITLE}, a blog post in Chinese" in block and ARTICLE_TITLE_EN in block
    assert s.ok and len(block.splitlines()) == 11 + len(wrong)
    assert not DemoSummary(samplers=2, samplers_lossless=1, symbolic_lossless=True).ok


def test_the_contradicted_numbers_are_the_articles_with_their_exact_values():
    from specmath.article import claims_table

    wrong = contradictions(claims_table())
    # the three numbers the article gets wrong (tests/core/test_article_claims_and_cli.py names them):
    # the fallback's probability 2/625 (it says < 0.3% and, in a code comment, ~0.1%) and the mean cost 5816/2625
    assert [(c.stated, c.exact) for c in wrong] == [("不到 0.3% (< 0.3%)", "2/625 = 0.32%"), ("~0.1%", "2/625 = 0.32%"),
                                                   ("≈ 2.21", "5816/2625 = 2.216")]


def test_exact_text_writes_one_digit_more_than_the_article():
    assert exact_text(Fraction(1, 3), "0.3") == "1/3 = 0.33"
    assert exact_text(Fraction(1, 8), "12%") == "1/8 = 12.5%"
    assert exact_text(Fraction(2), "2") == "2 = 2.0"


def test_claims_markdown_is_a_table_with_the_articles_title_and_one_row_per_claim():
    import pytest

    from specmath.article import ARTICLE_TITLE, claims_table
    from specmath.course.article_table import claims_markdown

    md = claims_markdown("rand7")
    rows = [r for r in claims_table() if r["section"].startswith("rand7")]
    assert ARTICLE_TITLE in md
    table = [line for line in md.splitlines() if line.startswith("| ")]
    assert len(table) == 1 + len(rows)  # header and one row per claim
    assert all(line.count(" | ") == 3 for line in table)  # four cells per row, none split by a stray pipe
    assert md.count("**contradicted**") == sum(not r["agrees"] for r in rows) >= 1
    with pytest.raises(ValueError, match="no claims"):
        claims_markdown("no such section")
