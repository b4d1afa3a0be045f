"""The index page of each export (``_build/html/index.html``, ``_build/slides/index.html``), styled like the docs.

The documentation site uses Sphinx's furo theme; the course's two index pages take its look without its
machinery: a sidebar in furo's secondary background with the project's name and the two exports, the
content column in furo's font stack, sizes and link colour (``STYLESHEET``, written to
``<out>/_static/course.css``, so nothing is fetched when a page is shown). The notebooks are listed as the
course plan orders them (``specmath.course.plan``: 00, then each track in its order, then the notebooks
for both), each with the question it answers and its minutes in class; a page the plan does not know is
listed last. Chinese text (the article's title) names CJK fonts before the generic family
(``CJK_FONTS``; Debian's package fonts-noto-cjk provides the first), as the notebook pages do.
"""

from __future__ import annotations

import html
from pathlib import Path

from specmath.article import ARTICLE_TITLE, ARTICLE_TITLE_EN
from specmath.course.plan import COURSE, TRACKS, track_of

__all__ = ["CJK_FONTS", "STYLESHEET", "write_index"]

#: fonts with the article's Chinese characters, in the order a browser should try them
CJK_FONTS = '"Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "WenQuanYi Micro Hei", "Microsoft YaHei", "PingFang SC"'

#: furo's light palette and type (its CSS variables of the same names), for a page of links
STYLESHEET = f"""/* the course's index pages in the look of the docs (Sphinx's furo theme) */
:root {{
  --color-foreground-primary: #000;
  --color-foreground-secondary: #5a5c63;
  --color-background-primary: #fff;
  --color-background-secondary: #f8f9fb;
  --color-background-border: #eeebee;
  --color-brand-primary: #0a4bff;
  --color-brand-content: #2757dd;
  --font-stack: -apple-system, BlinkMacSystemFont, "Segoe UI", Helvetica, Arial, {CJK_FONTS}, sans-serif;
  --font-stack--monospace: "SFMono-Regular", Menlo, Consolas, Monaco, "Liberation Mono", "Lucida Console", monospace;
}}
* {{ box-sizing: border-box; }}
body {{ margin: 0; font-family: var(--font-stack); font-size: 100%; line-height: 1.5; color: var(--color-foreground-primary);
        background: var(--color-background-primary); -webkit-font-smoothing: antialiased; }}
a {{ color: var(--color-brand-content); text-decoration: underline; text-decoration-color: var(--color-background-border);
     text-underline-offset: 0.15em; }}
a:hover {{ text-decoration-color: var(--color-brand-content); }}
kbd {{ font-family: var(--font-stack--monospace); font-size: 0.8125em; border: 1px solid var(--color-background-border);
       border-bottom-width: 2px; border-radius: 0.2em; padding: 0 0.3em; }}
code {{ font-family: var(--font-stack--monospace); font-size: 0.8125em; background: var(--color-background-secondary);
        border: 1px solid var(--color-background-border); border-radius: 0.2em; padding: 0.1em 0.2em; }}
.page {{ display: flex; min-height: 100vh; }}
.sidebar {{ flex: 0 0 15em; background: var(--color-background-secondary); border-right: 1px solid var(--color-background-border);
            padding: 1.5em 1em; font-size: 0.875em; }}
.sidebar .brand {{ display: block; font-size: 1.5em; font-weight: 600; color: var(--color-foreground-primary);
                   text-decoration: none; margin-bottom: 0.25em; }}
.sidebar .tagline {{ color: var(--color-foreground-secondary); margin: 0 0 1.5em; }}
.sidebar ul {{ list-style: none; margin: 0; padding: 0; }}
.sidebar li {{ padding: 0.3em 0.5em; border-radius: 0.2em; }}
.sidebar li.current {{ font-weight: 600; background: var(--color-background-border); }}
.sidebar li a {{ text-decoration: none; }}
main {{ flex: 1 1 auto; max-width: 46em; padding: 1.5em 3em 3em; }}
h1 {{ font-size: 2.5em; font-weight: 700; line-height: 1.25; margin: 0.5em 0 0.5em; }}
h2 {{ font-size: 1.5em; font-weight: 700; margin: 1.75em 0 0.5em; }}
.article {{ color: var(--color-foreground-secondary); }}
[lang="zh"] {{ font-family: {CJK_FONTS}, var(--font-stack); }}
ol.lessons {{ list-style: none; margin: 0; padding: 0; }}
ol.lessons li {{ padding: 0.6em 0; border-bottom: 1px solid var(--color-background-border); }}
ol.lessons .number {{ display: inline-block; min-width: 2em; font-family: var(--font-stack--monospace);
                      color: var(--color-foreground-secondary); }}
ol.lessons .title {{ font-weight: 600; }}
ol.lessons .purpose {{ display: block; margin-left: 2.6em; color: var(--color-foreground-secondary); font-size: 0.875em; }}
@media (max-width: 50em) {{ .page {{ display: block; }} .sidebar {{ border-right: 0; border-bottom: 1px solid var(--color-background-border); }}
                           main {{ padding: 1em 1.25em 2em; }} }}
"""

