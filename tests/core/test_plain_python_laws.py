"""Plain Python in, exact answers out: every public function that takes a law takes a dict of floats."""

from fractions import Fraction

import pytest

from specmath.classic.rejection import check_envelope, smallest_envelope
from specmath.classic.reservoir import inclusion_probabilities
from specmath.entropy.extractors import block_rate
from specmath.entropy.knuth_yao import entropy, optimal_expected_draws
from specmath.exact import exact
from specmath.laws import Law, LawError, difference_table, tv_distance
from specmath.program import draw
from specmath.speculative.multidraft import multidraft_acceptance, multidraft_step_law
from specmath.speculative.round import round_law
from specmath.speculative.sample_match import acceptance_gap, match_acceptance
from specmath.speculative.step import acceptance_rate, residual_law, step_law
from specmath.speculative.toy_lm import ToyLM, temperature, top_k, top_p
from specmath.speculative.two_token import acceptance_by_token, summary
from specmath.stats import empirical_tv, g_test

P = {"A": 0.7, "B": 0.3}
Q = {"A": 0.4, "B": 0.6}
P_LAW = Law({"A": Fraction(7, 10), "B": Fraction(3, 10)})
Q_LAW = Law({"A": Fraction(2, 5), "B": Fraction(3, 5)})


def test_step_law_of_two_dicts_of_floats_is_exactly_p():
    assert step_law(P, Q) == P_LAW
    assert acceptance_rate(P, Q) == Fraction(7, 10)  # min(7/10, 4/10) + min(3/10, 6/10)
    assert residual_law(P, Q) == Law({"A": 1, "B": 0})


@pytest.mark.parametrize(
    ("function", "expected"),
    [
        (lambda: tv_distance(P, Q), Fraction(3, 10)),
        (lambda: difference_table(P, Q)[0], ("A", Fraction(7, 10), Fraction(2, 5), Fraction(3, 10))),
        (lambda: match_acceptance(P, Q), Fraction(46, 100)),  # 0.7 * 0.4 + 0.3 * 0.6
        (lambda: acceptance_gap(P, Q), Fraction(7, 10) - Fraction(46, 100)),
        (lambda: multidraft_step_law(P, [Q, Q]), P_LAW),
        (lambda: multidraft_acceptance(P, [Q]), Fraction(7, 10)),
        (lambda: smallest_envelope(P, Q), Fraction(7, 4)),
        (lambda: check_envelope(P, Q, 2), Fraction(2)),
        (lambda: optimal_expected_draws({"A": 0.5, "B": 0.5}), Fraction(1)),
        (lambda: temperature(P, Fraction(1, 2)), Law({"A": Fraction(49, 58), "B": Fraction(9, 58)})),
        (lambda: top_k(P, 1), Law({"A": 1, "B": 0})),
        (lambda: top_p(P, 0.5), Law({"A": 1, "B": 0})),
        (lambda: exact(lambda: (yield draw(P))).law, P_LAW),
        (lambda: acceptance_by_token(P, Q), {"A": 1, "B": Fraction(1, 2)}),
        (lambda: summary(P, Q)["output"], P_LAW),
        # counts exactly n p(x): 10 * fl(7/10) rounds to 7.0 and ln(1) = 0 under IEEE on every host, so G = 0 exactly
        (lambda: g_test({"A": 7, "B": 3}, P).statistic, 0.0),
        # 7/10 and float(Fraction(7, 10)) are both the correctly rounded double of 0.7: the difference is 0.0
        (lambda: empirical_tv({"A": 7, "B": 3}, P), 0.0),
        (lambda: inclusion_probabilities({(1,): 0.5, (2,): 0.5}, 2), {1: Fraction(1, 2), 2: Fraction(1, 2)}),
        (lambda: block_rate({(): 0.5, (0,): 0.25, (1,): 0.25}, 2), Fraction(1, 4)),
        (lambda: entropy({"A": 0.5, "B": 0.5}), 1.0),  # log2(2) = 1 exactly in IEEE arithmetic
    ],
)
def test_public_functions_read_dicts_of_floats_as_decimals(function, expected):
    assert function() == expected


def test_toy_lms_may_return_plain_dicts():
    target = ToyLM(lambda ctx: P if len(ctx) % 2 == 0 else Q, ("A", "B"))
    draft = ToyLM(lambda ctx: {"A": 0.5, "B": 0.5}, ("A", "B"))
    law = round_law(target, draft, (), 1)
    assert sum(law.values()) == 1 and target(("A",)) == Q_LAW


def test_a_rule_may_return_its_resample_law_as_a_dict():
    def dict_rule(p, q, x):
        accept = min(Fraction(1), p[x] / q[x])
        excess = {y: max(Fraction(0), p[y] - q[y]) for y in p}
        total = sum(excess.values())
        return accept, ({y: w / total for y, w in excess.items()} if accept < 1 else None)

    assert step_law(P, Q, dict_rule) == P_LAW


def test_a_law_that_does_not_sum_to_one_is_an_error_at_the_entry_point():
    # the advice names a function that exists, not a parameter step_law lacks
    with pytest.raises(LawError, match=r"Law\.from_weights\(weights\)") as info:
        step_law({"A": 0.5, "B": 0.6}, Q)
    assert "normalise=True" not in str(info.value)
