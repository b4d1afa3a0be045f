"""``specmath figures [--out DIR] [--only NAME ...]``: regenerate the figures from library code."""

from __future__ import annotations

import argparse


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default="figures", help="output folder, created if missing (default: figures)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="file names to regenerate, e.g. rand7_calls.png (default: all; see --list)")
    parser.add_argument("--list", action="store_true", help="list the registered figures")


def run(args: argparse.Namespace) -> int:
    from specmath.figures import load_all, regenerate

    if args.list:
        print("\n".join(load_all()))
        return 0
    for path in regenerate(args.out, args.only):
        print(f"wrote {path}")
    return 0
