"""The position-by-position round proof agrees with the literal check: completed round law == autoregressive law."""

from fractions import Fraction

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from specmath import strategies as sms
from specmath.laws import Law
from specmath.speculative import autoregressive_law, completed_round_law, residual_law
from specmath.speculative.round_prover import prove_round
from specmath.speculative.toy_lm import random_toy_lm


def accept_all(p, q, x):
    return Fraction(1), None


def resample_from_p(p, q, x):
    return min(Fraction(1), p[x] / q[x]), p


def reject_half_too_often(p, q, x):
    a = min(Fraction(1), p[x] / q[x]) / 2
    return a, residual_law(p, q) if p != q else p


RULES = {"standard": None, "accept_all": accept_all, "resample_from_p": resample_from_p, "half": reject_half_too_often}


# each example is a proof plus a literal completed-round law (V^(gamma+1) tuples): 30 keep this test to seconds
@settings(max_examples=30, deadline=None)
@given(rule=st.sampled_from(sorted(RULES)), lms=sms.toy_lm_pairs(1, 3), gamma=st.integers(1, 3))
@example(rule="accept_all", lms=(random_toy_lm(2, 1), random_toy_lm(2, 2)), gamma=2)
@example(rule="standard", lms=(random_toy_lm(3, 1), random_toy_lm(3, 2)), gamma=3)
def test_prove_round_verdict_equals_completed_round_law_equality(rule, lms, gamma):
    target, draft = lms
    literal = completed_round_law(target, draft, (0,), gamma, RULES[rule]) == autoregressive_law(target, (0,), gamma + 1)
    assert prove_round(target, draft, (0,), gamma, RULES[rule]).lossless == literal


def test_prove_round_proves_the_standard_round_at_gamma_4_vocabulary_8():
    proof = prove_round(random_toy_lm(8, 0), random_toy_lm(8, 1), (0,), 4)
    assert proof.lossless and proof.tv == 0 and proof.nodes_checked > 8


def test_prove_round_names_the_failing_node_and_its_exact_tv_for_accept_all():
    p = Law({"A": Fraction(7, 10), "B": Fraction(3, 10)})
    q = Law({"A": Fraction(2, 5), "B": Fraction(3, 5)})
    from specmath.speculative.toy_lm import ToyLM

    target, draft = ToyLM(lambda c: p, ("A", "B")), ToyLM(lambda c: q, ("A", "B"))
    proof = prove_round(target, draft, (), 2, accept_all)
    # accepting every draft token makes the first emitted token q-distributed: TV(q, p) = 3/10
    assert not proof.lossless
    assert proof.node == () and proof.next_token_law == q and proof.tv == Fraction(3, 10)


def test_prove_round_rejects_bad_arguments():
    lm = random_toy_lm(2, 0)
    with pytest.raises(ValueError, match="gamma"):
        prove_round(lm, lm, (), -1)
