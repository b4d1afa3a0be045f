"""The exported pages in a real browser: headless Chromium renders the math (MathJax) and the plots,
and every slide of every deck fits a 1280 x 720 screen with its text wrapped at word boundaries, in
fonts a back row reads.

Needs the Debian packages ``chromium`` and ``fonts-noto-cjk`` (``.ci/run`` installs both). Outside
CI it is skipped with that reason when not installed; under CI (CI set) a missing browser is a failure.
The page is opened from file://, as a student double-clicking it would. Chromium runs with a virtual
time budget (timers run as fast as the page allows), and the subprocess timeout only guards against a hang.
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from specmath.course.export import export_html, export_slides
from specmath.course.slide_sizes import CODE_FONT

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "01_two_token_world.ipynb"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run", "--virtual-time-budget=20000",
]

if CHROMIUM is None and os.environ.get("CI"):
    raise RuntimeError("CI must install chromium (apt-get install -y chromium) for the browser test")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed: apt-get install -y chromium")


def chromium(*args: str) -> str:
    done = subprocess.run([CHROMIUM, *FLAGS, *args], capture_output=True, text=True, timeout=600)
    return done.stdout


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    out = tmp_path_factory.mktemp("browser")
    html = export_html([NOTEBOOK], out / "html")[0]
    slides = export_slides([NOTEBOOK], out / "slides")[0]
    return html, slides


def test_html_page_in_chromium_typesets_the_math_with_local_mathjax_fonts_and_shows_the_plots(pages, tmp_path):
    html, _ = pages
    dom = chromium("--dump-dom", html.as_uri())
    rendered = dom.count('class="MathJax"')
    assert rendered >= 10, f"only {rendered} formulas typeset by MathJax"
    assert not re.search(r'class="[^"]*\b(MathJax_Error|merror)\b', dom), "a formula failed to typeset"
    assert "STIXMathJax_" in dom, "MathJax fell back to local fonts: the STIX-Web web fonts did not load"
    assert len(re.findall(r'<img[^>]+src="data:image/png;base64,', dom)) >= 1
    # the screenshot is not blank: plots and text put dark pixels on the page
    from PIL import Image

    shot = tmp_path / "page.png"
    chromium("--window-size=1200,1600", f"--screenshot={shot}", html.as_uri())
    image = Image.open(shot).convert("L")
    dark = sum(image.histogram()[:128]) / (image.width * image.height)  # grey levels below 128
    assert image.size == (1200, 1600) and dark > 0.01


def test_slides_in_chromium_start_reveal_js_and_typeset_the_math(pages):
    _, slides = pages
    dom = chromium("--dump-dom", slides.as_uri())
    assert re.search(r'<div class="reveal[^"]*\bready\b', dom), "reveal.js did not initialise"
    assert dom.count('class="MathJax"') >= 10
    assert 'class="slide-number"' in dom


#: draws each Chinese character of the glossary and the character U+10FFFD (which no font has: the
#: browser draws its "missing glyph" box) in the table's own font; a character drawn exactly like that box
#: (or not at all) did not render. The count of rendered / all characters goes into <body data-cjk>.
CJK_PROBE = """<script>
window.addEventListener("load", function () {
  var cells = Array.from(document.querySelectorAll("td")).filter(function (td) { return /[\\u4e00-\\u9fff]/.test(td.textContent); });
  var chars = new Set();
  cells.forEach(function (td) { Array.from(td.textContent).forEach(function (c) { if (/[\\u4e00-\\u9fff]/.test(c)) chars.add(c); }); });
  var canvas = document.createElement("canvas"); canvas.width = 48; canvas.height = 48;
  var ctx = canvas.getContext("2d");
  ctx.font = "32px " + (cells.length ? getComputedStyle(cells[0]).fontFamily : "sans-serif");
  function drawn(c) { ctx.clearRect(0, 0, 48, 48); ctx.fillText(c, 4, 38); return Array.from(ctx.getImageData(0, 0, 48, 48).data).join(","); }
  var missing = drawn(String.fromCodePoint(0x10FFFD)), blank = drawn(" ");
  var rendered = Array.from(chars).filter(function (c) { var d = drawn(c); return d !== missing && d !== blank; }).length;
  document.body.setAttribute("data-cjk", rendered + "/" + chars.size);
});
</script>"""


def test_glossary_chinese_renders_with_a_cjk_font_named_by_the_export(tmp_path):
    # a machine without a CJK font shows the glossary as empty boxes; the export names the fonts to use
    # (CI installs Debian's fonts-noto-cjk) and this test fails if the browser still draws missing glyphs
    page = export_html([ROOT / "notebooks" / "00_index.ipynb"], tmp_path / "html")[0]
    text = page.read_text(encoding="utf-8")
    assert '"Noto Sans CJK SC"' in text
    probe = page.with_name("cjk_probe.html")
    probe.write_text(text.replace("</body>", CJK_PROBE + "</body>"), encoding="utf-8")
    dom = chromium("--dump-dom", probe.as_uri())
    found = re.search(r'data-cjk="(\d+)/(\d+)"', dom)
    assert found, "the probe did not run"
    rendered, total = map(int, found.groups())
    assert total >= 20, f"only {total} Chinese characters found in the glossary"
    assert rendered == total, f"{total - rendered} of {total} Chinese characters render as missing glyphs: install fonts-noto-cjk"


NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
#: the smallest text on a slide, in deck px: the caption of a shown function (12 px on a 1024 x 768
#: projector, which shows the 1280 x 720 deck at 0.8); tables, code and printed output are CODE_FONT px
#: (14.4 px there), prose 20 px
MIN_FONT = 15

#: visits every slide of a deck (as a lecturer pressing "next" does), lets MathJax typeset it, and records
#: its content height and width against the deck's, the bottom of its lowest figure, and every piece of
#: code or output text (between spaces and hyphens) that the browser wrapped across two lines although it
#: is narrower than its block; the record goes into <body data-slides>.
SLIDE_PROBE = """<script>
window.addEventListener("load", function () {
  function splitWords(section) {
    var bad = [];
    section.querySelectorAll("pre").forEach(function (pre) {
      var walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT), node;
      while ((node = walker.nextNode())) {
        var re = /[^\\s\\-]+/g, m;
        while ((m = re.exec(node.data))) {
          var range = document.createRange();
          range.setStart(node, m.index);
          range.setEnd(node, m.index + m[0].length);
          var tops = new Set(Array.from(range.getClientRects()).filter(function (r) { return r.width > 0; })
                                  .map(function (r) { return Math.round(r.top); }));
          if (tops.size > 1 && range.getBoundingClientRect().width / Reveal.getScale() < pre.clientWidth) bad.push(m[0]);
        }
      }
    });
    return bad;
  }
  // the smallest font (deck px, before reveal.js scales the deck to the screen) of any text on the slide, and
  // of code and printed output (text inside <pre>); MathJax sizes its formulas from the text around them
  function smallestFonts(section) {
    var text = 1e9, code = 1e9, walker = document.createTreeWalker(section, NodeFilter.SHOW_TEXT), node;
    while ((node = walker.nextNode())) {
      var el = node.parentElement;
      if (!node.data.trim() || !el || el.closest("[class*=MathJax], script, style, .MJX_Assistive_MathML")) continue;
      if (!el.getClientRects().length) continue;  // not rendered
      var size = parseFloat(getComputedStyle(el).fontSize);
      text = Math.min(text, size);
      if (el.closest("pre")) code = Math.min(code, size);
    }
    return {text: text, code: code};
  }
  function lowestFigure(section) {
    var top = section.getBoundingClientRect().top, bottom = 0;
    section.querySelectorAll("img").forEach(function (img) {
      bottom = Math.max(bottom, (img.getBoundingClientRect().bottom - top) / Reveal.getScale());
    });
    return Math.round(bottom);
  }
  function run() {
    var slides = Reveal.getSlides(), out = [], i = 0;
    function next() {
      if (i >= slides.length) {
        var leaves = document.querySelectorAll(".reveal .slides section:not(:has(section))").length;
        document.body.setAttribute("data-slides", JSON.stringify({height: Reveal.getConfig().height,
                                   width: Reveal.getConfig().width, leaves: leaves, slides: out}));
        return;
      }
      var s = slides[i], ix = Reveal.getIndices(s);
      Reveal.slide(ix.h, ix.v);
      MathJax.Hub.Queue(["Rerender", MathJax.Hub, s], function () {
        var fonts = smallestFonts(s);
        out.push({slide: ix.h + "/" + ix.v, height: s.scrollHeight, width: s.scrollWidth, figure: lowestFigure(s),
                  split: splitWords(s), text: s.textContent.trim().slice(0, 50), font: fonts.text, code: fonts.code});
        i += 1;
        setTimeout(next, 0);
      });
    }
    next();
  }
  function ready() { MathJax.Hub.Queue(run); }
  if (Reveal.isReady()) { ready(); } else { Reveal.on("ready", ready); }
});
</script>"""


@pytest.fixture(scope="module")
def decks(tmp_path_factory):
    return export_slides(NOTEBOOKS, tmp_path_factory.mktemp("decks"))


@pytest.mark.parametrize("index", range(len(NOTEBOOKS)), ids=[p.stem for p in NOTEBOOKS])
def test_every_slide_fits_a_1280x720_screen_with_its_figures_in_readable_fonts_and_wraps_text_between_words(decks, index):
    import html
    import json

    deck = decks[index]
    probe = deck.with_name(deck.stem + ".probe.html")
    probe.write_text(deck.read_text(encoding="utf-8").replace("</body>", SLIDE_PROBE + "</body>"), encoding="utf-8")
    dom = chromium("--window-size=1280,720", "--hide-scrollbars", "--virtual-time-budget=120000", "--dump-dom", probe.as_uri())
    found = re.search(r'data-slides="([^"]*)"', dom)
    assert found, f"{deck.name}: the probe did not finish"
    record = json.loads(html.unescape(found.group(1)))
    slides, height, width = record["slides"], record["height"], record["width"]
    assert (width, height) == (1280, 720)
    assert len(slides) == record["leaves"] >= 4  # every slide visited
    tall = [(s["slide"], s["height"], s["text"]) for s in slides if s["height"] > height]
    assert not tall, f"{deck.name}: slides taller than the {height} px screen: {tall}"
    wide = [(s["slide"], s["width"]) for s in slides if s["width"] > width]
    assert not wide, f"{deck.name}: slides wider than the screen: {wide}"
    below = [(s["slide"], s["figure"]) for s in slides if s["figure"] > height]
    assert not below, f"{deck.name}: figures below the fold: {below}"
    split = [(s["slide"], s["split"][:3]) for s in slides if s["split"]]
    assert not split, f"{deck.name}: words broken across lines: {split}"
    small = [(s["slide"], s["font"], s["text"][:30]) for s in slides if s["font"] < MIN_FONT]
    assert not small, f"{deck.name}: text smaller than {MIN_FONT} px: {small}"
    code = [(s["slide"], s["code"], s["text"][:30]) for s in slides if s["code"] < CODE_FONT]
    assert not code, f"{deck.name}: code smaller than {CODE_FONT} px: {code}"
