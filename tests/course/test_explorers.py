"""The explorers' computations: exact for the toy worlds, checked against independent formulas."""

from fractions import Fraction

import matplotlib
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from specmath import Law, tv_distance
from specmath.explorers import METHODS, rand_view, round_view, two_token_view
from specmath.explorers.rand_explorer import format_rand
from specmath.explorers.round_explorer import format_round
from specmath.explorers.step_explorer import format_two_token
from specmath.theory import speedup

matplotlib.use("Agg")

probabilities = st.integers(1, 60).flatmap(lambda d: st.integers(0, d).map(lambda n: Fraction(n, d)))


@given(probabilities, probabilities)
@example(Fraction(7, 10), Fraction(4, 10))
@example(Fraction(1, 2), Fraction(1, 2))
@example(Fraction(1), Fraction(0))
@example(Fraction(0), Fraction(1))
@example(Fraction(0), Fraction(0))
def test_two_token_explorer_output_law_equals_p_and_alpha_is_one_minus_tv(p_a, q_a):
    view = two_token_view(p_a, q_a)
    assert view.lossless and view.output == Law({"A": p_a, "B": 1 - p_a})
    assert view.alpha == 1 - tv_distance(view.p, view.q)
    # the paths' probabilities sum to 1, and the accepted ones to alpha
    assert sum(r["probability"] for r in view.paths) == 1
    assert sum(r["probability"] for r in view.paths if r["accepted"]) == view.alpha
    assert (view.residual is None) == (p_a == q_a)


def test_two_token_explorer_at_the_articles_sliders_shows_the_articles_numbers():
    view = two_token_view("7/10", "2/5")
    assert view.acceptance == {"A": 1, "B": Fraction(1, 2)}
    assert view.alpha == Fraction(7, 10) and view.residual == Law({"A": 1, "B": 0})
    assert [r["probability"] for r in view.paths] == [Fraction(2, 5), Fraction(3, 10), Fraction(3, 10)]
    text = format_two_token(view)
    assert "alpha = sum min(p, q) = 7/10" in text and "== p: True" in text


@pytest.mark.parametrize("bad", [Fraction(3, 2), -1, "x", float("nan"), None])
def test_two_token_explorer_rejects_a_probability_outside_0_1_with_a_value_error(bad):
    with pytest.raises(ValueError, match=r"^p\(A\) must be a (finite )?number in \[0, 1\], got "):
        two_token_view(bad, "1/2")
    with pytest.raises(ValueError):
        two_token_view("1/2", bad)


def test_rand_explorer_reproduces_the_three_exact_expected_call_counts_for_rand5_to_rand7():
    calls = {m: rand_view(m, 5, 7).expected_calls for m in METHODS}
    assert calls == {"basic": Fraction(50, 21), "article": Fraction(5816, 2625), "recycling": Fraction(1115, 504)}
    assert "E[calls] = 1115/504" in format_rand(rand_view("recycling"))


@pytest.mark.parametrize("a", [2, 3, 5, 6])
@pytest.mark.parametrize("b", [2, 3, 7, 10])
def test_rand_explorer_every_method_is_exactly_uniform_and_never_beats_the_knuth_yao_optimum(a, b):
    for method in METHODS:
        if method == "article" and a >= b:
            continue
        view = rand_view(method, a, b)
        assert view.uniform and set(view.law.values()) == {Fraction(1, b)}
        assert view.expected_calls >= view.optimum
    assert rand_view("recycling", a, b).expected_calls == rand_view("recycling", a, b).optimum


@pytest.mark.parametrize(
    "args, match",
    [(("magic", 5, 7), r"^unknown rand_a -> rand_b method 'magic' \(did you mean 'basic'\?\); choose from: basic, article, recycling$"),
     (("article", 7, 5), "a < b"), (("basic", 1, 7), r"^a \(rand_a -> rand_b: the die's sides\) must be an int >= 2, got 1$"),
     (("basic", 5, 2.5), r"^b \(rand_a -> rand_b: the target range\) must be an int >= 2, got 2.5$")],
)
def test_rand_explorer_rejects_bad_choices_with_a_value_error_naming_them(args, match):
    with pytest.raises(ValueError, match=match):
        rand_view(*args)


def test_round_explorer_matches_the_closed_form_and_its_best_gamma_maximises_the_curve():
    view = round_view(Fraction(4, 5), 4, Fraction(1, 10), max_gamma=30)
    assert view.expected_tokens == sum(Fraction(4, 5) ** k for k in range(5))  # 1 + a + ... + a^4
    assert view.speedup == view.expected_tokens / (1 + 4 * Fraction(1, 10))
    best_on_curve = max(view.curve, key=lambda gs: (gs[1], -gs[0]))
    assert (view.best_gamma, view.best_speedup) == best_on_curve == (6, speedup(Fraction(4, 5), 6, Fraction(1, 10)))
    assert "best gamma = 6" in format_round(view)


def test_round_explorer_says_why_there_is_no_best_gamma_when_drafts_are_free():
    view = round_view(Fraction(1, 2), 3, 0)
    assert view.best_gamma is None and "c = 0" in view.no_best_reason
    assert "no best gamma" in format_round(view)


@pytest.mark.parametrize("args", [(1.5, 4, 0.1), (0.5, -1, 0.1), (0.5, 4, -0.1), (float("nan"), 4, 0.1), (0.5, 2.0, 0.1)])
def test_round_explorer_rejects_bad_alpha_gamma_or_c_with_a_value_error(args):
    with pytest.raises(ValueError):
        round_view(*args)
    with pytest.raises(ValueError, match="max_gamma"):
        round_view(0.5, 4, 0.1, max_gamma=-1)


def _view(first_text):
    from specmath.explorers.model_step_explorer import DraftTokenRow, ModelStepView

    row = DraftTokenRow(1, 7, first_text, 0.4, 0.1, 0.25, 0.6, "rejected")
    return ModelStepView("prompt", (row,), 0, 3, "e", "residual", (("a", 0.5, 0.2), ("b", 0.3, 0.3)))


def test_model_step_bars_add_the_drafted_token_when_it_is_not_among_the_likeliest():
    from specmath.explorers.explorer_plots import model_step_bars

    bars = model_step_bars(_view("z"))
    assert bars[-1] == ("z", 0.1, 0.4, True)  # p_0(x_1), q_0(x_1) of the drafted token, marked
    assert [t for t, *_ in bars] == ["a", "b", "z"]


def test_model_step_bars_mark_the_drafted_token_in_place_when_it_is_shown_already():
    from specmath.explorers.explorer_plots import model_step_bars

    bars = model_step_bars(_view("b"))
    assert [(t, drafted) for t, _, _, drafted in bars] == [("a", False), ("b", True)]
