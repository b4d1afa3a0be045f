"""The records of the statistical side: AuditSettings and its profiles, and GTest, the one G-test result.

Every audit reads its strength from one ``specmath.settings.AuditSettings``; every G-test it runs is one
``specmath.stats.GTest`` (the engine audit's ``Check`` and the histograms' ``HistogramCheck`` add only their
own fields). The numbers compared with == here are literals passed through, not results of arithmetic.
"""

from __future__ import annotations

import dataclasses
import doctest
import math
from collections import Counter

import pytest

from specmath import settings as settings_module
from specmath.audit.power import ExpectedLaws, json_of, looks, run_tests
from specmath.audit.rounds.runner import test_level
from specmath.laws import Law
from specmath.settings import CI, PROFILES, SETTING_NAMES, AuditSettings, as_settings, settings_named
from specmath.stats import GTest, detectable_tv, g_test
from specmath.validation import InvalidArgument, UnknownName


def test_the_settings_doctests_pass():
    assert doctest.testmod(settings_module).failed == 0


def test_ci_is_every_default_and_the_profiles_differ_only_in_power():
    assert CI == AuditSettings() == settings_named("ci") == as_settings(None) == as_settings("ci")
    assert (CI.n, CI.generate_calls, CI.family_level, CI.power, CI.seed, CI.sequential) == (20_000, 2_000, 1e-6, 0.99, 0, False)
    dev, thorough = PROFILES["dev"], PROFILES["thorough"]
    assert dev.n < CI.n < thorough.n and dev.generate_calls < CI.generate_calls < thorough.generate_calls
    assert dev.sequential and not thorough.sequential
    # the false-failure bound and the power it is stated at are the same in every profile
    assert {(s.family_level, s.power, s.seed) for s in PROFILES.values()} == {(1e-6, 0.99, 0)}
    assert SETTING_NAMES == tuple(f.name for f in dataclasses.fields(AuditSettings))


def test_a_profile_is_changed_by_name_and_every_value_is_checked():
    changed = CI.replace(n=300, seed=7, sequential=True)
    assert (changed.n, changed.seed, changed.sequential, changed.family_level) == (300, 7, True, CI.family_level)
    assert CI.n == 20_000  # frozen: replace returns a new record
    with pytest.raises(UnknownName, match=r"unknown audit setting 'rounds'; choose from: n, generate_calls"):
        CI.replace(rounds=3)
    with pytest.raises(UnknownName, match=r"unknown audit profile 'thorogh' \(did you mean 'thorough'\?\)"):
        settings_named("thorogh")
    for bad, message in [(dict(n=0), "n \\(rounds per case\\) must be an int >= 1"),
                         (dict(family_level=1.0), "family_level must be a finite number in \\(0, 1\\)"),
                         (dict(power=0), "power must be"), (dict(seed=-1), "seed must be an int >= 0"),
                         (dict(sequential=1), "sequential must be True or False, got 1"),
                         (dict(generate_calls=2.5), "generate_calls must be an int")]:
        with pytest.raises(InvalidArgument, match=message):
            AuditSettings(**bad)
    with pytest.raises(InvalidArgument, match="settings must be an AuditSettings or a profile name"):
        as_settings(20_000)


def test_the_level_of_each_test_is_the_family_level_less_the_slack_over_tests_and_looks():
    # Bonferroni: slack + tests x level = family level; sequential mode has 5 looks
    assert test_level(CI.family_level, 0.0, 10) == CI.family_level / 10
    assert len(looks(CI.n, True)) == 5
    with pytest.raises(InvalidArgument, match="half the family level"):
        test_level(CI.family_level, CI.family_level / 2, 10)


def test_g_test_returns_the_record_with_no_verdict_until_it_is_judged():
    law = Law.from_weights({"a": 1, "b": 1})
    raw = g_test(Counter({"a": 520, "b": 480}), law)
    assert isinstance(raw, GTest) and raw.n == 1000 and raw.dof == 1 and raw.level is None
    with pytest.raises(ValueError, match="has no level: judge it first"):
        assert raw.rejects
    judged = raw.judged("coin", 1e-6, 0.99, detectable_tv(law, 1000), measured_tv=0.02)
    assert (judged.name, judged.level, judged.power, judged.measured_tv) == ("coin", 1e-6, 0.99, 0.02)
    assert judged.passed and not judged.rejects and judged.statistic == raw.statistic
    # an impossible outcome is a certain rejection, at any level
    impossible = g_test(Counter({"a": 10, "c": 1}), law).judged("coin", 1e-6)
    assert impossible.p_value == 0.0 and math.isinf(impossible.statistic) and impossible.rejects
    assert impossible.impossible == ("c",)


def test_detectable_tv_defaults_to_the_audits_level_and_power():
    law = Law.from_weights({x: 1 for x in range(6)})
    assert detectable_tv(law, 2000) == detectable_tv(law, 2000, CI.family_level, CI.power)
    # more samples, smaller detectable TV (it shrinks like 1 / sqrt(N))
    assert detectable_tv(law, 20_000) < detectable_tv(law, 2000)


def test_a_round_audit_test_is_the_record_and_writes_the_reports_json():
    joint = Law.from_weights({(0,): 1, (1,): 1})
    expected = ExpectedLaws(joint, (Law.from_weights({0: 1, 1: 1}),))
    counts = Counter({(0,): 300, (1,): 100})  # far off: rejected, with worst cells
    tests = run_tests(expected, counts, 1e-8, 0.99, final=True)
    assert all(isinstance(t, GTest) and t.power == 0.99 and t.level == 1e-8 for t in tests)
    data = json_of(tests[0])
    assert list(data) == ["name", "n", "statistic", "dof", "p_value", "level", "detectable_tv", "impossible",
                          "worst_cells", "rejects"]
    assert data["rejects"] and data["worst_cells"][0]["outcome"] in ("(0,)", "(1,)")


def test_the_engine_audits_check_is_the_record_with_its_role():
    from specmath.audit.engines.checks import ENGINE_CHECKS, Check

    assert issubclass(Check, GTest)
    law = Law.from_weights({1: 1, 2: 1})
    test = g_test(Counter({1: 50, 2: 50}), law).judged("first token", CI.family_level / ENGINE_CHECKS, CI.power,
                                                        detectable_tv(law, 100), measured_tv=0.0)
    check = Check.of(test, "engine")
    assert check.role == "engine" and check.passed and check.level == test.level
    assert list(check.to_json()) == ["name", "role", "statistic", "dof", "p_value", "level", "detectable_tv", "passed",
                                     "measured_tv", "impossible"]
