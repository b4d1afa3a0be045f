"""One speculative step is lossless for every rational p, q over one vocabulary (property tests)."""

from fractions import Fraction

import pytest
from hypothesis import example, given

from specmath import Law, LawError, exact
from specmath import strategies as sms
from specmath.exact import exact_paths
from specmath.speculative import acceptance_rate, residual_law, speculative_step, standard_rule, step_law


def pair(wp, wq):
    return Law.from_weights(dict(enumerate(wp))), Law.from_weights(dict(enumerate(wq)))


@given(sms.law_pairs())
@example(pair([1, 2, 3], [1, 2, 3]))  # p == q: never rejects, residual never needed
@example(pair([1, 1, 0, 0], [0, 0, 1, 1]))  # disjoint supports: always rejects
@example(pair([1, 1, 1], [1, 1, 0]))  # q(x) = 0 where p(x) > 0
@example(pair([0, 1, 0], [1, 1, 1]))  # one-hot target
@example(pair([1, 1, 1], [0, 0, 1]))  # one-hot draft
@example(pair([1], [1]))  # a single-token vocabulary
def test_one_speculative_step_outputs_exactly_p(pq):
    p, q = pq
    assert step_law(p, q) == p


@given(sms.law_pairs())
@example(pair([7, 3], [4, 6]))  # p(0) > q(0): accepted for certain, no residual needed
@example(pair([0, 1], [1, 1]))  # p(0) = 0: rejected for certain
def test_the_standard_rule_accepts_with_min_one_p_over_q(pq):
    p, q = pq
    for x in (x for x in q if q[x]):
        accept, resample = standard_rule(p, q, x)
        assert accept == min(Fraction(1), p[x] / q[x])
        assert resample == (residual_law(p, q) if p[x] < q[x] else None)


@given(sms.law_pairs())
@example(pair([1, 1, 0, 0], [0, 0, 1, 1]))
def test_acceptance_probability_is_sum_of_min_p_q(pq):
    p, q = pq
    accepted = sum((path.probability for path in exact_paths(speculative_step, p, q) if dict(path.steps)["accept"]), Fraction(0))
    assert accepted == acceptance_rate(p, q) == sum(min(p[x], q[x]) for x in p)


def test_residual_is_normalised_excess_and_refuses_p_equal_q():
    p = Law({"a": "1/2", "b": "1/2", "c": 0})
    q = Law({"a": "1/4", "b": "1/4", "c": "1/2"})
    assert residual_law(p, q) == Law({"a": "1/2", "b": "1/2", "c": 0})
    with pytest.raises(LawError, match="zero everywhere"):
        residual_law(p, p)


def test_mismatched_vocabularies_are_an_error():
    with pytest.raises(LawError, match="different vocabularies"):
        step_law(Law({"a": 1}), Law({"b": 1}))


def test_a_lossy_rule_is_detected_with_its_tv():
    def accept_always(p, q, x):
        return Fraction(1), None

    p, q = pair([7, 3], [4, 6])
    law = exact(speculative_step, p, q, accept_always).law
    assert law == q and law != p
