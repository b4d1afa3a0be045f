"""Warps: lossless for the warped target when q is the law drafts were drawn from; exact TV otherwise."""

from fractions import Fraction

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from specmath import strategies as sms
from specmath.exact import exact
from specmath.laws import Law, LawError, point, tv_distance
from specmath.sampling_options import SamplingOptions
from specmath.speculative import autoregressive_law
from specmath.speculative.toy_lm import ToyLM, random_toy_lm, warp
from specmath.speculative.warped import (
    greedy_continuation,
    greedy_round_law,
    greedy_round_prediction,
    mismatched_round,
    temperature_to_greedy,
    warp_scenarios,
)

warps = st.one_of(
    st.integers(1, 3).map(lambda k: SamplingOptions(temperature=Fraction(1, k))),
    st.integers(1, 3).map(lambda k: SamplingOptions(top_k=k)),
    st.integers(1, 4).map(lambda n: SamplingOptions(top_p=Fraction(n, 4))),
    st.integers(1, 2).map(lambda k: SamplingOptions(temperature=Fraction(1, 2), top_k=k)),
)


# six warp scenarios, each an exact two-round generation law: 15 examples keep this test to seconds
@settings(max_examples=15, deadline=None)
@given(w=warps, gamma=st.integers(1, 2), lms=sms.toy_lm_pairs(3, 3))
@example(w=SamplingOptions(top_k=2), gamma=2, lms=(random_toy_lm(3, 1), random_toy_lm(3, 101)))
def test_warping_both_sides_or_the_target_alone_is_lossless_and_the_draft_alone_gives_the_unwarped_law(w, gamma, lms):
    target, draft = lms
    cases = warp_scenarios(target, draft, w, (), gamma, 2)
    assert cases["warp on both sides (correct)"]["tv"] == 0
    assert cases["warp on the target only, honest unwarped draft"]["tv"] == 0
    # with the target unwarped, the output is exactly the unwarped autoregressive law
    raw, wanted = autoregressive_law(target, (), 2), autoregressive_law(warp(target, w), (), 2)
    assert cases["warp on the draft only (target unwarped)"]["law"] == raw
    assert cases["warp on the draft only (target unwarped)"]["tv"] == tv_distance(raw, wanted)


def test_q_from_raw_logits_with_top_k_2_is_lossy_by_exactly_4_495_on_a_pinned_pair():
    target, draft = random_toy_lm(3, 1), random_toy_lm(3, 101)
    cases = warp_scenarios(target, draft, SamplingOptions(top_k=2), (), 2, 2)
    assert cases["tokens from the warped draft, q from raw logits"]["tv"] == Fraction(4, 495)
    assert cases["warp on the draft only (target unwarped)"]["tv"] == Fraction(4, 11)


def test_q_from_raw_logits_on_a_one_step_two_token_instance():
    # p = {A: 1/2, B: 1/2}; raw draft q = {A: 1/2, B: 1/4, C: 1/4}, top-2 keeps {A: 2/3, B: 1/3}
    p = Law({"A": Fraction(1, 2), "B": Fraction(1, 2), "C": 0})
    q = Law({"A": Fraction(1, 2), "B": Fraction(1, 4), "C": Fraction(1, 4)})
    target = ToyLM(lambda c: p, "ABC")
    draft = ToyLM(lambda c: q, "ABC")
    cases = warp_scenarios(target, draft, SamplingOptions(top_k=2), (), 1, 1)
    # drawn A w.p. 2/3, accepted w.p. min(1, p/q_raw) = 1; drawn B w.p. 1/3, accepted; residual never used
    assert cases["tokens from the warped draft, q from raw logits"]["law"] == Law({("A",): Fraction(2, 3), ("B",): Fraction(1, 3)})
    assert cases["tokens from the warped draft, q from raw logits"]["tv"] == Fraction(1, 6)


@given(gamma=st.integers(1, 3), lms=sms.toy_lm_pairs(3, 3))
@example(gamma=3, lms=(random_toy_lm(3, 5), random_toy_lm(3, 5)))  # the same model: every greedy draft is accepted
def test_greedy_round_is_a_point_mass_on_the_agreeing_prefix_plus_the_targets_argmax(gamma, lms):
    target, draft = lms
    assert greedy_round_law(target, draft, (), gamma) == point(greedy_round_prediction(target, draft, (), gamma))


def test_same_model_greedy_round_emits_gamma_plus_one_greedy_tokens():
    lm = random_toy_lm(3, 5)
    assert greedy_round_law(lm, lm, (), 3) == point(greedy_continuation(lm, (), 4))


def test_lowering_the_temperature_moves_the_target_law_towards_greedy():
    target, draft = random_toy_lm(3, 1), random_toy_lm(3, 101)
    rows = temperature_to_greedy(target, draft, (), 2, (1, 2, 4, 8))
    tvs = [row["tv_to_greedy"] for row in rows]
    assert tvs == sorted(tvs, reverse=True) and tvs[0] == Fraction(28, 33) and tvs[-1] == 0


def test_a_claimed_draft_law_that_gives_a_drawn_token_probability_zero_is_an_error():
    sampled = ToyLM(lambda c: Law({"A": Fraction(1, 2), "B": Fraction(1, 2)}), "AB")
    claimed = ToyLM(lambda c: Law({"A": 1, "B": 0}), "AB")
    with pytest.raises(LawError, match="claimed draft law gives it probability 0"):
        exact(mismatched_round, sampled, sampled, claimed, (), 1)
