"""``specmath bugzoo [NAME] [--json]``: every bug-zoo entry (or the one named), its instance, exact TV,
explanation and citation.

Also prints E[accepted draft tokens per round] for token-wise, block, multi-draft and sample-match
verification on the notebook's example pairs (``--accepted``), the numbers quoted in the README.
"""

from __future__ import annotations

import argparse
import json

from specmath.choices import BUG_NAMES
from specmath.validation import InvalidArgument, check_choice


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", metavar="NAME", help="one entry of the zoo (default: every entry, most lossy first)")
    parser.add_argument("--json", action="store_true", help="print JSON with exact 'num/den' strings")
    parser.add_argument("--accepted", action="store_true", help="print expected accepted lengths: token-wise vs block vs multi-draft")


def _accepted_rows() -> list[dict]:
    from specmath.speculative.block import PAPER_EXAMPLE, block_vs_tokenwise
    from specmath.speculative.examples import WORD_DRAFT, WORD_TARGET
    from specmath.speculative.multidraft import accepted_length_against_k
    from specmath.speculative.sample_match import sampled_vs_tokenwise

    rows = []
    for pair, (target, draft) in (("paper", PAPER_EXAMPLE), ("word", (WORD_TARGET, WORD_DRAFT))):
        for gamma in (1, 2, 3):
            row = {"pair": pair, "gamma": gamma}
            row.update(block_vs_tokenwise(target, draft, (), gamma))
            ks = accepted_length_against_k(target, draft, (), gamma, [2, 3] if gamma < 3 or pair == "paper" else [2])
            row.update({f"multi-draft k={k}": v for k, v in ks.items()})
            row["sample-match"] = sampled_vs_tokenwise(target, draft, (), gamma)["sample-match"]
            rows.append(row)
    return rows


def run(args: argparse.Namespace) -> int:
    if args.name is not None:
        check_choice(args.name, "bug", BUG_NAMES)
        if args.accepted:
            raise InvalidArgument("--accepted prints the accepted lengths of the correct algorithms: give it without NAME")
    from specmath.bugzoo import BUGS
    from specmath.laws import tv_distance
    from specmath.proofs.verification import fraction_text

    if args.accepted:
        rows = _accepted_rows()
        if args.json:
            print(json.dumps([{k: (v if isinstance(v, (int, str)) else fraction_text(v)) for k, v in r.items()} for r in rows], indent=2))
            return 0
        for r in rows:
            cells = [f"{k} {v} ~ {float(v):.4f}" for k, v in r.items() if k not in ("pair", "gamma")]
            print(f"{r['pair']:5s} gamma={r['gamma']}: " + "; ".join(cells))
        return 0
    entries = []
    chosen = {args.name: BUGS[args.name]} if args.name else BUGS
    for name, bug in sorted(chosen.items(), key=lambda item: -item[1].tv()):
        tv = bug.tv()
        entries.append({
            "name": name,
            "tv": fraction_text(tv),
            "tv_float": float(tv),
            "correct_tv": fraction_text(tv_distance(bug.correct_law(), bug.target_law())),
            "instance": bug.instance().description,
            "explanation": bug.explanation,
            "citation": bug.citation,
        })
    if args.json:
        print(json.dumps(entries, indent=2))
        return 0
    for e in entries:
        print(f"{e['name']}: TV = {e['tv']} ~ {e['tv_float']:.4g} (correct algorithm: TV {e['correct_tv']})")
        print(f"  instance: {e['instance']}")
        print(f"  {e['explanation']}")
        print(f"  [{e['citation']}]")
    return 0
