"""Sample-match (keep the draft while the target's own sample matches) is lossless but accepts less."""

from fractions import Fraction

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from specmath import strategies as sms
from specmath.exact import exact
from specmath.laws import Law, LawError
from specmath.speculative import acceptance_rate, autoregressive_law
from specmath.speculative.examples import PAPER_EXAMPLE
from specmath.speculative.sample_match import (
    acceptance_gap,
    match_acceptance,
    sample_match_block,
    sample_match_generation_law,
    sample_match_round_law,
    sample_match_step,
    sampled_vs_tokenwise,
)
from specmath.speculative.toy_lm import random_toy_lm
from specmath.speculative.variants import completion_law_of

VOCAB = ("A", "B", "C")
def law(ws):
    return Law.from_weights(dict(zip(VOCAB, ws, strict=True)))


@settings(deadline=None)
@given(pq=sms.law_pairs(vocab=VOCAB))
@example(pq=(law([1, 0, 0]), law([1, 0, 0])))  # the same one-hot law: equality, both accept always
@example(pq=(law([1, 0, 0]), law([0, 1, 1])))  # disjoint supports: equality, both accept never
@example(pq=(law([1, 1, 0]), law([1, 1, 0])))  # p == q but not one-hot: strictly less (1/2 < 1)
@example(pq=(law([1, 2, 0]), law([0, 1, 0])))  # a one-hot (n-gram) draft: equality, both accept p(B) = 2/3
def test_sample_match_step_emits_p_and_accepts_sum_pq_which_is_at_most_alpha(pq):
    p, q = pq
    result = exact(sample_match_step, p, q)
    assert result.law.map(lambda out: out[0]) == p
    assert result.law.P(lambda out: out[1]) == match_acceptance(p, q)
    assert match_acceptance(p, q) <= acceptance_rate(p, q)
    # equality exactly when p q = min(p, q) everywhere: max(p, q) = 1 on every shared token
    equal = all(min(p[x], q[x]) == 0 or max(p[x], q[x]) == 1 for x in VOCAB)
    assert (acceptance_gap(p, q) == 0) == equal


def test_sample_match_on_the_paper_example_accepts_4_9_where_min_rule_accepts_2_3():
    target, draft = PAPER_EXAMPLE
    p, q = target(()), draft(())
    assert (match_acceptance(p, q), acceptance_rate(p, q)) == (Fraction(4, 9), Fraction(2, 3))
    assert sampled_vs_tokenwise(target, draft, (), 2) == {"token-wise": Fraction(10, 9), "sample-match": Fraction(52, 81)}


# a round law, its completion and the token-wise comparison, each exact (V^(2 gamma + 1) tuples): 10 take seconds
@settings(max_examples=10, deadline=None)
@given(lms=sms.toy_lm_pairs(1, 3), gamma=st.integers(1, 3))
@example(lms=(random_toy_lm(3, 1), random_toy_lm(3, 101)), gamma=3)
def test_sample_match_round_is_lossless_and_never_beats_the_min_rule_for_random_toy_lms(lms, gamma):
    target, draft = lms
    law_ = sample_match_round_law(target, draft, (), gamma)
    assert completion_law_of(law_, target, (), gamma + 1) == autoregressive_law(target, (), gamma + 1)
    compared = sampled_vs_tokenwise(target, draft, (), gamma)
    assert compared["sample-match"] <= compared["token-wise"]


def test_sample_match_generation_equals_autoregressive_law_over_several_rounds():
    target, draft = random_toy_lm(3, 4), random_toy_lm(3, 8)
    assert sample_match_generation_law(target, draft, (1,), 2, 4) == autoregressive_law(target, (1,), 4)


def test_sample_match_rejects_mismatched_tokens_and_laws_and_vocabularies():
    target, _ = PAPER_EXAMPLE
    with pytest.raises(LawError, match="1 draft tokens but 0 draft laws"):
        exact(sample_match_block, target, (), ("a",), ())
    with pytest.raises(LawError, match="different vocabularies"):
        match_acceptance(Law({"a": 1}), Law({"b": 1}))
