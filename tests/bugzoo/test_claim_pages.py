"""docs/explanation/engine-findings.md is what scripts/claim_pages.py writes from the claim records."""

import subprocess
import sys
from pathlib import Path

import pytest

from specmath.bugzoo.claims import CLAIMS
from specmath.bugzoo.claims.markdown import claim_blocks, rewrite_blocks

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "explanation" / "engine-findings.md"


def test_the_findings_page_is_up_to_date_with_the_records():
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "claim_pages.py"), "--check"], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_page_has_a_heading_per_claim_a_table_row_per_claim_and_every_report():
    page = PAGE.read_text(encoding="utf-8")
    for key, claim in CLAIMS.items():
        assert f"\n### {key}\n" in page and f"| [{key}](#{key}) |" in page
        if claim.report is not None:
            assert claim.report.title in page
    assert "\n## vLLM\n" in page and "scripts/claim_pages.py" in page.split("\n## vLLM\n", 1)[1].split("\n## ", 1)[0]


def test_a_page_without_the_markers_is_refused_and_a_stale_block_is_rewritten():
    with pytest.raises(ValueError, match="no <!-- claims:table -->"):
        rewrite_blocks("# a page\n", claim_blocks())
    stale = "<!-- claims:table -->\nSTALE ROW\n<!-- /claims:table -->\n<!-- claims:engines -->\n<!-- /claims:engines -->\n"
    new = rewrite_blocks(stale, claim_blocks())
    assert "STALE ROW" not in new and "| claim | engine |" in new
