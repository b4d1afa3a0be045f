"""specmath.show(fn): the program's source, highlighted, in every representation a notebook export uses."""

import pytest

import specmath
from specmath.classic.rand7 import rand7_basic
from specmath.speculative.step import speculative_step


def test_show_gives_the_functions_own_source_in_plain_markdown_and_inline_styled_html():
    shown = specmath.show(speculative_step)
    assert repr(shown).startswith("def speculative_step(p: Law, q: Law")
    assert "yield draw(q" in repr(shown)
    md = shown._repr_markdown_()
    assert "```python\ndef speculative_step" in md
    html = shown._repr_html_()
    # inline colours (no stylesheet needed by the exports) and wrapped long lines on slides
    assert 'style="color: #' in html and "white-space: pre-wrap" in html
    assert "speculative_step" in html and "specmath.speculative.step.speculative_step" in html


def test_show_of_a_wrapper_shows_that_wrapper():
    assert "yield from rand_basic(5, 7)" in repr(specmath.show(rand7_basic))


def test_show_refuses_objects_without_python_source():
    with pytest.raises(ValueError, match="no Python source"):
        specmath.show(len)
