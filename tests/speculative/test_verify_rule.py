"""verify_rule / `specmath verify-rule`: the standard rule passes the battery, lossy rules get a counterexample."""

from fractions import Fraction

import pytest

from specmath.cli import main
from specmath.laws import Law, tv_distance
from specmath.speculative import standard_rule, step_law
from specmath.speculative.rule_check import rule_battery, verify_rule


def accept_always(p, q, x):
    """Lossy: keeps every draft token, so the output law is q."""
    return Fraction(1), None


def residual_from_p(p, q, x):
    """Lossy: resamples from p instead of norm(max(0, p - q))."""
    return min(Fraction(1), p[x] / q[x]), p


def raises_when_p_equals_q(p, q, x):
    """Crashes: builds the residual even when no rejection can happen (an error, not a loss)."""
    excess = {y: max(Fraction(0), p[y] - q[y]) for y in p}
    total = sum(excess.values())
    return min(Fraction(1), p[x] / q[x]), Law({y: w / total for y, w in excess.items()})


def test_standard_rule_is_lossless_on_every_instance_of_the_battery():
    report = verify_rule(standard_rule)
    assert report.lossless and report.smallest_counterexample is None
    assert report.text() == f"lossless on all {report.instances} instances"


def test_battery_contains_the_edge_cases_it_promises():
    names = {inst.name for inst in rule_battery(0)}
    for case in ["p == q", "disjoint supports", "one-hot p", "one-hot q", "single token", "zeros on both sides"]:
        assert case in names
    assert any(inst.gamma >= 1 for inst in rule_battery(0))


def test_accept_always_gets_the_smallest_counterexample_with_its_exact_tv():
    report = verify_rule(accept_always)
    worst = report.smallest_counterexample
    assert not report.lossless
    # the smallest failing instance has two tokens, and there the law is q: TV = TV(q, p)
    assert len(worst.instance.p) == 2
    assert worst.law == worst.instance.q
    assert worst.tv == tv_distance(worst.instance.q, worst.instance.p) > 0
    assert "NOT lossless" in report.text() and str(worst.tv) in report.text()


def test_resampling_from_p_is_lossy_by_the_exact_amount():
    p, q = Law({"A": Fraction(7, 10), "B": Fraction(3, 10)}), Law({"A": Fraction(2, 5), "B": Fraction(3, 5)})
    report = verify_rule(residual_from_p)
    failure = next(f for f in report.failures if f.instance.name == "two-token world")
    assert failure.law == step_law(p, q, residual_from_p)
    assert failure.tv == tv_distance(step_law(p, q, residual_from_p), p)


def dict_residual_rule(p, q, x):
    """Lossless, with its resample law a plain dict."""
    accept = min(Fraction(1), p[x] / q[x])
    excess = {y: max(Fraction(0), p[y] - q[y]) for y in p}
    total = sum(excess.values())
    return accept, ({y: w / total for y, w in excess.items()} if accept < 1 else None)


def test_a_rule_that_raises_is_an_error_never_a_loss():
    report = verify_rule(raises_when_p_equals_q)
    assert report.verdict == "error" and not report.lossless
    assert not report.failures  # where it did not raise, it is exact
    first = report.smallest_error
    assert first.instance.name == "single token" and "ZeroDivisionError" in first.error
    assert isinstance(first.exception, ZeroDivisionError)
    text = report.text()
    assert text.startswith("ERROR: the rule raised") and "NOT lossless" not in text
    assert "in raises_when_p_equals_q" in text  # the traceback summary shows the rule's own frame


def test_invalid_outputs_are_errors_with_the_reason_never_losses():
    report = verify_rule(lambda p, q, x: (Fraction(3, 2), None))
    assert report.verdict == "error" and not report.failures
    assert "the accept probability of token 'A' is 3/2, not in [0, 1]" in report.smallest_error.invalid
    assert report.text().startswith("ERROR: the rule returned invalid output on 54 of 54 instances")


def test_a_resample_law_may_be_a_plain_dict():
    assert verify_rule(dict_residual_rule).lossless


def test_verify_rule_rejects_a_non_callable_and_a_bad_instance_count():
    with pytest.raises(ValueError, match="callable"):
        verify_rule("standard_rule")
    with pytest.raises(ValueError, match="random_instances"):
        verify_rule(standard_rule, random_instances=-1)


RULES_FILE = '''
from fractions import Fraction
from specmath.speculative import standard_rule

def good(p, q, x):
    return standard_rule(p, q, x)

def bad(p, q, x):
    return Fraction(1), None

def with_dict(p, q, x):
    accept = min(Fraction(1), p[x] / q[x])
    excess = {y: max(Fraction(0), p[y] - q[y]) for y in p}
    total = sum(excess.values())
    return accept, ({y: w / total for y, w in excess.items()} if accept < 1 else None)

def crashes(p, q, x):
    raise RuntimeError("my sampler is not finished")
'''


def test_cli_verify_rule_exit_status_and_messages(tmp_path, capsys):
    path = tmp_path / "user_rules.py"
    path.write_text(RULES_FILE)
    assert main(["verify-rule", f"{path}:good", "--random", "5"]) == 0
    assert "lossless on all" in capsys.readouterr().out
    assert main(["verify-rule", f"{path}:bad", "--random", "5"]) == 1
    out = capsys.readouterr().out
    assert "smallest counterexample" in out and "TV distance" in out
    assert main(["verify-rule", f"{path}:missing"]) == 2
    assert "no attribute 'missing'" in capsys.readouterr().err
    assert main(["verify-rule", "no_colon_here"]) == 2
    assert "module:function" in capsys.readouterr().err
    assert main(["verify-rule", "specmath.speculative.step:standard_rule", "--random", "3"]) == 0
    assert main(["verify-rule", f"{path}:with_dict", "--random", "5"]) == 0
    assert "lossless on all" in capsys.readouterr().out
    assert main(["verify-rule", f"{path}:crashes", "--random", "5"]) == 2
    captured = capsys.readouterr()
    assert "NOT lossless" not in captured.out + captured.err
    assert "RuntimeError: my sampler is not finished" in captured.err and "in crashes" in captured.err
