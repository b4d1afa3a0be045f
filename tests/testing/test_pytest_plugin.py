"""The pytest plugin: --specmath-n and --specmath-seed reach the specmath_audit fixture, the marker selects audits.

Each test runs pytest in a subprocess on a small test file, with the plugin loaded by ``-p`` (and entry
point autoloading off, so the run is the same whether or not this checkout is installed).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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
    print(f"ran n={specmath_audit.n} seed={specmath_audit.seed} rounds={report.cases[0].n}")


def test_plain():
    pass
'''


def run_pytest(tmp_path: Path, *args: str, ini: str | None = None) -> subprocess.CompletedProcess:
    (tmp_path / "test_suite.py").write_text(SUITE, encoding="utf-8")
    if ini is not None:
        (tmp_path / "pytest.ini").write_text(ini, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    command = [sys.executable, "-m", "pytest", "-p", "specmath.pytest_plugin", "-p", "no:cacheprovider", "-s", "-q",
               "-rN", str(tmp_path / "test_suite.py"), *args]
    return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)


def test_the_options_reach_the_fixture_and_the_header_says_so(tmp_path):
    result = run_pytest(tmp_path, "--specmath-n", "300", "--specmath-seed", "7", "-v")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ran n=300 seed=7 rounds=300" in result.stdout
    assert "specmath: audits run n = 300 rounds per case (--specmath-n), seed 7 (--specmath-seed)" in result.stdout


def test_the_ini_option_sets_the_default_and_the_command_line_wins(tmp_path):
    ini = "[pytest]\nspecmath_n = 400\n"
    assert "ran n=400 seed=0" in run_pytest(tmp_path, ini=ini).stdout
    assert "ran n=250 seed=0" in run_pytest(tmp_path, "--specmath-n", "250", ini=ini).stdout


def test_the_marker_selects_the_audits(tmp_path):
    only = run_pytest(tmp_path, "--specmath-n", "200", "-m", "specmath")
    assert only.returncode == 0 and "1 passed, 1 deselected" in only.stdout, only.stdout
    without = run_pytest(tmp_path, "-m", "not specmath")
    assert without.returncode == 0 and "1 passed, 1 deselected" in without.stdout and "ran n=" not in without.stdout


def test_bad_option_values_are_usage_errors_naming_the_option(tmp_path):
    bad = run_pytest(tmp_path, "--specmath-n", "0")
    assert bad.returncode == 4 and "argument --specmath-n: must be an int >= 1 (rounds per audit case), got '0'" in bad.stderr
    bad_ini = run_pytest(tmp_path, ini="[pytest]\nspecmath_seed = -1\n")
    assert bad_ini.returncode == 4 and "specmath ini option: must be an int >= 0, got '-1'" in bad_ini.stderr


def test_the_plugin_is_registered_as_a_pytest11_entry_point():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["entry-points"]["pytest11"] == {"specmath": "specmath.pytest_plugin"}
