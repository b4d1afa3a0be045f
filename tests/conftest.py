"""Shared test configuration: Hypothesis profiles, torch's thread count, and markers by path.

* Hypothesis: a derandomized profile for CI, a normal one locally.
* ``SPECMATH_TORCH_THREADS=N`` runs every torch computation of the session on N threads; ``.ci/run``
  runs the torch tests with 1 (make test) and with 2, so a float equality that holds for one reduction order
  only (batched vs incremental forwards) fails here instead of on another host.
* Markers given by path, so ``make test-fast`` (``-m "not slow and not audit and not notebooks"``)
  leaves them out: ``audit`` for tests/audit/, ``notebooks`` for the tests that execute the notebooks
  (tests/course/test_notebooks_run.py) or export them.
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


def pytest_collection_modifyitems(config, items):
    import pytest

    for item in items:
        path = Path(str(item.path)).resolve()
        relative = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.as_posix()
        if relative.startswith("tests/audit/"):
            item.add_marker(pytest.mark.audit)
        if path.suffix == ".ipynb" or relative in NOTEBOOK_TESTS:
            item.add_marker(pytest.mark.notebooks)
