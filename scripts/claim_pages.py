"""Writes the claims table and the engines' sections of docs/explanation/engine-findings.md from the records.

    .venv/bin/python scripts/claim_pages.py [--check]

The records are ``specmath.bugzoo.claims`` (one module per engine); the blocks go between the page's
``<!-- claims:NAME -->`` and ``<!-- /claims:NAME -->`` markers (``specmath.bugzoo.claims.markdown``).
``--check`` exits 1 if the page differs from what it would write (tests/bugzoo/test_claim_pages.py runs it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from specmath.bugzoo.claims.markdown import claim_blocks, rewrite_blocks  # noqa: E402

PAGE = ROOT / "docs" / "explanation" / "engine-findings.md"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the page is not what it would be written as")
    args = parser.parse_args()
    text = PAGE.read_text(encoding="utf-8")
    new = rewrite_blocks(text, claim_blocks())
    if new == text:
        return 0
    if args.check:
        print(f"out of date (run scripts/claim_pages.py): {PAGE.relative_to(ROOT)}")
        return 1
    PAGE.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
