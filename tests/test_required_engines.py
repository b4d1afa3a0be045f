"""An engine test that cannot run skips, naming the command that builds the engine; under
SPECMATH_REQUIRE_ENGINES=1 (scripts/ci_engines.sh, after ``make engines``) that skip is a failure, and under
SPECMATH_DEFER_ENGINES=1 (.ci/run's make test, while the engines are built beside it) every engine test skips
without looking for its engine.

Each test runs pytest on one GGUF engine test with ``SPECMATH_ENGINES_DIR`` an empty folder, so the
engine is not built whatever this machine has built.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ENGINE_TEST = ("tests/audit/engines/test_gguf_engines.py::"
               "test_each_gguf_engine_declares_what_its_registry_entry_says[llama-cpp-ngram]")
PLAIN_TEST = "tests/audit/engines/test_gguf_engines.py::test_an_engine_that_is_not_built_says_how_to_build_it"
OTHER_TEST = "tests/core/test_laws.py::test_tv_distance_is_half_the_l1_distance"


def _pytest(tmp_path, required: str | None, *nodes: str, deferred: str | None = None) -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items()
                   if not key.startswith(("PYTEST_", "SPECMATH_REQUIRE_ENGINES", "SPECMATH_DEFER_ENGINES"))}
    environment["SPECMATH_ENGINES_DIR"] = str(tmp_path)
    if required is not None:
        environment["SPECMATH_REQUIRE_ENGINES"] = required
    if deferred is not None:
        environment["SPECMATH_DEFER_ENGINES"] = deferred
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-p", "no:randomly",
                           *nodes], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=300)


@pytest.mark.slow  # a pytest run that imports the engine audit
def test_an_engine_test_without_its_engine_skips_naming_the_build_command(tmp_path):
    run = _pytest(tmp_path, None, ENGINE_TEST)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "1 skipped" in run.stdout
    assert "the llama.cpp driver is not built: run `make engines`" in run.stdout


@pytest.mark.slow
def test_required_engines_turn_that_skip_into_a_failure_and_leave_other_tests_alone(tmp_path):
    run = _pytest(tmp_path, "1", ENGINE_TEST, PLAIN_TEST)
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-3000:]
    assert "1 failed, 1 passed" in run.stdout
    assert "SPECMATH_REQUIRE_ENGINES=1, and this engine test skipped: the llama.cpp driver is not built" in run.stdout


def test_a_required_engines_value_other_than_0_or_1_is_refused_before_any_test_runs(tmp_path):
    run = _pytest(tmp_path, "yes", PLAIN_TEST)
    assert run.returncode != 0 and "passed" not in run.stdout
    assert "SPECMATH_REQUIRE_ENGINES must be 0 or 1, got 'yes'" in run.stdout + run.stderr


@pytest.mark.slow
def test_deferred_engines_skip_every_engine_test_and_leave_other_tests_alone(tmp_path):
    # every test of an engine's file skips, the one that needs no engine too (CI runs the whole file after the build)
    run = _pytest(tmp_path, None, ENGINE_TEST, PLAIN_TEST, OTHER_TEST, deferred="1")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "1 passed, 2 skipped" in run.stdout
    assert "SPECMATH_DEFER_ENGINES=1: the engines are being built beside this run" in run.stdout
    assert "the llama.cpp driver is not built" not in run.stdout  # it did not look


def test_deferring_and_requiring_the_engines_at_once_is_refused_before_any_test_runs(tmp_path):
    run = _pytest(tmp_path, "1", PLAIN_TEST, deferred="1")
    assert run.returncode != 0 and "passed" not in run.stdout
    assert "SPECMATH_REQUIRE_ENGINES=1 and SPECMATH_DEFER_ENGINES=1 contradict each other" in run.stdout + run.stderr
