"""python -m specmath.course html|slides [--out DIR] [NOTEBOOK ...]: the offline course export.

python -m specmath.course execute [NOTEBOOK ...]: run notebooks and write them back clean (no timestamps,
widget state or timings; see ``specmath.course.execute``), a line per notebook as it finishes.
python -m specmath.course demo: the whole course job of ``make demo``, a line per step, then one summary block.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from specmath.course.export import export_html, export_slides


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m specmath.course", description=__doc__)
    parser.add_argument("kind", choices=["html", "slides", "execute", "demo"],
                        help="static HTML pages, reveal.js slides, execute notebooks cleanly, or the whole demo")
    parser.add_argument("notebooks", nargs="*", help="notebooks to export (default: notebooks/[0-9]*.ipynb)")
    parser.add_argument("--out", help="output folder (default: _build/html or _build/slides; for execute, where timings.json goes: _build)")
    args = parser.parse_intermixed_args(argv)
    if args.kind == "demo":
        from specmath.course.demo import main as demo_main

        return demo_main()
    notebooks = args.notebooks or sorted(str(p) for p in Path("notebooks").glob("[0-9]*.ipynb"))
    if args.kind == "execute":
        from specmath.course.execute import run_notebooks

        build = Path(args.out or "_build")
        run_notebooks([Path(p) for p in notebooks], timings=build / "timings.json",
                      report=lambda e: print(f"executed {e.written} in {e.seconds:.1f} s", flush=True))
        return 0
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
