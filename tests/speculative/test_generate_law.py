"""Speculative generation has exactly the law of plain autoregressive sampling from the target."""

from fractions import Fraction

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from specmath import strategies as sms
from specmath.exact import exact
from specmath.laws import Law
from specmath.speculative import (
    autoregressive_generation,
    autoregressive_law,
    completed_round_law,
    generate_law,
    speculative_generation,
)
from specmath.speculative.toy_lm import ToyLM, random_toy_lm

# Hand-written, context-dependent tables over {A, B, C}: the target prefers repeating the last token,
# the draft prefers "A" after anything; each has zeros the other lacks.
VOCAB = ("A", "B", "C")


def _target(ctx: tuple) -> Law:
    last = ctx[-1] if ctx else None
    if last == "A":
        return Law({"A": Fraction(1, 2), "B": Fraction(1, 2), "C": 0})
    if last == "B":
        return Law({"A": Fraction(1, 6), "B": Fraction(1, 2), "C": Fraction(1, 3)})
    return Law({"A": Fraction(1, 5), "B": Fraction(1, 5), "C": Fraction(3, 5)})


def _draft(ctx: tuple) -> Law:
    if len(ctx) % 2:
        return Law({"A": Fraction(3, 4), "B": 0, "C": Fraction(1, 4)})
    return Law({"A": Fraction(1, 3), "B": Fraction(1, 3), "C": Fraction(1, 3)})


HAND_TARGET = ToyLM(_target, VOCAB, name="hand-written target")
HAND_DRAFT = ToyLM(_draft, VOCAB, name="hand-written draft")


@pytest.mark.parametrize("gamma", [1, 2, 3, 4, 5])
def test_generate_law_equals_autoregressive_law_for_hand_written_context_dependent_lms(gamma):
    assert generate_law(HAND_TARGET, HAND_DRAFT, ("B",), gamma, 4) == autoregressive_law(HAND_TARGET, ("B",), 4)


@pytest.mark.parametrize("gamma", [1, 2, 3, 4, 5])
def test_completed_round_law_equals_autoregressive_law_for_hand_written_lms(gamma):
    assert completed_round_law(HAND_TARGET, HAND_DRAFT, (), gamma) == autoregressive_law(HAND_TARGET, (), gamma + 1)


# generation laws enumerate every round of every path (V^length tuples, gamma up to 5): 25 examples keep it to seconds
@settings(max_examples=25, deadline=None)
@given(lms=sms.toy_lm_pairs(1, 4), gamma=st.integers(1, 5), length=st.integers(1, 4))
@example(lms=(random_toy_lm(1, 0), random_toy_lm(1, 0)), gamma=1, length=1)
@example(lms=(random_toy_lm(4, 1), random_toy_lm(4, 2)), gamma=5, length=4)
def test_generate_law_equals_autoregressive_law_for_random_toy_lms(lms, gamma, length):
    target, draft = lms
    assert generate_law(target, draft, (0,), gamma, length) == autoregressive_law(target, (0,), length)


def test_generate_law_equals_exact_law_of_the_generation_program():
    target, draft = random_toy_lm(2, 3), random_toy_lm(2, 4)
    for gamma, length in [(1, 3), (2, 3), (3, 2)]:
        program_law = exact(speculative_generation, target, draft, (), gamma, length).law
        assert generate_law(target, draft, (), gamma, length) == program_law


def test_autoregressive_law_equals_exact_law_of_plain_decoding_program():
    target = random_toy_lm(3, 9)
    assert autoregressive_law(target, (1,), 3) == exact(autoregressive_generation, target, (1,), 3).law


def test_generate_law_of_a_lossy_rule_differs_from_the_autoregressive_law():
    # the test can fail: a rule that always accepts emits draft tokens, whose law is not p
    def accept_all(p, q, x):
        return Fraction(1), None

    target, draft = HAND_TARGET, HAND_DRAFT
    assert generate_law(target, draft, (), 2, 3, accept_all) != autoregressive_law(target, (), 3)


@pytest.mark.parametrize("bad_length", [0, -2, 2.0])
def test_generation_rejects_a_length_that_is_not_a_positive_integer(bad_length):
    with pytest.raises(ValueError, match="length"):
        generate_law(HAND_TARGET, HAND_DRAFT, (), 2, bad_length)
    with pytest.raises(ValueError, match="length"):
        autoregressive_law(HAND_TARGET, (), bad_length)
