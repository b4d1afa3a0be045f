"""Block verification (Sun et al. 2024) is lossless and never accepts fewer tokens than token-wise."""

from fractions import Fraction

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from specmath import strategies as sms
from specmath.exact import exact
from specmath.laws import Law, LawError
from specmath.speculative import autoregressive_law, round_law
from specmath.speculative.block import (
    block_accept,
    block_generation_law,
    block_round,
    block_round_law,
    block_vs_tokenwise,
    block_weights,
)
from specmath.speculative.examples import PAPER_EXAMPLE
from specmath.speculative.toy_lm import ToyLM, random_toy_lm
from specmath.speculative.variants import completion_law_of
from specmath.validation import InvalidArgument


def test_block_verification_reproduces_the_papers_example_10_9_vs_11_9():
    target, draft = PAPER_EXAMPLE
    assert block_vs_tokenwise(target, draft, (), 2) == {"token-wise": Fraction(10, 9), "block": Fraction(11, 9)}


@pytest.mark.parametrize("gamma", [1, 2, 3])
def test_block_generation_law_equals_autoregressive_law_on_the_papers_example(gamma):
    target, draft = PAPER_EXAMPLE
    assert block_generation_law(target, draft, (), gamma, 4) == autoregressive_law(target, (), 4)


def test_block_round_with_gamma_1_is_the_standard_step():
    target, draft = random_toy_lm(4, 3), random_toy_lm(4, 9)
    assert block_round_law(target, draft, (), 1) == round_law(target, draft, (), 1)


# block verification enumerates the round and its completion (V^(2 gamma + 1) tuples): 25 examples keep it to seconds
@settings(max_examples=25, deadline=None)
@given(lms=sms.toy_lm_pairs(1, 3), gamma=st.integers(1, 3))
@example(lms=(random_toy_lm(3, 1), random_toy_lm(3, 101)), gamma=3)
@example(lms=(random_toy_lm(2, 0), random_toy_lm(2, 0)), gamma=2)  # p == q: nothing is ever rejected
def test_block_round_is_lossless_and_accepts_at_least_as_much_as_token_wise_for_random_toy_lms(lms, gamma):
    target, draft = lms
    law = block_round_law(target, draft, (), gamma)
    # what one round emits, continued by plain target sampling, is an autoregressive sample
    assert completion_law_of(law, target, (), gamma + 1) == autoregressive_law(target, (), gamma + 1)
    compared = block_vs_tokenwise(target, draft, (), gamma)
    assert compared["block"] >= compared["token-wise"]


def test_block_generation_over_several_rounds_equals_autoregressive_law_for_context_dependent_lms():
    target, draft = random_toy_lm(3, 1), random_toy_lm(3, 101)
    assert block_generation_law(target, draft, (0,), 2, 4) == autoregressive_law(target, (0,), 4)


def test_block_verification_is_strictly_better_on_a_context_dependent_pair():
    target, draft = random_toy_lm(3, 1), random_toy_lm(3, 101)
    compared = block_vs_tokenwise(target, draft, (), 3)
    assert compared["block"] == Fraction(10889, 18480) > compared["token-wise"] == Fraction(168541, 332640)


def test_block_weights_follow_the_running_minimum_formula():
    target, draft = PAPER_EXAMPLE
    p, q = target(()), draft(())
    weights, stops, _ = block_weights((p, p, p), ("a", "a"), (q, q))
    # w_1 = min(1, (1/3)/(2/3)) = 1/2, w_2 = min(1, 1/2 * 1/2) = 1/4; h_2 = w_2
    assert weights == [1, Fraction(1, 2), Fraction(1, 4)]
    assert stops[2] == Fraction(1, 4)
    # h_1: r_1 = max(0, p/2 - q) = {a: 0, b: 0} -> nothing to resample after one token
    assert stops[1] == 0


def test_block_accept_rejects_a_draft_token_of_draft_probability_zero():
    q = Law({"a": 1, "b": 0})
    target = ToyLM(lambda c: Law({"a": Fraction(1, 2), "b": Fraction(1, 2)}), ("a", "b"))
    with pytest.raises(LawError, match="draft probability 0"):
        exact(block_accept, target, (), ("b",), (q,))


def test_block_accept_rejects_mismatched_tokens_and_laws():
    target, _ = PAPER_EXAMPLE
    with pytest.raises(LawError, match="2 draft tokens but 1 draft laws"):
        exact(block_accept, target, (), ("a", "b"), (target(()),))


def test_block_round_rejects_a_negative_gamma():
    target, draft = PAPER_EXAMPLE
    with pytest.raises(InvalidArgument, match=r"^gamma \(draft tokens per round\) must be an int >= 0, got -1$"):
        exact(block_round, target, draft, (), -1)


def test_the_sampled_interpreter_running_the_same_block_round_fits_its_exact_law():
    """Power: with N = 1500 the G-test at level 1e-6 catches any deviation of TV >= detectable_tv (~0.11 here)."""
    import numpy as np

    from specmath.sampled import sample_many
    from specmath.stats import detectable_tv, g_test

    target, draft = PAPER_EXAMPLE
    law = block_round_law(target, draft, (), 2)
    outcomes = sample_many(block_round, 1500, target, draft, (), 2, rng=np.random.default_rng(11))
    counts = {}
    for out in outcomes:
        counts[out] = counts.get(out, 0) + 1
    assert detectable_tv(law, 1500) < 0.2
    assert g_test(counts, law).p_value > 1e-6


def test_generation_and_completion_laws_reject_bad_lengths():
    from specmath.speculative.variants import generation_law_of

    target, draft = PAPER_EXAMPLE
    with pytest.raises(InvalidArgument, match=r"^length \(tokens to generate\) must be an int >= 1, got 0$"):
        generation_law_of(lambda c: block_round_law(target, draft, c, 1), (), 0)
    with pytest.raises(LawError, match="more than total"):
        completion_law_of(block_round_law(target, draft, (), 2), target, (), 2)
    with pytest.raises(LawError, match="non-empty tuple"):
        generation_law_of(lambda c: Law({(): 1}), (), 1)
