"""The pytest plugin: the profile, --specmath-n, --specmath-seed and the marker's settings reach the
specmath_audit fixture, the marker selects audits, and a run without audits imports nothing of specmath.

Each test runs pytest in a subprocess on a small test file, with the plugin's entry module loaded by
``-p`` (and entry point autoloading off, so the run is the same whether or not this checkout is installed).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[2]

SUITE = '''
import numpy as np
import pytest


def my_rounds(target_probs, draft_probs, draft_tokens, rng):
    """A correct vectorised round: accept u q < p, resample by inverse CDF."""
    n, gamma = draft_tokens.shape
    rows = np.arange(n)
    p_x = np.take_along_axis(target_probs[:, :gamma], draft_tokens[..., None], -1)[..., 0]
    q_x = np.take_along_axis(draft_probs, draft_tokens[..., None], -1)[..., 0]
    accepted = np.cumprod(rng.random((n, gamma)) * q_x < p_x, axis=1).sum(axis=1)
    p_n = target_probs[rows, accepted]
    residual = np.maximum(p_n - draft_probs[rows, np.minimum(accepted, gamma - 1)], 0.0)
    cdf = np.cumsum(np.where((accepted < gamma)[:, None], residual, p_n), axis=1)
    last = (cdf <= (rng.random(n) * cdf[:, -1])[:, None]).sum(axis=1)
    out = np.full((n, gamma + 1), -1)
    for r in range(n):
        out[r, : accepted[r]] = draft_tokens[r, : accepted[r]]
        out[r, accepted[r]] = last[r]
    return out


def test_audit(specmath_audit):
    report = specmath_audit(my_rounds, batched=True, cases=["context-g1", "vocab-2"])
    print(f"ran n={specmath_audit.n} seed={specmath_audit.seed} rounds={report.cases[0].n} "
          f"sequential={specmath_audit.settings.sequential}")


@pytest.mark.specmath(n=150, seed=3)
def test_audit_with_its_own_settings(specmath_audit):
    report = specmath_audit(my_rounds, batched=True, cases=["vocab-2"])
    print(f"marked n={specmath_audit.n} seed={specmath_audit.seed} rounds={report.cases[0].n}")


def test_plain():
    pass
'''

#: a suite without audits: the plugin must import nothing of specmath (nor numpy) for it
PLAIN_SUITE = '''
import sys

import pytest


@pytest.mark.parametrize("engine", ["specmath"])  # a parameter named like the marker is not an audit
def test_nothing_of_specmath_is_imported(engine):
    assert not [m for m in sys.modules if m == "specmath" or m.startswith("specmath.")]
    assert "numpy" not in sys.modules and "scipy" not in sys.modules
'''


def run_pytest(tmp_path: Path, *args: str, ini: str | None = None, suite: str = SUITE) -> subprocess.CompletedProcess:
    (tmp_path / "test_suite.py").write_text(suite, encoding="utf-8")
    if ini is not None:
        (tmp_path / "pytest.ini").write_text(ini, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    command = [sys.executable, "-m", "pytest", "-p", "_specmath_pytestplugin", "-p", "no:cacheprovider", "-s", "-q",
               "-rN", str(tmp_path / "test_suite.py"), *args]
    return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)


def test_the_options_reach_the_fixture_and_the_line_after_collection_says_so(tmp_path):
    result = run_pytest(tmp_path, "--specmath-n", "300", "--specmath-seed", "7", "-v")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ran n=300 seed=7 rounds=300 sequential=False" in result.stdout
    line = ("specmath: audits run profile ci, n = 300 rounds per case, seed 7; family level 1e-06, detectable TV at "
            "power 0.99 (--specmath-profile, --specmath-n, --specmath-seed)")
    assert line in result.stdout and result.stdout.count("specmath: audits run") == 1
    # the line follows collection, the marker's settings reach its test
    assert result.stdout.index("collected 3 items") < result.stdout.index(line)
    assert "marked n=150 seed=3 rounds=150" in result.stdout


def test_the_profile_sets_the_settings_and_the_options_change_them(tmp_path):
    dev = run_pytest(tmp_path, "--specmath-profile", "dev", "-k", "test_audit and not own")
    assert "ran n=2000 seed=0 rounds=2000 sequential=True" in dev.stdout, dev.stdout + dev.stderr
    assert "specmath: audits run profile dev, n = 2000 rounds per case, seed 0, sequential;" in dev.stdout
    changed = run_pytest(tmp_path, "--specmath-profile", "dev", "--specmath-n", "250", "-k", "test_audit and not own")
    assert "ran n=250 seed=0 rounds=250 sequential=True" in changed.stdout, changed.stdout


def test_the_ini_options_set_the_default_and_the_command_line_wins(tmp_path):
    ini = "[pytest]\nspecmath_n = 400\n"
    assert "ran n=400 seed=0" in run_pytest(tmp_path, ini=ini).stdout
    assert "ran n=250 seed=0" in run_pytest(tmp_path, "--specmath-n", "250", ini=ini).stdout
    # a profile on the command line drops the ini file's n with the ini file's profile
    ini = "[pytest]\nspecmath_profile = thorough\nspecmath_n = 400\n"
    assert "ran n=400 seed=0 rounds=400 sequential=False" in run_pytest(tmp_path, "-k", "test_audit and not own", ini=ini).stdout
    dev = run_pytest(tmp_path, "--specmath-profile", "dev", "-k", "test_audit and not own", ini=ini)
    assert "ran n=2000 seed=0 rounds=2000 sequential=True" in dev.stdout, dev.stdout


def test_the_marker_selects_the_audits_and_only_a_run_with_audits_prints_the_line(tmp_path):
    only = run_pytest(tmp_path, "--specmath-n", "200", "-m", "specmath")
    assert only.returncode == 0 and "2 passed, 1 deselected" in only.stdout, only.stdout
    assert "specmath: audits run" in only.stdout
    without = run_pytest(tmp_path, "-m", "not specmath")
    assert without.returncode == 0 and "1 passed, 2 deselected" in without.stdout and "ran n=" not in without.stdout
    assert "specmath" not in without.stdout


def test_a_run_without_audits_imports_nothing_of_specmath_and_prints_nothing_of_it(tmp_path):
    result = run_pytest(tmp_path, "-v", suite=PLAIN_SUITE)
    assert result.returncode == 0 and "1 passed" in result.stdout, result.stdout + result.stderr
    assert "specmath" not in result.stdout.replace("test_nothing_of_specmath_is_imported[specmath]", "")
    if importlib.util.find_spec("xdist") is not None:
        result = run_pytest(tmp_path, "-p", "xdist", "-n", "2", suite=PLAIN_SUITE)
        assert result.returncode == 0 and "1 passed" in result.stdout, result.stdout + result.stderr
        assert "specmath: audits run" not in result.stdout


def test_a_run_under_xdist_prints_the_line_in_its_summary(tmp_path):
    pytest.importorskip("xdist")
    result = run_pytest(tmp_path, "-p", "xdist", "-n", "2", "--specmath-n", "200")
    assert result.returncode == 0 and "3 passed" in result.stdout, result.stdout + result.stderr
    assert result.stdout.count("specmath: audits run profile ci, n = 200 rounds per case") == 1


def test_bad_option_values_are_usage_errors_naming_the_option(tmp_path):
    bad = run_pytest(tmp_path, "--specmath-n", "0")
    assert bad.returncode == 4 and "argument --specmath-n: must be an int >= 1 (rounds per audit case), got '0'" in bad.stderr
    bad = run_pytest(tmp_path, "--specmath-profile", "thorogh")
    assert bad.returncode == 4 and ("argument --specmath-profile: unknown audit profile 'thorogh' (did you mean "
                                    "'thorough'?); choose from: dev, ci, thorough") in bad.stderr, bad.stderr
    bad_ini = run_pytest(tmp_path, ini="[pytest]\nspecmath_seed = -1\n")
    assert bad_ini.returncode == 4 and "specmath ini option: must be an int >= 0, got '-1'" in bad_ini.stderr


def test_a_marker_with_an_unknown_setting_fails_its_test_naming_it(tmp_path):
    suite = SUITE.replace("@pytest.mark.specmath(n=150, seed=3)", "@pytest.mark.specmath(rounds=150)")
    result = run_pytest(tmp_path, "-k", "own", suite=suite)
    assert result.returncode == 1 and "unknown audit setting 'rounds'" in result.stdout, result.stdout


def test_the_plugin_is_registered_as_a_pytest11_entry_point_outside_the_package():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["entry-points"]["pytest11"] == {"specmath": "_specmath_pytestplugin"}
    assert "_specmath_pytestplugin" in project["tool"]["setuptools"]["py-modules"]


def test_the_entry_module_offers_the_profiles_of_the_settings():
    sys.path.insert(0, str(ROOT))
    try:
        import _specmath_pytestplugin
    finally:
        sys.path.remove(str(ROOT))
    from specmath.settings import PROFILES

    assert _specmath_pytestplugin.PROFILE_NAMES == tuple(PROFILES)
