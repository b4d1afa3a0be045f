"""Internal: pages whose marked blocks a script writes from committed measurements, and the ``--check`` of them.

A block is the text between ``<!-- PREFIX:NAME -->`` and ``<!-- /PREFIX:NAME -->`` (each on its own line, the
block empty or not); everything outside the markers is the page's own. ``render(page, prefix, blocks)`` is the
page with each named block replaced; ``write_or_check(paths, prefix, blocks, script, check)`` writes the pages
that differ, or with ``check`` writes nothing and returns 1 naming them (the tests run every page script so).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def render(page: str, prefix: str, blocks: dict[str, str]) -> str:
    for name, text in blocks.items():
        pattern = re.compile(rf"(<!-- {prefix}:{name} -->\n)(?:.*?\n)?(<!-- /{prefix}:{name} -->)", re.S)
        page = pattern.sub(lambda m, text=text: m.group(1) + text + "\n" + m.group(2), page)
    return page


def write_or_check(paths: Iterable[Path], prefix: str, blocks: dict[str, str], script: str, check: bool) -> int:
    stale = []
    for path in paths:
        text = path.read_text()
        new = render(text, prefix, blocks)
        if new != text:
            stale.append(path)
            if not check:
                path.write_text(new)
    if check and stale:
        print(f"out of date (run {script}): " + ", ".join(str(p.relative_to(ROOT)) for p in stale))
        return 1
    return 0
