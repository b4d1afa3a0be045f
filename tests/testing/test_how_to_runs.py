"""docs/how-to/test-your-sampler.md: its batched test file passes as written through the plugin's
fixture (plain and with a declared top-k), and fails on a planted bug. (Its one-round file is run by
tests/docs/test_readme.py.)"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "how-to" / "test-your-sampler.md"


def how_to_test_file() -> str:
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)
    return next(b for b in blocks if b.startswith("# test_my_rounds.py"))


def run_pytest(tmp_path: Path, source: str) -> subprocess.CompletedProcess:
    (tmp_path / "test_my_rounds.py").write_text(source, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "specmath.pytest_plugin", "-p", "no:cacheprovider",
               "--specmath-n", "1000", str(tmp_path / "test_my_rounds.py")]
    return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)


def test_the_how_to_test_file_passes_as_written(tmp_path):
    result = run_pytest(tmp_path, how_to_test_file())
    assert result.returncode == 0 and "2 passed" in result.stdout, result.stdout + result.stderr


def test_the_how_to_batched_sampler_with_a_planted_bug_fails(tmp_path):
    source = how_to_test_file()
    # the bonus drawn from the last draft row instead of the bonus row
    planted = source.replace("p_n = target_probs[rows, accepted]", "p_n = target_probs[rows, np.minimum(accepted, gamma - 1)]")
    assert planted != source
    result = run_pytest(tmp_path, planted)
    assert result.returncode == 1 and "2 failed" in result.stdout, result.stdout
    assert "my_rounds is NOT lossless" in result.stdout and "(bonus)" in result.stdout
