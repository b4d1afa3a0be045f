"""The documentation site builds offline with warnings as errors, and every local link and anchor resolves.

Marked ``notebooks`` (it renders every notebook), so ``make test-fast`` leaves it out; ``make test``
runs it. The build is the one ``make docs`` runs, into a temporary folder.
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from check_docs_links import broken_links  # noqa: E402

pytestmark = pytest.mark.notebooks


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("docs")
    build = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", "-d", str(out / ".doctrees"),
         str(ROOT / "docs"), str(out / "html")],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )
    assert build.returncode == 0, f"sphinx-build -W failed:\n{build.stdout}\n{build.stderr}"
    return out / "html"


def test_every_local_link_and_anchor_of_the_site_resolves(site):
    broken, local, _ = broken_links(site)
    assert not broken, "\n".join(broken)
    assert local > 1000  # the pages link to each other, the API pages to their anchors


def test_the_site_has_every_section_and_every_notebook(site):
    for section in ("tutorials", "how-to", "explanation", "reference", "measurements"):
        assert (site / section / "index.html").is_file(), section
    notebooks = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    rendered = sorted(p.stem for p in (site / "tutorials").glob("[0-9][0-9]_*.html"))
    assert rendered == notebooks


def test_notebooks_are_rendered_with_their_committed_outputs_and_math_is_offline(site):
    page = (site / "tutorials" / "01_two_token_world.html").read_text(encoding="utf-8")
    assert "cell_output" in page  # outputs shown, from the committed notebook
    assert "<img" in page  # its figures
    assert 'class="math' in page  # $...$ became math for MathJax
    assert "_static/mathjax/MathJax.js" in page and (site / "_static" / "mathjax" / "MathJax.js").is_file()
    assert "https://cdn" not in page  # nothing fetched when a page is viewed


def test_the_reference_renders_the_docstrings_and_the_command_line(site):
    api = (site / "reference" / "core.html").read_text(encoding="utf-8")
    assert 'id="specmath.laws.Law"' in api and 'id="specmath.exact.exact"' in api
    lm = (site / "reference" / "lm.html").read_text(encoding="utf-8")
    assert 'id="specmath.lm.speculative_decode.speculative_generate"' in lm
    cli = (site / "reference" / "cli.html").read_text(encoding="utf-8")
    from specmath.cli import COMMANDS

    for name in COMMANDS:
        assert f"usage: specmath {name}" in cli, name


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed: apt-get install -y chromium")
def test_chromium_typesets_a_notebooks_math_with_the_local_mathjax(site):
    page = site / "tutorials" / "01_two_token_world.html"
    dom = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--virtual-time-budget=20000", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=180,
    ).stdout
    formulas = page.read_text(encoding="utf-8").count('class="math notranslate')
    typeset = len(re.findall(r'class="MathJax[ "]', dom))  # inline, display, and display broken into lines
    assert typeset == formulas > 10, f"MathJax typeset {typeset} of the page's {formulas} formulas"
    assert 'class="MathJax_Error' not in dom, "a formula failed to typeset"
    assert "STIXMathJax_" in dom, "MathJax fell back to local fonts: the STIX-Web web fonts did not load"
