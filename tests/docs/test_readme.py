"""The README is a front door: at most 200 lines, its links resolve, every subcommand has its line,
and its engineers' pytest file runs as written against a correct sampler and fails a lossy one."""

import os
import re
import subprocess
import sys
from pathlib import Path

from specmath.cli import COMMANDS

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
GUIDE = (ROOT / "docs" / "how-to" / "test-your-sampler.md").read_text(encoding="utf-8")


def test_the_readme_is_at_most_200_lines():
    assert len(README.splitlines()) <= 200


def test_every_local_link_of_the_readme_names_a_file_that_exists():
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    local = [link for link in links if "://" not in link]
    assert local, "the README links into the docs"
    missing = [link for link in local if not (ROOT / link).exists()]
    assert not missing, missing


def test_every_subcommand_has_its_line_under_commands():
    section = README.split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^- `specmath ([a-z-]+)", section, flags=re.M)
    assert sorted(listed) == sorted(COMMANDS)


def _python_block(text: str, after: str) -> str:
    return re.findall(r"```python\n(.*?)```", text.split(after, 1)[1], flags=re.S)[0]


def _run(tmp_path: Path, engine: str) -> subprocess.CompletedProcess:
    (tmp_path / "my_engine.py").write_text(engine, encoding="utf-8")
    (tmp_path / "test_my_sampler.py").write_text(_python_block(README, "**Engineers.**"), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_my_sampler.py"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)


def test_the_engineers_pytest_file_passes_a_correct_rule_and_round(tmp_path):
    # my_engine: the rule and the round of the test-your-sampler guide, both correct
    result = _run(tmp_path, _python_block(GUIDE, "## A complete test file"))
    assert result.returncode == 0 and "2 passed" in result.stdout, result.stdout + result.stderr


def test_the_engineers_pytest_file_fails_a_rule_that_resamples_from_p(tmp_path):
    engine = _python_block(GUIDE, "## A complete test file")
    lossy = engine.replace("return accept, {y: w / total for y, w in excess.items()}", "return accept, p")
    assert lossy != engine
    result = _run(tmp_path, lossy)
    assert "1 failed, 1 passed" in result.stdout and "TV(law, p) = 1/4" in result.stdout, result.stdout
