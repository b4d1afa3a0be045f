"""A sampler that raises is reported as an ERROR naming its exception (exit status 2), never as lossy."""

from __future__ import annotations

import json

from specmath.audit import adapter_named, case_named, run_audit
from specmath.cli import main
from specmath.settings import AuditSettings


def _raises_on_every_round(target_probs, draft_probs, draft_tokens, generator):
    raise KeyError("no such token table")


def test_a_raising_sampler_is_an_error_with_its_exception_named(tmp_path, capsys):
    report = run_audit(adapter_named(f"{__name__}:_raises_on_every_round"), (case_named("vocab-2"),), AuditSettings(n=50))
    case = report.cases[0]
    assert report.errored and not report.passed and case.verdict == "ERROR"
    assert "KeyError" in case.errors[0] and "no such token table" in case.errors[0]
    path = tmp_path / "audit.json"
    status = main(["audit", f"{__name__}:_raises_on_every_round", "--n", "50", "--cases", "vocab-2", "--json", str(path)])
    out = capsys.readouterr().out
    assert status == 2
    assert "ERROR: round 0" in out and "KeyError" in out
    assert "FAIL" not in out and "lossy" not in out.lower()
    saved = json.loads(path.read_text())
    assert saved["errored"] is True and saved["cases"][0]["verdict"] == "ERROR"


def test_a_lossy_sampler_is_still_a_failure_with_exit_status_one(capsys):
    assert main(["audit", "bug:residual-softmax", "--n", "300", "--cases", "context-g1"]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "ERROR" not in out
