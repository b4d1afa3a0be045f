"""The examples behind the multi-token round figures hold exactly (what the figures draw is
checked in tests/test_figures_plot_their_data.py)."""

from fractions import Fraction

from specmath.plots.speculative_plots import SPEEDUP_ALPHAS, constant_alpha_pair
from specmath.speculative import acceptance_rate, expected_round_tokens
from specmath.speculative.examples import ROUND_DRAFT, ROUND_PREFIX, ROUND_TARGET
from specmath.theory import expected_tokens_per_round


def test_constant_alpha_pair_has_the_requested_alpha_and_the_closed_form_token_count():
    for alpha in SPEEDUP_ALPHAS + (Fraction(0), Fraction(1)):
        target, draft = constant_alpha_pair(alpha)
        assert acceptance_rate(target(()), draft(())) == alpha
        assert expected_round_tokens(target, draft, (), 3) == expected_tokens_per_round(alpha, 3)


def test_article_world_alpha_varies_along_the_draft():
    alphas = {acceptance_rate(ROUND_TARGET(c), ROUND_DRAFT(c)) for c in [ROUND_PREFIX, ROUND_PREFIX + ("machine",), ("learning",)]}
    assert alphas == {Fraction(5, 6), Fraction(4, 5), Fraction(3, 4)}
