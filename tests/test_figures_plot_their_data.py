"""Each figure plots the quantity its title claims: the test reads the drawn Artist data back.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

Every plotted value is an exact Fraction converted with float(), which rounds correctly, so a
drawn value is compared with ``==`` to float() of the exact quantity computed here. Where the
figure draws a float sum (stacked bars) the tolerance is stated beside the check.
"""

import math
from fractions import Fraction

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from specmath.classic import fair_coin, rand7  # noqa: E402
from specmath.entropy.extractors import von_neumann_rate  # noqa: E402
from specmath.entropy.recycling_stream import long_run_calls_per_output  # noqa: E402
from specmath.exact import exact  # noqa: E402
from specmath.figures import PLOT_MODULES, figures_in, load_all  # noqa: E402
from specmath.plots import beyond_plots, classic_plots, entropy_plots, speculative_plots  # noqa: E402
from specmath.speculative import round_law, two_token  # noqa: E402
from specmath.speculative.examples import PAPER_EXAMPLE, ROUND_DRAFT, ROUND_PREFIX, ROUND_TARGET  # noqa: E402
from specmath.theory import expected_tokens_per_round, optimal_gamma, speedup  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def bars(ax) -> list[Rectangle]:
    return [a for a in ax.patches if isinstance(a, Rectangle)]


def lines(ax, marker=None) -> list[Line2D]:
    return [ln for ln in ax.get_lines() if marker is None or ln.get_marker() == marker]


def test_every_plotting_module_contributes_figures_and_no_file_is_claimed_twice():
    joined = load_all()
    for name in PLOT_MODULES:
        module = __import__(name, fromlist=["_"])
        mine = figures_in(module)
        assert mine, f"{name} marks no plotting function"
        assert all(joined[f] is fn for f, fn in mine.items())
    assert sum(len(figures_in(__import__(n, fromlist=["_"]))) for n in PLOT_MODULES) == len(joined)


def test_two_token_paths_stack_the_exact_path_probabilities_up_to_p():
    fig = classic_plots.plot_two_token_paths()
    ax = fig.axes[0]
    rows = two_token.path_table()
    drawn = sorted((round(r.get_x() + r.get_width() / 2), r.get_height()) for r in bars(ax))
    expected = sorted((["A", "B"].index(row["output"]), float(row["probability"])) for row in rows)
    # matplotlib keeps a stacked bar as its corners (height = top - bottom, one float subtraction),
    # and the stacks add at most three floats in [0, 1]: 1e-15 covers that rounding
    assert [x for x, _ in drawn] == [x for x, _ in expected]
    assert all(abs(h - e) < 1e-15 for (_, h), (_, e) in zip(drawn, expected, strict=True))
    for i, token in enumerate(["A", "B"]):
        stack = sum(h for x, h in drawn if x == i)
        assert abs(stack - float(two_token.TARGET[token])) < 1e-15


def test_rand7_levels_plots_the_exact_expected_calls_and_where_outputs_come_from():
    fig = classic_plots.plot_rand7_levels()
    ax1, ax2 = fig.axes
    # basic rejection: two rand5 calls per attempt, 21 of 25 attempts succeed: 2 * 25/21
    assert [r.get_height() for r in bars(ax1)] == [float(Fraction(50, 21)), float(exact(rand7.rand7_article).expected_cost("rand5"))]
    article = exact(rand7.rand7_article)
    levels = [article.expected_cost(k) for k in ("level 1", "level 2", "level 3", "fallback")]
    assert [r.get_height() for r in bars(ax2)] == [float(v) for v in levels]
    assert sum(levels) == 1  # every output is produced at exactly one level


def test_von_neumann_flips_is_one_over_p_times_one_minus_p():
    ax = classic_plots.plot_von_neumann_flips().axes[0]
    (line,) = lines(ax)
    ps = [Fraction(k, 40) for k in range(2, 39)]
    assert list(line.get_xdata()) == [float(p) for p in ps]
    assert list(line.get_ydata()) == [float(1 / (p * (1 - p))) for p in ps]
    assert exact(fair_coin.von_neumann, Fraction(1, 2)).expected_cost("flip") == 4


def test_speedup_vs_gamma_draws_the_speedup_formula_with_its_maximum_circled():
    fig = speculative_plots.plot_speedup_vs_gamma(max_gamma=16)
    for ax, c in zip(fig.axes, speculative_plots.SPEEDUP_COSTS, strict=True):
        curves = lines(ax, ".")
        circles = lines(ax, "o")
        assert len(curves) == len(circles) == len(speculative_plots.SPEEDUP_ALPHAS)
        for curve, circle, alpha in zip(curves, circles, speculative_plots.SPEEDUP_ALPHAS, strict=True):
            assert list(curve.get_ydata()) == [float(speedup(alpha, g, c)) for g in range(17)]
            best = optimal_gamma(alpha, c)
            assert list(circle.get_xdata()) == [best]
            assert max(speedup(alpha, g, c) for g in range(65)) == speedup(alpha, best, c)


