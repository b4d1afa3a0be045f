"""Shared test configuration: Hypothesis profiles, torch's thread count, and markers by path.

* Hypothesis: a derandomized profile for CI, a normal one locally.
* ``SPECMATH_TORCH_THREADS=N`` runs every torch computation of the session on N threads; ``.ci/run``
  runs the torch tests with 1 (make test) and with 2, so a float equality that holds for one reduction order
  only (batched vs incremental forwards) fails here instead of on another host.
* Markers given by path, so ``make test-fast`` (``-m "not slow and not audit and not notebooks"``)
  leaves them out: ``audit`` for tests/audit/, ``notebooks`` for the tests that execute the notebooks
  (tests/course/test_notebooks_run.py) or export them.
* The tests of the engines ``make engines`` builds (``ENGINE_TESTS``) skip where an engine is not built,
  the reason naming the command that builds it (``make test`` prints every skip's reason: ``-ra`` in
  pyproject.toml). ``SPECMATH_REQUIRE_ENGINES=1`` turns such a skip into a failure: scripts/ci_engines.sh
  sets it after ``make engines``, so CI shows the engine tests ran rather than skipped.
* Inductor compiles on one process per test worker (``TORCHINDUCTOR_COMPILE_THREADS=1`` unless set): its
  default, a pool of compile workers as large as the core count, each importing torch, cost the compiled-decoder
  tests 13% more CPU on a cold cache (241 against 209 CPU-seconds for the pinned-token one, 2 cores) and gains
  no time where the test workers already fill every core.
* ``SPECMATH_DEFER_ENGINES=1`` skips every test of a built engine (``ENGINE_TESTS`` and ``VLLM_TESTS``) without
  looking for it: ``.ci/run`` builds the engines beside ``make test`` and runs those tests after the builds, so
  a test must not find a half-built engine (a venv pip is still writing) and decide by the time it looked.
"""

import os
from pathlib import Path

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", derandomize=True, max_examples=200, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))

os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")  # read when torch._inductor's config is imported

_THREADS = os.environ.get("SPECMATH_TORCH_THREADS")
if _THREADS:
    if not _THREADS.isdigit() or int(_THREADS) < 1:
        raise ValueError(f"SPECMATH_TORCH_THREADS must be a positive integer, got {_THREADS!r}")
    import torch

    torch.set_num_threads(int(_THREADS))

ROOT = Path(__file__).resolve().parents[1]
#: tests that execute or export the notebooks (marked ``notebooks``)
NOTEBOOK_TESTS = {"tests/course/test_export.py", "tests/course/test_browser.py", "tests/course/test_solutions.py",
                  "tests/course/test_notebooks_run.py"}
#: tests of the engines ``make engines`` (and ``make engines-server``) builds: a skip is a failure under
#: SPECMATH_REQUIRE_ENGINES=1
ENGINE_TESTS = {"tests/audit/engines/test_gguf_engines.py", "tests/audit/engines/test_endpoint_engine.py"}
REQUIRE_ENGINES = "SPECMATH_REQUIRE_ENGINES"
#: the tests of vLLM as ``make vllm`` builds it (skipped where it is not built)
VLLM_TESTS = {"tests/audit/engines/test_vllm_engines.py"}
DEFER_ENGINES = "SPECMATH_DEFER_ENGINES"


def _relative(item) -> str:
    path = Path(str(item.path)).resolve()
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.as_posix()


def pytest_collection_modifyitems(config, items):
    import pytest

    deferred = pytest.mark.skip(reason=f"{DEFER_ENGINES}=1: the engines are being built beside this run, and .ci/run "
                                       "runs their tests after the builds (scripts/ci_engines.sh, scripts/ci_vllm.sh)")
    for item in items:
        path = Path(str(item.path)).resolve()
        relative = _relative(item)
        if _flag(DEFER_ENGINES) and relative in ENGINE_TESTS | VLLM_TESTS:
            item.add_marker(deferred)
        if relative.startswith("tests/audit/"):
            item.add_marker(pytest.mark.audit)
        if path.suffix == ".ipynb" or relative in NOTEBOOK_TESTS:
            item.add_marker(pytest.mark.notebooks)


def _flag(name: str) -> bool:
    value = os.environ.get(name, "")
    if value not in ("", "0", "1"):
        import pytest

        raise pytest.UsageError(f"{name} must be 0 or 1, got {value!r}")
    return value == "1"


def _engines_required() -> bool:
    return _flag(REQUIRE_ENGINES)


def pytest_configure(config):
    # a value other than 0 or 1 is refused before any test runs, and so is asking for both
    if _engines_required() and _flag(DEFER_ENGINES):
        import pytest

        raise pytest.UsageError(f"{REQUIRE_ENGINES}=1 and {DEFER_ENGINES}=1 contradict each other: set one")


def pytest_runtest_makereport(item, call):
    """Under SPECMATH_REQUIRE_ENGINES=1, an engine test that skips (in setup or in its body) fails, saying why."""
    if call.excinfo is None or not _engines_required() or _relative(item) not in ENGINE_TESTS:
        return None
    import pytest

    if not call.excinfo.errisinstance(pytest.skip.Exception):
        return None
    report = pytest.TestReport.from_item_and_call(item, call)
    report.outcome = "failed"
    report.longrepr = (f"{REQUIRE_ENGINES}=1, and this engine test skipped: {call.excinfo.value.msg} "
                       "(scripts/ci_engines.sh sets it after make engines: the engines must run here)")
    return report
