"""The "Test your own sampler" guide's test file (docs/how-to/test-your-sampler.md) runs under pytest as
written, and catches a planted bug."""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def readme_snippet() -> str:
    text = (ROOT / "docs" / "how-to" / "test-your-sampler.md").read_text(encoding="utf-8")
    section = text.split("## A complete test file", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert blocks, "the guide's section has no ```python block"
    return blocks[0]


def run_pytest(tmp_path: Path, source: str, *args: str) -> subprocess.CompletedProcess:
    path = tmp_path / "test_my_sampler.py"
    path.write_text(source, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path), *args],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)


def test_readme_snippet_passes_as_written(tmp_path):
    result = run_pytest(tmp_path, readme_snippet())
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 passed" in result.stdout


def test_readme_snippet_catches_a_rule_that_resamples_from_p(tmp_path):
    source = readme_snippet()
    planted = source.replace("return accept, {y: w / total for y, w in excess.items()}", "return accept, p")
    assert planted != source
    result = run_pytest(tmp_path, planted, "-k", "step or battery")
    assert result.returncode == 1 and "2 failed" in result.stdout, result.stdout
    assert "TV(law, p) = 1/4" in result.stdout  # the shrunk counterexample the guide shows
