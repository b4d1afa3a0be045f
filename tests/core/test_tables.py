"""The one table renderer: Markdown and aligned text, and a row that does not fit named."""

import pytest

from specmath.tables import markdown_table, text_table
from specmath.validation import InvalidArgument


def test_a_markdown_table_is_a_header_a_rule_and_a_line_per_row():
    assert markdown_table(["a", "bb"], [[1, "x|y"]]) == "| a | bb |\n|---|---|\n| 1 | x|y |"
    assert markdown_table(["a", "bb"], [[1, "x|y"]], escape=True).splitlines()[-1] == "| 1 | x\\|y |"
    assert markdown_table(["a"], []) == "| a |\n|---|"


def test_a_text_table_pads_each_column_to_its_widest_cell_and_drops_trailing_spaces():
    assert text_table(["a", "b"], [["long", "1"], ["x", ""]]) == "a     b\nlong  1\nx"
    assert text_table(["n", "v"], [["10", "1/3"]], align=">", indent="  ") == "   n    v\n  10  1/3"
    assert text_table(["n", "v"], [["10", "1/3"]], align=["<", ">"], gap=" | ") == "n  |   v\n10 | 1/3"


def test_a_row_of_the_wrong_length_or_an_unknown_alignment_is_one_line_naming_it():
    with pytest.raises(InvalidArgument, match=r"^table row 1 has 1 cells, the header 2"):
        markdown_table(["a", "b"], [["x"]])
    with pytest.raises(InvalidArgument, match=r"^align must be one of \('<', '>'\) or one of them per column \(2\)"):
        text_table(["a", "b"], [], align="^")
