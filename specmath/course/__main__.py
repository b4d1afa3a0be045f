"""python -m specmath.course html|slides [--out DIR] [NOTEBOOK ...]: the offline course export."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from specmath.course.export import export_html, export_slides


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m specmath.course", description=__doc__)
    parser.add_argument("kind", choices=["html", "slides"], help="static HTML pages or reveal.js slides")
    parser.add_argument("notebooks", nargs="*", help="notebooks to export (default: notebooks/[0-9]*.ipynb)")
    parser.add_argument("--out", help="output folder (default: _build/html or _build/slides)")
    args = parser.parse_intermixed_args(argv)
    notebooks = args.notebooks or sorted(str(p) for p in Path("notebooks").glob("[0-9]*.ipynb"))
    export = export_html if args.kind == "html" else export_slides
    try:
        written = export(notebooks, args.out or f"_build/{args.kind}")
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
