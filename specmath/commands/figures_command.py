"""``specmath figures [--out DIR] [--only NAME ...]``: regenerate the figures from library code."""

from __future__ import annotations

import argparse


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default="figures", help="output folder, created if missing (default: figures)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="file names to regenerate, e.g. rand7_calls.png (default: all; see --list)")
    parser.add_argument("--list", action="store_true", help="list the registered figures")


def run(args: argparse.Namespace) -> int:
    from specmath.cli import require_extra
    from specmath.figures import load_all, regenerate

    plots = load_all()
    if args.list:
        print("\n".join(plots))
        return 0
    # the real-model figures run torch: say so before any figure is drawn, not after the first few
    needing = [name for name in args.only or plots if name in plots and plots[name].__module__ == "specmath.plots.lm_plots"]
    if needing:
        require_extra("torch", f"drawing {', '.join(needing)}", instead="leave them out with --only")
    for path in regenerate(args.out, args.only):
        print(f"wrote {path}")
    return 0
