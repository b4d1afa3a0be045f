"""The round law computed by recursion equals the exact law of the round program (one program, two meanings)."""

from fractions import Fraction

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from specmath import strategies as sms
from specmath.exact import exact
from specmath.laws import Law, LawError, tv_distance
from specmath.speculative import round_law, speculative_round
from specmath.speculative.toy_lm import ToyLM, random_toy_lm

P_AB = Law({"A": Fraction(7, 10), "B": Fraction(3, 10)})
Q_AB = Law({"A": Fraction(2, 5), "B": Fraction(3, 5)})


def constant_lm(law: Law, name: str) -> ToyLM:
    return ToyLM(lambda ctx: law, tuple(law), name=name)


def test_round_law_equals_exact_law_of_round_program_for_two_token_world_gamma_1_to_3():
    target, draft = constant_lm(P_AB, "p"), constant_lm(Q_AB, "q")
    for gamma in range(1, 4):
        assert round_law(target, draft, (), gamma) == exact(speculative_round, target, draft, (), gamma).law


# the exact program explores up to V^gamma draft paths per example: 40 examples keep this test near a second
@settings(max_examples=40, deadline=None)
@given(lms=sms.toy_lm_pairs(1, 3), gamma=st.integers(0, 3))
@example(lms=(random_toy_lm(1, 0), random_toy_lm(1, 0)), gamma=2)
@example(lms=(random_toy_lm(3, 5), random_toy_lm(3, 5)), gamma=3)  # p == q
def test_round_law_equals_exact_law_of_round_program_for_random_toy_lms(lms, gamma):
    target, draft = lms
    assert round_law(target, draft, (0,), gamma) == exact(speculative_round, target, draft, (0,), gamma).law


def reject_everything_rule(p, q, x):
    """A lossy rule: always reject and resample from q (so the round emits one draft-law token)."""
    return Fraction(0), q


def half_accept_rule(p, q, x):
    """A lossy rule: accept every token with probability 1/2, resample from p."""
    return Fraction(1, 2), p


@pytest.mark.parametrize("rule", [reject_everything_rule, half_accept_rule])
def test_round_law_follows_a_custom_rule_exactly_like_the_program(rule):
    target, draft = random_toy_lm(3, 11), random_toy_lm(3, 12)
    for gamma in (1, 2, 3):
        assert round_law(target, draft, (1,), gamma, rule) == exact(speculative_round, target, draft, (1,), gamma, rule).law


def test_round_emits_between_one_and_gamma_plus_one_tokens_and_the_bonus_only_after_all_accepted():
    target, draft = constant_lm(P_AB, "p"), constant_lm(Q_AB, "q")
    law = round_law(target, draft, (), 3)
    assert {len(e) for e in law.support} == {1, 2, 3, 4}
    # alpha = 7/10 here: P(all 3 accepted) = alpha^3, and then the bonus is drawn from p
    alpha = Fraction(7, 10)
    assert law.P(lambda e: len(e) == 4) == alpha**3


def test_round_with_identical_target_and_draft_always_emits_gamma_plus_one_tokens():
    lm = random_toy_lm(3, 4)
    law = round_law(lm, lm, (), 2)
    assert law.P(lambda e: len(e) == 3) == 1


@pytest.mark.parametrize("bad_prefix", ["AB", 3, None])
def test_round_rejects_a_prefix_that_is_not_a_tuple_of_tokens(bad_prefix):
    lm = random_toy_lm(2, 0)
    with pytest.raises(ValueError, match="prefix must be a tuple"):
        round_law(lm, lm, bad_prefix, 1)


@pytest.mark.parametrize("bad_gamma", [-1, 1.5, True])
def test_round_rejects_a_gamma_that_is_not_a_nonnegative_integer(bad_gamma):
    lm = random_toy_lm(2, 0)
    with pytest.raises(ValueError, match="gamma"):
        round_law(lm, lm, (), bad_gamma)


def test_round_rejects_target_and_draft_over_different_vocabularies():
    target, draft = random_toy_lm(2, 0), random_toy_lm(3, 0)
    with pytest.raises(ValueError, match="different vocabularies"):
        round_law(target, draft, (), 1)
    with pytest.raises(ValueError, match="different vocabularies"):
        exact(speculative_round, target, draft, (), 1)


def test_round_rejects_a_rule_with_accept_probability_outside_zero_one():
    lm = random_toy_lm(2, 0)
    with pytest.raises(ValueError, match="not in \\[0, 1\\]"):
        round_law(lm, random_toy_lm(2, 1), (), 1, lambda p, q, x: (Fraction(3, 2), p))


def test_round_rejects_a_rule_that_rejects_without_a_resample_law():
    with pytest.raises(LawError, match="no law to resample"):
        round_law(random_toy_lm(2, 0), random_toy_lm(2, 1), (), 1, lambda p, q, x: (Fraction(0), None))


def test_a_model_may_return_any_mapping_and_anything_else_is_named():
    def plain_dict_lm(context):
        return {"A": Fraction(1, 2), "B": Fraction(1, 2)}

    good = ToyLM(lambda c: Law({"A": Fraction(1, 2), "B": Fraction(1, 2)}), ("A", "B"))
    assert round_law(plain_dict_lm, good, (), 1) == round_law(good, good, (), 1)
    assert exact(speculative_round, good, plain_dict_lm, (), 1).law == round_law(good, good, (), 1)
    with pytest.raises(LawError, match=r"^the target model returned list for context \(\): a model returns a Mapping"):
        round_law(lambda c: [0.5, 0.5], good, (), 1)
    with pytest.raises(LawError, match=r"^the draft model's law at context \(\) is not normalised"):
        round_law(good, lambda c: {"A": 0.5, "B": 0.6}, (), 1)


def test_sampled_round_program_fits_the_exact_round_law_and_detects_tv_0_09():
    """Power: with n = 3000 seeded samples the G-test (level 1e-6) rejects any law at TV >= 0.09 from
    the exact round law with probability >= 0.99 (``detectable_tv`` says so below)."""
    import numpy as np

    from specmath.sampled import sample
    from specmath.stats import detectable_tv, g_test

    target, draft = random_toy_lm(3, 30), random_toy_lm(3, 130)
    law = round_law(target, draft, (0,), 2)
    n = 3000
    assert detectable_tv(law, n) < 0.09
    rng = np.random.default_rng(2026)
    counts = {}
    for _ in range(n):
        emitted = sample(speculative_round, target, draft, (0,), 2, rng=rng)
        counts[emitted] = counts.get(emitted, 0) + 1
    assert g_test(counts, law).p_value > 1e-6
    # and the same counts do reject a lossy round (accept every draft token, TV = 185/252 from the exact law)
    lossy = round_law(target, draft, (0,), 2, lambda p, q, x: (Fraction(1), None))
    assert tv_distance(law, lossy) == Fraction(185, 252)
    assert g_test(counts, lossy).p_value < 1e-6
