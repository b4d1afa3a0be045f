"""Adaptive draft lengths are lossless, exactly: confidence stop (max_x q(x) < t) and prompt lookup by match.

Notation: p = target law, q = draft law, gamma = the most draft tokens per round.
Toy LMs are drawn structurally (a bigram table of small integer weights, one row per last token),
so a failure shrinks to a small table, not to a seed.
"""

from fractions import Fraction

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from specmath.exact import exact
from specmath.laws import Law
from specmath.program import draw
from specmath.proofs import verify
from specmath.speculative import autoregressive_law
from specmath.speculative.confidence_stop import (
    confidence_stop_generation_law,
    confidence_stop_round,
    confidence_stop_round_law,
    expected_drafted,
)
from specmath.speculative.lookup_round import lookup_generation_law, lookup_proposal
from specmath.speculative.round import accept_block
from specmath.speculative.toy_lm import ToyLM
from specmath.speculative.variants import generation_law_of, round_law_of
from specmath.validation import InvalidArgument

VOCABS = {2: ("a", "b"), 3: ("a", "b", "c")}


@st.composite
def bigram_lms(draw_, vocab: tuple, name: str) -> ToyLM:
    """A toy LM whose law is table[last token] (None: empty context); weights 0..3, at least one positive."""
    rows = {}
    for last in (None, *vocab):
        weights = draw_(st.lists(st.integers(0, 3), min_size=len(vocab), max_size=len(vocab)).filter(any))
        rows[last] = Law.from_weights(dict(zip(vocab, weights, strict=True)))
    return ToyLM(lambda c: rows[c[-1] if c else None], vocab, name=name)


@st.composite
def toy_pairs(draw_):
    vocab = VOCABS[draw_(st.sampled_from(sorted(VOCABS)))]
    return draw_(bigram_lms(vocab, "p")), draw_(bigram_lms(vocab, "q"))


thresholds = st.one_of(st.sampled_from([Fraction(0), Fraction(1, 2), Fraction(1)]),
                       st.fractions(min_value=0, max_value=1, max_denominator=12))


# each example builds generation laws over 2-3 tokens of up to 3-token vocabularies: ~0.1-1 s
@settings(max_examples=40, deadline=None)
@given(pair=toy_pairs(), gamma=st.integers(1, 3), threshold=thresholds, length=st.integers(1, 3))
@example(pair=(ToyLM(lambda c: Law({"a": Fraction(1, 2), "b": Fraction(1, 2)}), ("a", "b")),
               ToyLM(lambda c: Law({"a": Fraction(3, 4), "b": Fraction(1, 4)}), ("a", "b"))),
         gamma=2, threshold=Fraction(3, 4), length=3)
def test_confidence_stop_generation_law_equals_the_targets_autoregressive_law(pair, gamma, threshold, length):
    target, draft = pair
    law = confidence_stop_generation_law(target, draft, (), gamma, threshold, length)
    assert law == autoregressive_law(target, (), length)


@settings(max_examples=40, deadline=None)
@given(pair=toy_pairs(), gamma=st.integers(1, 3), prefix=st.lists(st.sampled_from("ab"), max_size=5), length=st.integers(1, 3))
@example(pair=(ToyLM(lambda c: Law({"a": Fraction(1, 3), "b": Fraction(2, 3)}), ("a", "b")), None),
         gamma=3, prefix=["a", "b", "a"], length=3)
def test_lookup_rounds_proposing_what_the_match_offers_are_lossless(pair, gamma, prefix, length):
    target, _ = pair
    assert lookup_generation_law(target, tuple(prefix), gamma, length) == autoregressive_law(target, tuple(prefix), length)


def test_lookup_proposes_the_tokens_after_the_latest_match_and_nothing_without_one():
    assert lookup_proposal(("a", "b", "c", "a", "b", "d", "a", "b"), 3) == ("d", "a", "b")
    assert lookup_proposal(("a", "b", "c", "a"), 5) == ("b", "c", "a")  # fewer than gamma: what the match offers
    assert lookup_proposal(("a", "b", "c"), 3) == ()  # no earlier "c": no proposal, one plain step


def test_threshold_zero_is_the_standard_round_and_one_is_plain_decoding():
    # two ends of the dial: t = 0 never stops (gamma drafts); t = 1 stops unless q is one-hot
    p = ToyLM(lambda c: Law({"a": Fraction(1, 3), "b": Fraction(2, 3)}), ("a", "b"))
    q = ToyLM(lambda c: Law({"a": Fraction(1, 2), "b": Fraction(1, 2)}), ("a", "b"))
    assert expected_drafted(p, q, (), 3, 0) == 3
    assert expected_drafted(p, q, (), 3, 1) == 0
    assert confidence_stop_round_law(p, q, (), 3, 1) == Law({("a",): Fraction(1, 3), ("b",): Fraction(2, 3)})
    assert exact(confidence_stop_round, p, q, (), 2, 0).expected_cost("draft") == 2


def test_bad_thresholds_are_an_error():
    p = ToyLM(lambda c: Law({"a": 1, "b": 0}), ("a", "b"))
    for bad in (Fraction(3, 2), -1):
        with pytest.raises(InvalidArgument, match=r"^the confidence threshold must be a number in \[0, 1\], got "):
            confidence_stop_round_law(p, p, (), 2, bad)


def _stop_on_drafted_token_round(target, draft, prefix, gamma, threshold):
    # the contrast: decide AFTER drawing x_i, on q_i(x_i), and drop x_i; then x_i is not q_i-distributed
    tokens, q_laws = (), ()
    for _ in range(gamma):
        q = draft(prefix + tokens)
        x = yield draw(q, label="draft token")
        if q[x] < threshold:
            break
        tokens, q_laws = tokens + (x,), q_laws + (q,)
    return (yield from accept_block(target, prefix, tokens, q_laws))


def test_stopping_on_the_drafted_tokens_probability_is_lossy_so_the_criterion_matters():
    # p = {a: 1/2, b: 1/2}, q = {a: 3/4, b: 1/4}, t = 1/2: a drafted token is always "a", so P(first = a) = 5/8 != 1/2
    p = ToyLM(lambda c: Law({"a": Fraction(1, 2), "b": Fraction(1, 2)}), ("a", "b"))
    q = ToyLM(lambda c: Law({"a": Fraction(3, 4), "b": Fraction(1, 4)}), ("a", "b"))
    lossy = generation_law_of(lambda c: round_law_of(_stop_on_drafted_token_round, p, q, c, 1, Fraction(1, 2)), (), 1)
    assert lossy == Law({("a",): Fraction(5, 8), ("b",): Fraction(3, 8)})
    assert confidence_stop_generation_law(p, q, (), 1, Fraction(1, 2), 1) == autoregressive_law(p, (), 1)


@pytest.mark.parametrize("name", ["confidence-stop", "lookup-adaptive"])
def test_adaptive_verifications_are_lossless_and_the_threshold_shortens_the_draft(name):
    v = verify(name)
    assert v.lossless and v.tv == 0
    if name == "confidence-stop":
        assert v.extras["E[draft tokens per round], threshold 3/4"] < v.extras["E[draft tokens per round], threshold 0"]
