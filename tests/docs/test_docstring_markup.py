"""docs/_ext/specmath_docs.py reads plain-text docstrings as written: formula blocks stay line by line,
and a bar stays a bar (reStructuredText would read |...| as a substitution)."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))

from specmath_docs import escape_bars_in_docstring, indented_blocks_as_written, jupyter_heading_slug  # noqa: E402


def test_an_indented_formula_after_a_paragraph_becomes_a_literal_block():
    lines = ["The law of the outcome,", "", "    h_i(x) = A[i][x] + sum_j T[i][j] h_j(x)", "", "and so on."]
    assert indented_blocks_as_written(lines) == [
        "The law of the outcome,", "", "::", "", "    h_i(x) = A[i][x] + sum_j T[i][j] h_j(x)", "", "and so on."]


def test_inside_a_list_item_the_marker_is_indented_with_the_items_text():
    lines = ["2. Program calls are states,", "   one per call:", "", "       k_i(c) = C[i][c]", "", "   i.e. solved."]
    assert indented_blocks_as_written(lines)[2:5] == ["", "   ::", ""]


def test_blocks_already_literal_list_continuations_directives_and_examples_are_left_alone():
    untouched = [
        ["Written with a marker::", "", "    x = 1"],
        ["* an item", "", "  its second paragraph, at the item's own indent"],
        [".. note::", "", "   a directive's content"],
        ["An example:", "", "    >>> 1 + 1", "    2"],
        ["A definition list", "    is not after a blank line"],
    ]
    for lines in untouched:
        assert indented_blocks_as_written(lines) == lines, lines


def test_bars_are_escaped_in_prose_and_kept_in_literals():
    lines = ["TV = 1/2 sum_x |a(x) - b(x)| and ``|x|`` in code;", "E[accepted | block]::", "", "    |r_i| stays"]
    assert escape_bars_in_docstring(lines) == [
        "TV = 1/2 sum_x \\|a(x) - b(x)\\| and ``|x|`` in code;", "E[accepted \\| block]::", "", "    |r_i| stays"]


def test_headings_get_the_anchors_jupyter_gives_them():
    assert jupyter_heading_slug("1. The two-token world") == "1.-The-two-token-world"
    assert jupyter_heading_slug("  Summary  ") == "Summary"
