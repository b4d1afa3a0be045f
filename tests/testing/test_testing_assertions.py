"""specmath.testing: exact assertions name the smallest counterexample; raising code is an error, not a loss."""

import re
from fractions import Fraction

import pytest

from specmath.audit.rounds.builtin_adapters import specmath_torch_round
from specmath.audit.rounds.cases import case_named
from specmath.bugzoo import BUGS
from specmath.bugzoo.rule_bugs import always_accept_rule, softmax_residual_rule
from specmath.classic.rand7 import rand7_basic
from specmath.laws import Law, LawError, uniform
from specmath.program import die
from specmath.settings import CI, AuditSettings
from specmath.speculative.reference_round import reference_sample_round
from specmath.speculative.step import standard_rule
from specmath.testing import SamplerError, assert_lossless, assert_rule_lossless, assert_sampler_lossless
from specmath.validation import InvalidArgument

# two small cases keep these tests to seconds; the full battery runs in tests/audit
CASES = (case_named("context-g3"), case_named("disjoint-supports"))


def test_the_standard_rule_passes():
    assert_rule_lossless(standard_rule)


def test_always_accept_fails_with_the_shrunk_counterexample_and_its_exact_tv():
    with pytest.raises(AssertionError) as info:
        assert_rule_lossless(always_accept_rule)
    message = str(info.value)
    # Hypothesis shrinks to two one-hot laws on different tokens; the law is q, so TV = TV(q, p) = 1
    assert "shrunk by Hypothesis" in message
    assert "p = {'A': 1, 'B': 0}" in message and "q = {'A': 0, 'B': 1}" in message
    assert "TV(law, p) = 1\n" in message and "difference" in message


def test_resampling_from_p_shrinks_to_the_two_token_counterexample_with_tv_one_quarter():
    def resample_from_p(p, q, x):
        return min(Fraction(1), p[x] / q[x]), p

    with pytest.raises(AssertionError) as info:
        assert_rule_lossless(resample_from_p)
    # q = one-hot A: A accepted w.p. 1/2, else resampled from p; P(A) = 3/4, TV = 1/4
    assert "p = {'A': 1/2, 'B': 1/2}" in str(info.value) and "q = {'A': 1, 'B': 0}" in str(info.value)
    assert "TV(law, p) = 1/4" in str(info.value)


def test_a_tiny_loss_is_still_named_exactly():
    # a long fraction (a float's binary value) is printed as a decimal, the exact value beside it
    with pytest.raises(AssertionError, match=r"TV\(law, p\) = 0\.2689 \(exactly 2251799813685248/8372826328553321\)\n"):
        assert_rule_lossless(softmax_residual_rule)


def test_without_shrinking_the_battery_instance_is_named():
    with pytest.raises(AssertionError, match="battery instance"):
        assert_rule_lossless(always_accept_rule, shrink=False)


def test_a_rule_that_raises_is_a_sampler_error_chained_to_its_exception():
    def unfinished(p, q, x):
        raise NotImplementedError("resample step")

    with pytest.raises(SamplerError, match="raised on 54 of 54 instances") as info:
        assert_rule_lossless(unfinished)
    assert isinstance(info.value.__cause__, NotImplementedError)
    assert "NOT lossless" not in str(info.value)


def biased_rand7():
    """Lossy: maps 1..25 onto 1..7 by x mod 7, with no rejection."""
    a = yield die(5)
    b = yield die(5)
    return (5 * (a - 1) + b - 1) % 7 + 1


def test_assert_lossless_on_programs():
    assert_lossless(rand7_basic, target=uniform(range(1, 8)))
    assert_lossless(lambda: (yield die(2)), target={1: 0.5, 2: 0.5})  # a dict of floats is a target
    with pytest.raises(AssertionError) as info:
        assert_lossless(biased_rand7, target=uniform(range(1, 8)))
    # 25 = 3 * 7 + 4: outcomes 1..4 get 4/25, outcomes 5..7 get 3/25; TV = 4 (4/25 - 1/7) = 12/175
    assert "TV(law, target) = 12/175" in str(info.value) and "4/25" in str(info.value)


def test_assert_lossless_reports_a_raising_program_and_a_bad_target():
    def broken():
        yield die(2)
        raise KeyError("state")

    with pytest.raises(SamplerError, match="KeyError") as info:
        assert_lossless(broken, target={1: 1})
    assert isinstance(info.value.__cause__, KeyError)
    with pytest.raises(LawError, match="Law.from_weights"):
        assert_lossless(rand7_basic, target={1: 0.5, 2: 0.6})


def test_a_correct_sampler_passes_and_the_level_is_one_in_a_million():
    report = assert_sampler_lossless(reference_sample_round, n=2000, cases=CASES)
    assert report.passed and [c.n for c in report.cases] == [2000, 2000]
    # the stated level is 1e-6; the float-rounding slack (< 1e-9 here) is set aside before the tests share the
    # rest: same arithmetic in another order, so a relative tolerance of 1e-12 for the rounding of the sums
    slack = 2000 * (7 * 4 + 7 * 4) * 2.0**-53
    assert report.settings.family_level == CI.family_level == 1e-6
    assert report.rounding_slack == pytest.approx(slack, rel=1e-12)
    tests = sum(c.gamma + 2 for c in report.cases)
    assert report.test_level == pytest.approx((CI.family_level - slack) / tests, rel=1e-12)


