"""Internal: The claim records as Markdown: the table of every claim, and one section per engine with its ready-to-file reports.

``scripts/claim_pages.py`` writes these blocks into docs/explanation/engine-findings.md between the
markers ``<!-- claims:NAME -->`` and ``<!-- /claims:NAME -->``; each claim is a level-3 heading whose text
is its key, so a page links to it as ``engine-findings.md#KEY``.
"""

from __future__ import annotations

import re

from specmath.bugzoo.claims import CLAIMS, ENGINES, STATUSES, Claim, EngineRecords
from specmath.tables import markdown_table

__all__ = ["claims_table", "engine_section", "claim_blocks", "rewrite_blocks"]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def claims_table(claims: list[Claim]) -> str:
    """| claim | engine | version or commit | status | evidence | checked |, by status then engine."""
    rows = []
    for c in sorted(claims, key=lambda c: STATUSES.index(c.status)):
        status = f"fixed by {c.fixed_by.split(' (')[0]}" if c.status == "fixed" else c.status
        rows.append([f"[{c.key}](#{c.key})", _cell(c.engine), _cell(c.version), _cell(status), c.evidence, c.checked.isoformat()])
    return markdown_table(["claim", "engine", "version or commit", "status", "evidence", "checked"], rows)


def _claim_text(c: Claim) -> list[str]:
    lines = [f"### {c.key}", "", f"**{c.status}** · {c.engine}, {c.version} · checked {c.checked.isoformat()} · "
             f"{c.evidence}", "", c.claim[0].upper() + c.claim[1:] + ".", ""]
    lines += [f"- where: {where}" for where in c.where]
    for label, value in (("fixed by", c.fixed_by), ("upstream", c.upstream), ("reproduce", c.reproducer),
                         ("note", c.note)):
        if value:
            lines.append(f"- {label}: {value}")
    if c.report is not None:
        r = c.report
        # a fixed claim keeps its report as the record of what was seen, not as something still to file
        heading = "**The report, as it stood before the fix.**" if c.status == "fixed" else "**Ready to file.**"
        lines += ["", heading, "", f"> **{r.title}**", ">", f"> Versions: {r.versions}.", ">",
                  "> Reproducer:", ">", f"> ```{r.language}"] + [f">{' ' + line if line else ''}"
                                                                for line in r.reproducer.splitlines()] + [
                  "> ```", ">", f"> Expected: {r.expected}.", ">", f"> Observed: {r.observed}."]
    return lines + [""]


def engine_section(engine: EngineRecords) -> str:
    """## ENGINE, what was read or run as its introduction, then each of its claims."""
    lines = [f"## {engine.engine}", ""]
    for paragraph in engine.about:
        lines += [paragraph, ""]
    for c in engine.claims:
        lines += _claim_text(c)
    return "\n".join(lines).rstrip()


def claim_blocks() -> dict[str, str]:
    """The generated blocks, by marker name: ``table`` and ``engines``."""
    return {"table": claims_table(list(CLAIMS.values())),
            "engines": "\n\n".join(engine_section(engine) for engine in ENGINES)}


def rewrite_blocks(page: str, blocks: dict[str, str]) -> str:
    """``page`` with the text between each ``<!-- claims:NAME -->`` and ``<!-- /claims:NAME -->`` replaced."""
    for name, text in blocks.items():
        pattern = re.compile(rf"(<!-- claims:{name} -->\n)(?:.*?\n)?(<!-- /claims:{name} -->)", re.S)
        if not pattern.search(page):
            raise ValueError(f"the page has no <!-- claims:{name} --> ... <!-- /claims:{name} --> block")
        page = pattern.sub(lambda m, text=text: m.group(1) + text + "\n" + m.group(2), page)
    return page
