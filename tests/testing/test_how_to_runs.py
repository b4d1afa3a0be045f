"""docs/how-to/test-your-sampler.md: its batched test file passes as written through the plugin's
fixture (plain and with a declared top-k), and fails on a planted bug; so does its tree test file.
(Its one-round file is run by tests/docs/test_readme.py.)

Power of the tree file's audits at n = 1000: detectable TV 0.13-0.2 per case; SpecInfer's rule on
top-k children is at completed TV 0.19-0.83 on 8 of the 10 cases, and the planted bug (the residual
never updated, the final token drawn from p) at 0.16-0.44 on five (exact, computed with its node
rule as a tree verifier program)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "how-to" / "test-your-sampler.md"


def how_to_test_file(name: str = "test_my_rounds.py") -> str:
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)
    return next(b for b in blocks if b.startswith(f"# {name}"))


def run_pytest(tmp_path: Path, source: str, name: str = "test_my_rounds.py") -> subprocess.CompletedProcess:
    (tmp_path / name).write_text(source, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "_specmath_pytestplugin", "-p", "no:cacheprovider",
               "--specmath-n", "1000", str(tmp_path / name)]
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


def test_the_how_to_tree_file_passes_as_written(tmp_path):
    result = run_pytest(tmp_path, how_to_test_file("test_my_tree.py"), "test_my_tree.py")
    assert result.returncode == 0 and "2 passed" in result.stdout, result.stdout + result.stderr


def test_the_how_to_tree_sampler_with_a_planted_bug_fails(tmp_path):
    source = how_to_test_file("test_my_tree.py")
    # the residual never updated: every sibling judged against p, the final token drawn from p
    planted = source.replace("p[reject] = residual / residual.sum(axis=1, keepdims=True)", "pass")
    assert planted != source
    result = run_pytest(tmp_path, planted, "test_my_tree.py")
    assert result.returncode == 1 and "1 failed, 1 passed" in result.stdout, result.stdout
    assert "my_tree is NOT lossless" in result.stdout
