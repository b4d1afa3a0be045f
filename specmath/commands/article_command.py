"""``specmath article [--json]``: the article's numbers next to their exact values."""

from __future__ import annotations

import argparse
import json


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--strict", action="store_true", help="exit 1 if any claim is contradicted")


def run(args: argparse.Namespace) -> int:
    from specmath.article import ARTICLE_TITLE, ARTICLE_TITLE_EN, claims_table

    rows = claims_table()
    if args.json:
        print(json.dumps([{k: v for k, v in r.items() if k != "exact_value"} for r in rows], indent=2, ensure_ascii=False))
    else:
        print(f"The article: {ARTICLE_TITLE} ({ARTICLE_TITLE_EN})\n")
        print(f"{'claim':<24} {'article says':<22} {'exact value':<34} verdict")
        for r in rows:
            verdict = "agrees" if r["agrees"] else "CONTRADICTED"
            print(f"{r['key']:<24} {r['stated']:<22} {r['exact']:<34} {verdict}")
        bad = [r for r in rows if not r["agrees"]]
        print(f"\n{len(rows) - len(bad)} of {len(rows)} stated numbers agree with the exact computation; {len(bad)} contradicted")
    return 1 if args.strict and any(not r["agrees"] for r in rows) else 0
