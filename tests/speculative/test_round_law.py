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


def resample_from_p_rule(p, q, x):
    """A lossy rule: accept with min(1, p/q), resample from p itself (the residual forgotten)."""
    accept = min(Fraction(1), p[x] / q[x])
    return accept, (p if accept < 1 else None)


def _battery_rules() -> dict:
    """Every rule the project knows: the step's own, the bug zoo's lossy rules, the symbolic step's
    lossy rule as a step rule, and this module's lossy ones."""
    from specmath.bugzoo import rule_bugs
    from specmath.speculative.step import standard_rule
    from specmath.speculative.symbolic_step import SYMBOLIC_RULES, as_step_rule

    rules = {"standard": standard_rule}
    rules.update({name: getattr(rule_bugs, name) for name in rule_bugs.__all__ if name.endswith("_rule")})
    rules.update({f"symbolic {name}": as_step_rule(rule) for name, rule in SYMBOLIC_RULES.items()})
    rules.update({f.__name__: f for f in (reject_everything_rule, half_accept_rule, resample_from_p_rule)})
    return rules


def _battery_rounds():
    """(name, target, draft, gamma) for every instance of the rule battery (a few random ones): a step
    instance (p, q) as context-free LMs at gamma 1 and 2, a round instance on its seeded toy LMs."""
    from specmath.speculative.rule_check import rule_battery

    for inst in rule_battery(random_instances=6, seed=3):
        if inst.gamma:
            vocab = len(inst.p)
            yield inst.name, random_toy_lm(vocab, inst.seeds[0]), random_toy_lm(vocab, inst.seeds[1]), inst.gamma
            continue
        for gamma in (1, 2):
            yield f"{inst.name}, gamma {gamma}", constant_lm(inst.p, "p"), constant_lm(inst.q, "q"), gamma


def _law_or_error(compute, *args):
    try:
        return compute(*args)
    except ValueError as exc:  # LawError and the rule output's checks are ValueErrors
        return type(exc).__name__


def _program_law(*args) -> Law:
    return exact(speculative_round, *args).law


@pytest.mark.parametrize("rule_name", sorted(_battery_rules()))
def test_round_law_equals_the_interpreted_round_program_for_every_rule_of_the_battery(rule_name):
    # round_law is the fast second path: for every rule (lossy ones included) and every battery instance it
    # gives the law exact() finds for the program speculative_round, or both refuse the rule's output alike
    rule = _battery_rules()[rule_name]
    compared = 0
    for name, target, draft, gamma in _battery_rounds():
        fast = _law_or_error(round_law, target, draft, (), gamma, rule)
        program = _law_or_error(_program_law, target, draft, (), gamma, rule)
        assert fast == program, f"{rule_name} on {name}: round_law {fast!r} vs program {program!r}"
        compared += isinstance(fast, Law)
    assert compared >= 20  # most instances give a law: the comparison is not between two errors


def test_the_battery_rules_include_the_bug_zoo_rules_and_lossy_rules_that_move_the_round():
    from specmath.speculative.generate import autoregressive_law, completed_round_law

    rules = _battery_rules()
    assert {"softmax_residual_rule", "float32_uniform_le_rule", "always_accept_rule", "clamped_residual_rule"} <= set(rules)
    target, draft = random_toy_lm(3, 30), random_toy_lm(3, 130)
    wanted = autoregressive_law(target, (), 3)
    lossy = [name for name, rule in rules.items() if completed_round_law(target, draft, (), 2, rule) != wanted]
    assert len(lossy) >= 6, lossy


def test_the_round_program_emits_the_bonus_from_the_target_after_all_gamma_drafts():
    # the program itself (what `specmath verify` interprets): all gamma accepted w.p. alpha^gamma, then a
    # bonus token drawn from p(. | prefix x_1..x_gamma), the row after the last draft
    target, draft = random_toy_lm(3, 21), random_toy_lm(3, 22)
    gamma = 2
    law = exact(speculative_round, target, draft, (0,), gamma).law
    full = {e: w for e, w in law.items() if len(e) == gamma + 1}
    assert full, "no round emitted gamma + 1 tokens"
    drafts = {e[:gamma] for e in full}
    for accepted in drafts:
        mass = sum((w for e, w in full.items() if e[:gamma] == accepted), Fraction(0))
        bonus = Law({e[-1]: w / mass for e, w in full.items() if e[:gamma] == accepted})
        assert bonus == target((0,) + accepted), f"bonus after {accepted} is not p(. | prefix {accepted})"
