"""``specmath bugzoo [NAME] [--json]``: the lossy variants of speculative decoding, grouped by what their source says.

Each entry (chain entries ``BUGS``, token-tree verifiers ``TREE_BUGS``) has its instance, its exact TV
from the target law, the lossless algorithm's TV on the same instance (0), and its source: a dated claim
record about an engine (``specmath.bugzoo.claims``: engine, version or commit, date, status, evidence,
where, reproducer) or the code path it is modelled on. The groups, each most lossy first:

* engine bugs: the engine does it at the version checked (open, latent, or seen upstream and unconfirmed);
* lossy by design: the engine documents the rule as trading the target law for speed (not a bug);
* fixed upstream: the engine did it until the change named;
* modelled (no engine claimed): a variant suggested by a code path, claimed of no engine.

The audit name of each is ``bug:NAME`` or ``tree-bug:NAME`` (``specmath audit``; Medusa's fast mode has
none, its tree hangs below argmax p). ``--claims`` lists every claim record, with or without an entry.
``--accepted`` prints E[accepted draft tokens per round] for token-wise, block, multi-draft and
sample-match verification on the notebook's example pairs, the numbers quoted in the docs.
"""

from __future__ import annotations

import argparse
import json

from specmath.validation import InvalidArgument, check_choice

#: the groups ``specmath bugzoo`` prints, in order, with the line that heads each
GROUP_HEADINGS = {
    "engine bugs": "engine bugs (the engine does it at the version checked):",
    "lossy by design": "lossy by design (the engine documents the rule as trading the target law for speed; not bugs):",
    "fixed upstream": "fixed upstream (the engine did it until the change named):",
    "modelled (no engine claimed)": "modelled (variants suggested by a code path; no engine is claimed to do them):",
}


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", metavar="NAME", help="one entry of the zoo (default: every entry, by group)")
    parser.add_argument("--json", action="store_true", help="print JSON: exact 'num/den' strings and every claim field")
    parser.add_argument("--claims", action="store_true", help="list every claim about another engine, by status")
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


def _print_accepted(as_json: bool) -> None:
    from specmath.proofs.verification import fraction_text

    rows = _accepted_rows()
    if as_json:
        print(json.dumps([{k: (v if isinstance(v, (int, str)) else fraction_text(v)) for k, v in r.items()} for r in rows], indent=2))
        return
    for r in rows:
        cells = [f"{k} {v} ~ {float(v):.4f}" for k, v in r.items() if k not in ("pair", "gamma")]
        print(f"{r['pair']:5s} gamma={r['gamma']}: " + "; ".join(cells))


def _print_claims(as_json: bool) -> None:
    from specmath.bugzoo.claims import CLAIMS, STATUSES

    ordered = sorted(CLAIMS.values(), key=lambda c: STATUSES.index(c.status))
    if as_json:
        print(json.dumps([c.to_json() for c in ordered], indent=2))
        return
    for c in ordered:
        print(f"{c.key} [{c.status}]: {c.provenance()}")
        print(f"  {c.claim}")
        print(f"  where: {'; '.join(c.where)}")
        for label, value in (("upstream", c.upstream), ("reproduce", c.reproducer), ("note", c.note)):
            if value:
                print(f"  {label}: {value}")


def _entries(name: str | None) -> list[dict]:
    from specmath.audit.trees.adapters import audited_tree_bugs
    from specmath.bugzoo import BUGS, TREE_BUGS
    from specmath.laws import tv_distance
    from specmath.proofs.verification import fraction_text

    entries = []
    for kind, prefix, zoo in (("chain", "bug", BUGS), ("tree", "tree-bug", {bug.name: bug for bug in TREE_BUGS})):
        for entry_name, bug in zoo.items():
            if name not in (None, entry_name):
                continue
            tv = bug.tv()
            audited = kind == "chain" or entry_name in audited_tree_bugs()
            entries.append({
                "name": entry_name,
                "kind": kind,
                "group": bug.group,
                "audit": f"{prefix}:{entry_name}" if audited else None,
                "tv": fraction_text(tv),
                "tv_float": float(tv),
                "correct_tv": fraction_text(tv_distance(bug.correct_law(), bug.target_law())),
                "instance": bug.instance().description,
                "explanation": bug.explanation,
                "source": bug.source,
                "claim": None if bug.claim is None else bug.claim.to_json(),
                "modelled_on": bug.modelled_on or None,
            })
    groups = list(GROUP_HEADINGS)
    return sorted(entries, key=lambda e: (groups.index(e["group"]), -e["tv_float"]))


def run(args: argparse.Namespace) -> int:
    if args.name is not None:
        from specmath.bugzoo import BUGS, TREE_BUGS

        check_choice(args.name, "bug", (*BUGS, *(bug.name for bug in TREE_BUGS)))
        if args.accepted:
            raise InvalidArgument("--accepted prints the accepted lengths of the correct algorithms: give it without NAME")
        if args.claims:
            raise InvalidArgument("--claims prints every claim record: give it without NAME")
    if args.accepted and args.claims:
        raise InvalidArgument("--accepted and --claims print different tables: give one of them")
    if args.accepted:
        _print_accepted(args.json)
        return 0
    if args.claims:
        _print_claims(args.json)
        return 0
    entries = _entries(args.name)
    if args.json:
        print(json.dumps(entries, indent=2))
        return 0
    group = None
    for e in entries:
        if e["group"] != group:
            group = e["group"]
            print(GROUP_HEADINGS[group])
        audit = f"specmath audit {e['audit']}" if e["audit"] else "not audited: its tree hangs below argmax p"
        print(f"{e['name']} ({e['kind']}): TV = {e['tv']} ~ {e['tv_float']:.4g} from the target law; the lossless "
              f"algorithm on the same instance: TV {e['correct_tv']}; {audit}")
        print(f"  instance: {e['instance']}")
        print(f"  {e['explanation']}")
        if e["claim"] is None:
            print(f"  [{e['source']}]")
            continue
        claim = e["claim"]
        print(f"  [claim {claim['key']}: {e['source']}]")
        print(f"  where: {'; '.join(claim['where'])}")
        for label, key in (("reproduce", "reproducer"), ("note", "note")):
            if claim[key]:
                print(f"  {label}: {claim[key]}")
    return 0