def test_a_correct_torch_sampler_passes_with_a_torch_generator():
    pytest.importorskip("torch")
    assert assert_sampler_lossless(specmath_torch_round, generator="torch", n=1000, cases=CASES[:1]).passed


def test_a_buggy_sampler_fails_with_the_failing_cases_table():
    # bonus drawn from the wrong row: emits tuples of exact probability 0, caught at the first look
    with pytest.raises(AssertionError) as info:
        assert_sampler_lossless(BUGS["bonus-from-wrong-row"].sample_round, cases=CASES, settings="dev")
    message = str(info.value)
    assert "NOT lossless" in message and "context-g3" in message and "worst test" in message


def test_a_sampler_that_raises_is_a_sampler_error_not_a_loss():
    def unfinished(target_probs, draft_probs, draft_tokens, generator):
        raise RuntimeError("no residual yet")

    with pytest.raises(SamplerError, match="raised on valid input") as info:
        assert_sampler_lossless(unfinished, n=50, cases=CASES)
    assert isinstance(info.value.__cause__, RuntimeError)
    assert "NOT lossless" not in str(info.value)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"generator": "jax"}, r"^unknown generator 'jax'; choose from: numpy, torch$"),
     ({"n": 0}, r"^n \(rounds per case\) must be an int >= 1, got 0$"), ({"cases": ()}, "empty")],
)
def test_bad_arguments_are_value_errors(kwargs, match):
    with pytest.raises(InvalidArgument, match=match):
        assert_sampler_lossless(reference_sample_round, **kwargs)


def test_a_float_mapping_law_is_exact_in_assert_lossless():
    # the sum of the draws of two fair coins: a plain dict target read as decimals
    def two_coins():
        a = yield die(2)
        b = yield die(2)
        return a + b

    assert_lossless(two_coins, target={2: 0.25, 3: 0.5, 4: 0.25})
    with pytest.raises(AssertionError, match="TV"):
        assert_lossless(two_coins, target=Law({2: Fraction(1, 3), 3: Fraction(1, 3), 4: Fraction(1, 3)}))


def test_a_failure_names_its_worst_cells_the_bonus_position_and_each_failed_probe():
    with pytest.raises(AssertionError) as info:
        assert_sampler_lossless(BUGS["bonus-from-wrong-row"].sample_round, n=2000, cases=["context-g3"])
    message = str(info.value)
    assert "context-g3 (gamma = 3, V = 4, N = 2000)" in message
    assert re.search(r"position 3 \(bonus\): G = [\d.]+, p = \S+ < \S+; worst cells \(observed vs expected count\):\n"
                     r"      \d: observed \d+, expected [\d.]+\n", message), message
    assert re.search(r"      \(\d, \d, \d, \d\): observed \d+, expected 0\.0 \(impossible\)", message)
    assert re.search(r"zero probe k=0 \(draw 0 = 0\.0, the accept uniform of position 0; drafts \[\d, \d, \d\]\): "
                     r"emitted \(\d, \d, \d, \d\), which has exact probability 0", message)


def test_a_batched_sampler_is_audited_sequentially_too():
    from specmath.speculative.reference_rounds import reference_sample_rounds

    sequential = AuditSettings(n=1600, sequential=True)
    assert assert_sampler_lossless(reference_sample_rounds, batched=True, settings=sequential, cases=CASES).passed
    with pytest.raises(AssertionError, match="NOT lossless"):
        assert_sampler_lossless(lambda tp, dp, dt, g: reference_sample_rounds(tp[:, ::-1].copy(), dp, dt, g), batched=True,
                                settings=sequential, cases=CASES)


def float_rule(p, q, x):
    """The standard rule in float64: right up to rounding."""
    accept = min(1.0, float(p[x]) / float(q[x]))
    excess = {y: max(0.0, float(p[y]) - float(q[y])) for y in p}
    total = sum(excess.values())
    return accept, ({y: w / total for y, w in excess.items()} if accept < 1 else None)


def test_a_float_rule_passes_up_to_a_stated_tv_and_the_exact_default_is_unchanged():
    assert_rule_lossless(float_rule, max_tv=1e-12)
    with pytest.raises(SamplerError, match=r"its weights sum to 1 [+-] \d(\.\d)?e-1\d \(a float rule is checked up to a bound, "
                                           r"max_tv=1e-12 or specmath verify-rule --max-tv 1e-12,"):
        assert_rule_lossless(float_rule)  # exact: its resample weights do not sum to 1
    # a real loss is still one with a bound: resampling from p is off by TV 1/4 on two tokens
    with pytest.raises(AssertionError, match=r"\(TV above max_tv = 1e-12\)"):
        assert_rule_lossless(lambda p, q, x: (min(Fraction(1), p[x] / q[x]), p), max_tv=1e-12)
