"""scripts/check_docs_links.py finds a missing page and a missing anchor, and passes a site without them."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from check_docs_links import broken_links, main  # noqa: E402


def write_site(folder: Path, link: str) -> Path:
    (folder / "guide").mkdir(parents=True)
    (folder / "index.html").write_text(f'<a href="guide/page.html#step">ok</a> <a href="{link}">x</a> '
                                       '<a href="https://example.org/">out</a>')
    (folder / "guide" / "page.html").write_text('<h1 id="step">Step</h1><a href="../index.html">up</a><a href="#step">here</a>')
    return folder


def test_a_site_whose_links_all_resolve_passes(tmp_path):
    broken, local, external = broken_links(write_site(tmp_path, "guide/page.html"))
    assert broken == [] and local == 4 and external == 1


def test_a_missing_page_is_named(tmp_path):
    broken, _, _ = broken_links(write_site(tmp_path, "guide/nosuch.html"))
    assert broken == ["index.html: guide/nosuch.html (no such file)"]


def test_a_missing_anchor_is_named_and_the_command_exits_1(tmp_path, capsys):
    site = write_site(tmp_path, "guide/page.html#nosuch")
    assert broken_links(site)[0] == ["index.html: guide/page.html#nosuch (no element with id 'nosuch')"]
    assert main([str(site)]) == 1


def test_a_folder_without_a_built_site_is_one_line_and_exit_2(tmp_path, capsys):
    assert main([str(tmp_path)]) == 2
    assert capsys.readouterr().err.count("\n") == 1