def test_expected_tokens_per_round_dots_are_exact_round_laws_equal_to_the_closed_form():
    ax = speculative_plots.plot_expected_tokens_per_round(gammas=(1, 3)).axes[0]
    dots = lines(ax, "o")
    marks = [Fraction(k, 10) for k in range(0, 11, 2)]
    for dots_of_gamma, gamma in zip(dots, (1, 3), strict=True):
        assert list(dots_of_gamma.get_ydata()) == [float(expected_tokens_per_round(a, gamma)) for a in marks]


def test_round_length_law_bars_are_the_exact_law_of_the_round_length():
    ax = speculative_plots.plot_round_length_law(gamma=3).axes[0]
    law = round_law(ROUND_TARGET, ROUND_DRAFT, ROUND_PREFIX, 3).map(len)
    drawn = bars(ax)
    assert [r.get_height() for r in drawn[:4]] == [float(law.prob(k)) for k in range(1, 5)]
    assert sum(law.prob(k) for k in range(1, 5)) == 1


def test_bug_zoo_tv_draws_minus_log10_of_each_exact_tv():
    from specmath.bugzoo import BUGS

    ax = beyond_plots.plot_bug_zoo_tv().axes[0]
    drawn = bars(ax)
    names = [t.get_text() for t in ax.get_yticklabels()]
    assert sorted(names) == sorted(BUGS)
    for rect, name in zip(drawn, names, strict=True):
        tv = BUGS[name].tv()
        assert 0 < tv <= Fraction(1, 2)
        # log10 of numerator and denominator separately: 2^-126 underflows no float this way; the
        # plot computes the same expression, so the drawn width equals it to the last bit
        assert rect.get_width() == -(math.log10(tv.numerator) - math.log10(tv.denominator))


def test_block_vs_tokenwise_shows_the_papers_10_9_vs_11_9_and_the_order_of_the_three_verifiers():
    fig = beyond_plots.plot_block_vs_tokenwise()
    paper_ax = fig.axes[0]
    block, tokenwise, match = (ln.get_ydata() for ln in lines(paper_ax))
    assert [lbl.get_label() for lbl in lines(paper_ax)] == ["block", "token-wise", "sample-match"]
    assert block[1] == float(Fraction(11, 9)) and tokenwise[1] == float(Fraction(10, 9))
    for ax in fig.axes:
        b, t, m = (list(ln.get_ydata()) for ln in lines(ax))
        assert all(x >= y >= z for x, y, z in zip(b, t, m, strict=True))


def test_multidraft_k_starts_at_the_token_wise_acceptance_and_never_decreases():
    from specmath.speculative.variants import expected_accepted

    fig = beyond_plots.plot_multidraft_k()
    target, draft = PAPER_EXAMPLE
    for line, gamma in zip(lines(fig.axes[0]), (1, 2), strict=True):
        values = list(line.get_ydata())
        assert values[0] == float(expected_accepted(round_law(target, draft, (), gamma)))
        assert values == sorted(values)


def test_rand7_calls_by_method_bars_are_exact_costs_above_the_entropy_limit():
    fig = entropy_plots.plot_rand7_calls_by_method()
    ax1, ax2 = fig.axes
    heights = [r.get_height() for r in bars(ax1)]
    assert heights[0] == float(Fraction(50, 21)) and heights[2] == float(Fraction(1115, 504))
    assert all(h > math.log(7, 5) for h in heights)
    exact_line = lines(ax2)[0]
    assert list(exact_line.get_ydata()) == [float(long_run_calls_per_output(5, 7, b)) for b in entropy_plots.EXACT_BOUNDS]


def test_coin_rates_draw_the_entropy_and_stay_below_it():
    ax = entropy_plots.plot_coin_rates().axes[0]
    curves = [ln for ln in lines(ax) if len(ln.get_xdata()) > 2]
    entropy = curves[0]
    ps = entropy.get_xdata()
    h = -(ps * [math.log2(p) for p in ps] + (1 - ps) * [math.log2(1 - p) for p in ps])
    # H(p) drawn with numpy's log2 vs math.log2 here: two libm paths, 1e-12 covers their ulps
    assert max(abs(entropy.get_ydata() - h)) < 1e-12
    von_neumann = next(ln for ln in curves if ln.get_label().startswith("von Neumann"))
    assert list(von_neumann.get_ydata()) == [von_neumann_rate(float(p)) for p in ps]
    # an extractor cannot beat the entropy: every curve lies under H(p) (same 1e-12 slack)
    for curve in curves[1:]:
        assert all(y <= hp + 1e-12 for y, hp in zip(curve.get_ydata(), h, strict=True)), curve.get_label()
