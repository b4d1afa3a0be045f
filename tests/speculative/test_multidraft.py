"""Multi-draft recursive rejection sampling (SpecInfer-style) and one-hot n-gram drafts are lossless."""

from fractions import Fraction

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from specmath import strategies as sms
from specmath.exact import exact
from specmath.laws import Law, LawError
from specmath.speculative import autoregressive_law, round_law
from specmath.speculative.examples import PAPER_EXAMPLE
from specmath.speculative.multidraft import (
    accepted_length_against_k,
    multidraft_acceptance,
    multidraft_generation_law,
    multidraft_round_law,
    multidraft_step,
    multidraft_step_law,
    one_hot,
    one_hot_drafter,
)
from specmath.speculative.toy_lm import random_toy_lm
from specmath.speculative.variants import completion_law_of
from specmath.validation import InvalidArgument

VOCAB = (0, 1, 2)
laws = sms.laws(vocab=VOCAB)


def law(ws):
    return Law.from_weights(dict(zip(VOCAB, ws, strict=True)))


# the exact program branches over 3^k proposals and k accept coins (k up to 3): 40 examples keep it to a second
@settings(max_examples=40, deadline=None)
@given(p=laws, qs=st.lists(laws, min_size=1, max_size=3))
@example(p=law([1, 1, 1]), qs=[law([1, 1, 1]), law([1, 1, 1])])  # p == q: the first draft is always accepted
@example(p=law([1, 0, 0]), qs=[law([0, 1, 0]), law([0, 0, 1])])  # disjoint supports: every draft is rejected
def test_multidraft_step_emits_the_target_law_and_its_acceptance_matches_the_residual_chain(p, qs):
    q_laws = tuple(qs)
    result = exact(multidraft_step, p, q_laws)
    assert result.law == p
    # the final resample happens exactly when all k drafts are rejected
    assert 1 - result.expected_cost("resample") == multidraft_acceptance(p, q_laws)


# as above, with one-hot drafts: 30 examples keep it under a second
@settings(max_examples=30, deadline=None)
@given(p=laws, tokens=st.lists(st.sampled_from(VOCAB), min_size=1, max_size=3))
@example(p=law([2, 1, 0]), tokens=[2, 2])  # a zero-probability proposal, proposed twice
def test_deterministic_one_hot_drafts_are_lossless_and_accept_with_the_proposed_mass(p, tokens):
    q_laws = tuple(one_hot(t, VOCAB) for t in tokens)
    assert multidraft_step_law(p, q_laws) == p
    # distinct proposals are accepted with the target mass they cover
    assert multidraft_acceptance(p, q_laws) == sum((p[t] for t in set(tokens)), Fraction(0))


def test_acceptance_grows_with_k_on_the_paper_example_2_3_then_7_9_then_23_27():
    target, draft = PAPER_EXAMPLE
    p, q = target(()), draft(())
    assert [multidraft_acceptance(p, (q,) * k) for k in (1, 2, 3)] == [Fraction(2, 3), Fraction(7, 9), Fraction(23, 27)]


def test_multidraft_round_with_one_draft_is_the_token_wise_round():
    target, draft = random_toy_lm(3, 1), random_toy_lm(3, 101)
    assert multidraft_round_law(target, (draft,), (), 2) == round_law(target, draft, (), 2)


@st.composite
def target_and_drafters(draw):
    """A target and 1..3 different drafters over one vocabulary of 1..3 tokens."""
    vocab = draw(st.integers(1, 3))
    return draw(sms.toy_lms(vocab)), tuple(draw(st.lists(sms.toy_lms(vocab), min_size=1, max_size=3)))


# a round with k drafters branches over 3^k proposals at each of 2 positions: 8 examples take seconds
@settings(max_examples=8, deadline=None)
@given(lms=target_and_drafters())
@example(lms=(random_toy_lm(3, 1), tuple(random_toy_lm(3, 101 + j) for j in range(3))))
def test_multidraft_round_is_lossless_for_random_context_dependent_toy_lms(lms):
    target, drafts = lms  # k different drafters
    law_ = multidraft_round_law(target, drafts, (), 2)
    assert completion_law_of(law_, target, (), 3) == autoregressive_law(target, (), 3)


def test_generation_with_an_ngram_drafter_and_a_model_drafter_equals_autoregressive_law():
    target, draft = random_toy_lm(3, 1), random_toy_lm(3, 101)
    ngram = one_hot_drafter(lambda c: c[-1] if c else 0, VOCAB, name="repeat-last-token lookup")
    assert multidraft_generation_law(target, (ngram, draft), (2,), 2, 3) == autoregressive_law(target, (2,), 3)


def test_expected_accepted_length_grows_with_k_on_the_paper_example():
    target, draft = PAPER_EXAMPLE
    assert accepted_length_against_k(target, draft, (), 2, [1, 2, 3]) == {
        1: Fraction(10, 9),
        2: Fraction(4, 3),
        3: Fraction(1087, 729),
    }


def test_multidraft_rejects_an_empty_list_of_drafts_and_a_token_outside_the_vocabulary():
    with pytest.raises(InvalidArgument, match="k >= 1"):
        multidraft_step_law(law([1, 1, 1]), ())
    with pytest.raises(LawError, match="not in the vocabulary"):
        one_hot(7, VOCAB)
