"""The code on the explanation pages runs and shows what the page says it shows."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_exact_interpreter_page_example_runs_as_written(capsys):
    page = (ROOT / "docs" / "explanation" / "exact-interpreter.md").read_text(encoding="utf-8")
    code = re.findall(r"```python\n(.*?)```", page, flags=re.S)[0]
    exec(compile(code, "exact-interpreter.md", "exec"), {})  # its asserts are the page's claims
    printed = capsys.readouterr().out.strip()
    assert printed == re.search(r"# (\[[\d, ]+\])", code)[1]  # the sample the page prints in its comment
