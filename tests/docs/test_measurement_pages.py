"""The measurement pages and the README's speed table are what scripts/measurement_tables.py writes
from the committed JSON: every number on them comes from data/measurements/."""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import measurement_tables as mt  # noqa: E402


def test_every_generated_page_and_the_readme_table_match_the_committed_files():
    stale = [path.relative_to(ROOT).as_posix() for path, text in mt.outputs().items() if path.read_text() != text]
    assert not stale, f"out of date, run `python scripts/measurement_tables.py`: {stale}"


def test_every_measurement_folder_has_a_page_and_every_template_a_folder():
    import engine_pages
    import vllm_pages

    folders = {p.name for p in mt.DATA.iterdir() if p.is_dir()}
    templates = {p.name.removesuffix(".md.tmpl") for p in mt.PAGES.glob("*.md.tmpl")}
    # the engine audits' folders have their pages written by scripts/engine_pages.py and scripts/vllm_pages.py
    # (tests/audit/engines/test_engine_pages.py, test_vllm_pages.py)
    assert folders == templates | {folder.name for folder, _ in engine_pages.MEASUREMENTS} | {vllm_pages.MEASUREMENT.name}


def test_the_headline_table_has_one_row_per_bench_run_with_its_measured_speedup():
    m = mt.load(mt.HEADLINE)
    rows = [line for line in mt.headline_table(m).splitlines()[2:]]
    assert len(rows) == len(mt.bench_runs(m)) > 0
    for row, run in zip(rows, mt.bench_runs(m)):
        assert f"**{run['measured_speedup_vs_plain']:.2f}x**" in row
        assert f"{run['tokens_per_s']['plain']:.1f}" in row


def test_a_page_follows_its_json(tmp_path, monkeypatch):
    # a copy of the GPU folder with one run's plain rate doubled: the page's numbers must move with it
    source = mt.DATA / mt.HEADLINE
    copy = tmp_path / "data" / mt.HEADLINE
    copy.mkdir(parents=True)
    for path in source.glob("*.json"):
        record = json.loads(path.read_text())
        if record.get("run") == "bench-bundled-block":
            record["tokens_per_s"]["plain"] *= 2
        (copy / path.name).write_text(json.dumps(record))
    monkeypatch.setattr(mt, "DATA", tmp_path / "data")
    fields = mt.fields(mt.load(mt.HEADLINE))
    original = json.loads((source / "bench-bundled-block.json").read_text())["tokens_per_s"]["plain"]
    assert fields["bench_bundled_block_plain"] == f"{2 * original:.1f}"

