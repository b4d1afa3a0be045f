"""The ipywidgets explorers: moving a slider recomputes the view through the tested functions."""

from fractions import Fraction

import matplotlib
import matplotlib.pyplot as plt
import pytest

from specmath.explorers import round_view
from specmath.explorers.widgets import rand_explorer, round_explorer, two_token_explorer

matplotlib.use("Agg")


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_two_token_widget_recomputes_alpha_and_the_output_law_when_a_slider_moves():
    widget = two_token_explorer()
    assert widget.result.alpha == Fraction(7, 10)
    widget.children[1].value = 90  # q(A) = 9/10: the draft now over-proposes A
    assert widget.result.alpha == Fraction(8, 10) and widget.result.lossless
    assert widget.result.acceptance["A"] == Fraction(7, 9)


def test_rand_widget_switches_method_and_reports_an_impossible_choice_instead_of_crashing(capsys):
    widget = rand_explorer()
    widget.children[0].value = "recycling"
    assert widget.result.expected_calls == Fraction(1115, 504)
    widget.children[0].value = "article"
    widget.children[1].value = 9  # a = 9 >= b = 7: the article's method needs a < b
    assert widget.result is None
    assert "not available" in capsys.readouterr().out


def test_round_widget_moves_the_best_gamma_with_the_cost_ratio():
    widget = round_explorer()
    assert widget.result.best_gamma == 6  # alpha = 0.8, c = 0.1
    widget.children[2].value = 50  # c = 0.5: drafting is expensive, shorter rounds pay
    assert widget.result.best_gamma == 2 == round_view(Fraction(4, 5), 4, Fraction(1, 2)).best_gamma


def test_every_label_has_room_so_none_is_cut_to_an_ellipsis():
    # ipywidgets' default label column is narrow and shows "temperature" as "temperat..."; the explorers
    # set a label width that holds the longest description at the default font (about 0.6em per character)
    for widget in (two_token_explorer(), rand_explorer(), round_explorer()):
        for child in widget.children[:-1]:
            width = child.style.description_width
            assert width.endswith("em") and float(width[:-2]) >= 0.6 * len(child.description), child.description
