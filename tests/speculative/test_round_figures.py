"""The multi-token round figures regenerate, and the examples behind them hold exactly."""

from fractions import Fraction

from specmath.figures import regenerate
from specmath.plots.speculative_plots import SPEEDUP_ALPHAS, constant_alpha_pair
from specmath.speculative import acceptance_rate, expected_round_tokens
from specmath.speculative.examples import ROUND_DRAFT, ROUND_PREFIX, ROUND_TARGET
from specmath.theory import expected_tokens_per_round

MINE = ["speedup_vs_gamma.png", "expected_tokens_per_round.png", "round_length_law.png"]


def test_round_figures_regenerate(tmp_path):
    written = regenerate(tmp_path, only=MINE)
    assert sorted(p.name for p in written) == sorted(MINE) and all(p.stat().st_size > 10_000 for p in written)


def test_constant_alpha_pair_has_the_requested_alpha_and_the_closed_form_token_count():
    for alpha in SPEEDUP_ALPHAS + (Fraction(0), Fraction(1)):
        target, draft = constant_alpha_pair(alpha)
        assert acceptance_rate(target(()), draft(())) == alpha
        assert expected_round_tokens(target, draft, (), 3) == expected_tokens_per_round(alpha, 3)


def test_article_world_alpha_varies_along_the_draft():
    alphas = {acceptance_rate(ROUND_TARGET(c), ROUND_DRAFT(c)) for c in [ROUND_PREFIX, ROUND_PREFIX + ("machine",), ("learning",)]}
    assert alphas == {Fraction(5, 6), Fraction(4, 5), Fraction(3, 4)}
