"""Check that every local link of the built documentation resolves: the file exists and so does the anchor.

    python scripts/check_docs_links.py _build/docs

Reads every ``*.html`` page of the site (MathJax's own files are not pages of the site) and checks each
``href`` and ``src`` that stays inside the site: the file it names exists, and a ``#fragment`` names an
element ``id`` (or an ``<a name>``) of that page. Links with a scheme (``https:``, ``mailto:``) are
counted, not followed: the build is offline, and so is this check. Prints one line per broken link and
exits 1 if there is any; prints the counts otherwise.
"""

from __future__ import annotations

import argparse
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class PageLinks(HTMLParser):
    """The ids a page defines and the local targets it links to."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for key in ("id",) + (("name",) if tag == "a" else ()):
            if values.get(key):
                self.ids.add(values[key])
        for key in ("href", "src"):
            if values.get(key):
                self.links.append(values[key])


def is_page(path: Path, site: Path) -> bool:
    return path.suffix == ".html" and "mathjax" not in path.relative_to(site).parts


def broken_links(site: Path) -> tuple[list[str], int, int]:
    """(one line per broken local link, local links checked, external links counted)."""
    pages = {p: PageLinks() for p in sorted(site.rglob("*.html")) if is_page(p, site)}
    for path, parser in pages.items():
        parser.feed(path.read_text(encoding="utf-8"))
    broken, local, external = [], 0, 0
    for path, parser in pages.items():
        for link in parser.links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith("//"):
                external += 1
                continue
            local += 1
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            where = path.relative_to(site).as_posix()
            if parts.path and not target.exists():
                broken.append(f"{where}: {link} (no such file)")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else set()
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{where}: {link} (no element with id {unquote(parts.fragment)!r})")
    return broken, local, external


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path, help="the built HTML folder, e.g. _build/docs")
    args = parser.parse_args(argv)
    if not (args.site / "index.html").is_file():
        print(f"check_docs_links: error: {args.site} holds no index.html; build the docs first (make docs)", file=sys.stderr)
        return 2
    broken, local, external = broken_links(args.site.resolve())
    for line in broken:
        print(line)
    pages = sum(1 for p in args.site.rglob("*.html") if is_page(p, args.site))
    print(f"{pages} pages, {local} local links checked, {len(broken)} broken; {external} external links not followed",
          file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    raise SystemExit(main())