_EXPORTS = {
    "HTML": ("html", "index.html", "Pages to read",
             "One page per notebook, outputs and figures included, as committed: read it in a browser, offline."),
    "slides": ("slides", "index.html", "Slides to present",
               "One reveal.js deck per notebook, 1280 x 720, scaled to the screen: arrows move, <kbd>F</kbd> is full "
               "screen, <kbd>Esc</kbd> the overview. Long code is split over slides or left to the HTML pages."),
}


def _item(page: Path, title: str, purpose: str | None, minutes: int | None) -> str:
    number, _, name = title.partition(" · ")
    if not name:
        number, name = page.name[:2], title
    detail = (f'<span class="purpose">{html.escape(purpose)}; {minutes} minutes</span>' if purpose is not None else "")
    return (f'<li><span class="number">{html.escape(number)}</span> <a class="title" href="{html.escape(page.name)}">'
            f"{html.escape(name)}</a>{detail}</li>")


def _sections(pages: list[tuple[Path, str]]) -> list[tuple[str, list[str]]]:
    """(heading, list items) in the course plan's order: the index, each track, the notebooks for both, the rest."""
    lessons = {lesson.stem: lesson for lesson in COURSE}
    by_stem = {page.name.split(".")[0]: (page, title) for page, title in pages}

    def items(stems) -> list[str]:
        return [_item(*by_stem[s], lessons[s].purpose, lessons[s].minutes) for s in stems if s in by_stem]

    sections = [("Start here", items([s for s in lessons if s.startswith("00")]))]
    sections += [(f"The {name} track", items(stems)) for name, stems in TRACKS.items()]
    sections.append(("For both tracks", items([s for s in lessons if track_of(s) is None and not s.startswith("00")])))
    sections.append(("More", [_item(page, title, None, None) for stem, (page, title) in by_stem.items() if stem not in lessons]))
    return [(heading, entries) for heading, entries in sections if entries]


def write_index(out: Path, pages: list[tuple[Path, str]], what: str) -> Path:
    """Write ``out/index.html`` listing ``pages`` ((page, notebook title) pairs) and ``out/_static/course.css``.

    ``what`` is "HTML" or "slides"; the sidebar links the other export's index, which ``make html`` and
    ``make slides`` both write beside this one.
    """
    folder, _, heading, intro = _EXPORTS[what]
    static = out / "_static"
    static.mkdir(parents=True, exist_ok=True)
    (static / "course.css").write_text(STYLESHEET, encoding="utf-8")
    nav = "".join(
        f'<li class="current">{html.escape(h)}</li>' if name == what else f'<li><a href="../{f}/index.html">{html.escape(h)}</a></li>'
        for name, (f, _, h, _) in _EXPORTS.items())
    body = "\n".join(f"<h2>{html.escape(h)}</h2>\n<ol class=\"lessons\">\n" + "\n".join(entries) + "\n</ol>"
                     for h, entries in _sections(pages))
    index = out / "index.html"
    index.write_text(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>specmath course: {html.escape(heading.lower())}</title>\n"
        "<link rel=\"stylesheet\" href=\"_static/course.css\">\n</head>\n<body>\n<div class=\"page\">\n"
        "<aside class=\"sidebar\"><a class=\"brand\" href=\"index.html\">specmath</a>\n"
        "<p class=\"tagline\">Why speculative decoding is lossless, proved exactly: the course</p>\n"
        f"<nav><ul>{nav}</ul></nav></aside>\n<main>\n<h1>{html.escape(heading)}</h1>\n<p>{intro} Start with 00, then "
        "follow either track in its order.</p>\n"
        f"<p class=\"article\">The seed article: <span lang=\"zh\">《{html.escape(ARTICLE_TITLE)}》</span> "
        f"(<em>{html.escape(ARTICLE_TITLE_EN)}</em>), a blog post in Chinese; notebooks 01, 02 and 06 check its numbers.</p>\n"
        f"{body}\n</main>\n</div>\n</body>\n</html>\n",
        encoding="utf-8",
    )
    return index
