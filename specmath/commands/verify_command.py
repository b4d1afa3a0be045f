"""``specmath verify NAME [--json]`` and ``specmath verify --all``."""

from __future__ import annotations

import argparse
import json


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", help="which sampler (see --list)")
    parser.add_argument("--all", action="store_true", help="run every verification; exit 1 if any is not lossless")
    parser.add_argument("--json", action="store_true", help="print JSON (one object, or a list with --all)")
    parser.add_argument("--list", action="store_true", help="list the names")


def run(args: argparse.Namespace) -> int:
    from specmath.proofs import VERIFIERS, verify

    if args.list:
        print("\n".join(VERIFIERS))
        return 0
    if args.all:
        names = list(VERIFIERS)
    elif args.name:
        if args.name not in VERIFIERS:
            print(f"unknown verification {args.name!r}; known: {', '.join(VERIFIERS)}")
            return 2
        names = [args.name]
    else:
        print("give a NAME, --all or --list")
        return 2
    results = [verify(n) for n in names]
    if args.json:
        payload = [r.to_json() for r in results] if args.all else results[0].to_json()
        print(json.dumps(payload, indent=2))
    else:
        for r in results:
            print(r.report())
            print()
        if args.all:
            good = sum(r.lossless for r in results)
            print(f"{good} of {len(results)} samplers lossless")
    return 0 if all(r.lossless for r in results) else 1
