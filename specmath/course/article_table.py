"""The article's numbers as a Markdown table, for the notebooks that check them.

``claims_markdown(section)`` renders the rows of ``specmath.article.claims_table()`` whose section starts
with ``section`` as a Markdown table headed by the article's title, so a notebook shows an aligned table
(``IPython.display.Markdown``) in JupyterLab, the HTML pages and the slides alike.
"""

from __future__ import annotations

from specmath.article import ARTICLE_TITLE, ARTICLE_TITLE_EN, claims_table
from specmath.tables import markdown_table

__all__ = ["claims_markdown", "citation"]


def citation() -> str:
    """The article's title, in Chinese as printed and in English."""
    return f"《{ARTICLE_TITLE}》 (*{ARTICLE_TITLE_EN}*)"


def claims_markdown(section: str) -> str:
    """A Markdown table: claim, what the article says, the exact value, agrees or not (``ValueError`` if none)."""
    rows = [r for r in claims_table() if r["section"].startswith(section)]
    if not rows:
        raise ValueError(f"no claims of the article in a section starting with {section!r}")
    lines = [
        f"The article's numbers, {citation()}:",
        "",
        markdown_table(["claim", "the article says", "exact value", "verdict"],
                       [[r["statement"], r["stated"], r["exact"], "agrees" if r["agrees"] else "**contradicted**"] for r in rows],
                       escape=True),  # a pipe would end the Markdown cell
    ]
    return "\n".join(lines)
