"""The engine pages show the committed measurement: their tables are what scripts/engine_pages.py writes from
data/measurements/ (so a page cannot drift from its raw results), and every record is a complete audit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
RECORDS = ROOT / "data" / "measurements" / "cpu_x86_64_2026-11-30" / "engines-smollm2.json"


def test_the_engine_pages_are_rendered_from_the_committed_measurement():
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "engine_pages.py"), "--check"], capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_every_record_has_both_checks_of_its_engine_and_a_verdict():
    from specmath.audit.engines.registry import engines_for
    from specmath.choices import OPTION_ROWS

    records = json.loads(RECORDS.read_text())
    assert {(r["engine"], r["row"]) for r in records} == {(e, o) for e in engines_for("gguf") for o in OPTION_ROWS}
    for r in records:
        roles = [(c["role"], c["name"]) for c in r["checks"]]
        assert roles[:2] == [("engine", "first token"), ("engine", "first two tokens")], (r["engine"], r["row"])
        assert r["verdict"] and r["error"] is None


def test_a_page_reads_an_earlier_records_verdict_in_the_fixed_sets_words():
    from specmath.audit.engines.checks import in_verdict_words
    from specmath.audit.engines.table import verdict_of

    assert in_verdict_words("FAIL (pathwise: seed reproducibility, not the law)") == \
        "LOSS (pathwise: seed reproducibility, not the law)"
    assert in_verdict_words("FAIL") == "LOSS" and in_verdict_words("pass") == "PASS"
    assert in_verdict_words("INCONCLUSIVE: the control was not caught") == "INCONCLUSIVE: the control was not caught"
    assert in_verdict_words("FAILURE") == "FAILURE"  # a word that only starts like one is not read as it
    assert [verdict_of({"verdict": v}) for v in ("FAIL", "pass", "LOSS: TV 0.3", None)] == \
        ["LOSS", "PASS", "LOSS", "not run"]
    records = json.loads(RECORDS.read_text())
    assert {verdict_of(r) for r in records} <= {"PASS", "LOSS", "ENGINE ERROR", "REFUSED", "INCONCLUSIVE"}
