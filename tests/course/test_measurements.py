"""Notebook 07's timing tables are read from the committed raw results, never measured when it runs."""

import json
import shutil
from pathlib import Path

import nbformat
import pytest

from specmath.course.measurements import MEASUREMENTS, bench_table, histogram_table, load_measurement, model_gap_line
from specmath.validation import InvalidFile, UnknownName

GPU = "gpu_h200_2026-11-30"
ROOT = Path(__file__).resolve().parents[2]


def test_the_gpu_measurement_names_its_machine_and_every_finished_bench_run_is_a_row():
    m = load_measurement(GPU)
    assert m.machine.startswith("NVIDIA H200 (CUDA ") and "commit 8d7239b" in m.machine and "2026-11-30" in m.machine
    files = {p.stem: json.loads(p.read_text()) for p in (MEASUREMENTS / GPU).glob("bench-*.json")}
    assert [r.run for r in m.bench] == sorted(name for name, run in files.items() if run["ok"])
    table = bench_table(m.bench).splitlines()
    assert len(table) == 2 + len(m.bench) and all(line.count("|") == 15 for line in table)
    for row, line in zip(m.bench, table[2:], strict=True):
        run = files[row.run]
        # gap = measured / model - 1, read from the JSON's own fields
        assert row.gap == run["measured_speedup_vs_plain"] / run["predicted_speedup"] - 1
        assert f"**{run['measured_speedup_vs_plain']:.2f}x**" in line and f"{row.gap:+.0%}" in line


def test_the_gap_line_counts_the_runs_within_the_margin_and_names_the_largest_gap():
    rows = load_measurement(GPU).bench
    close = [r for r in rows if abs(r.gap) <= 0.10]
    worst = max(rows, key=lambda r: abs(r.gap))
    line = model_gap_line(rows)
    assert f"{len(close)} of {len(rows)} runs" in line and worst.run.removeprefix("bench-") in line.split("largest gap")[1]


def test_the_histogram_table_shows_each_check_with_its_power():
    checks = load_measurement(GPU).histograms("hist-bundled")
    table = histogram_table(checks)
    assert len(table.splitlines()) == 2 + len(checks)
    for check in checks.values():
        assert f"{check['detectable_tv_at_1e-6_power_0.99']:.4f}" in table and str(check["n"]) in table


def test_unknown_names_and_malformed_files_get_one_clear_message(tmp_path):
    with pytest.raises(UnknownName, match=f"did you mean '{GPU}'"):
        load_measurement("gpu_h200_2026_11_30")
    with pytest.raises(UnknownName, match="did you mean 'hist-bundled'"):
        load_measurement(GPU).histograms("hist_bundled")
    shutil.copytree(MEASUREMENTS / GPU, tmp_path / "broken")
    (tmp_path / "broken" / "bench-x.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(InvalidFile, match="bench-x.json: not JSON"):
        load_measurement("broken", tmp_path)


def test_notebook_07_shows_the_tables_its_committed_files_make_now():
    # 07's committed outputs are what the measurement files say: a run added to or changed in
    # data/measurements/ without re-executing 07 fails here
    notebook = nbformat.read(ROOT / "notebooks" / "07_real_models.ipynb", as_version=4)
    shown = [output["data"]["text/markdown"] for cell in notebook.cells if cell.cell_type == "code"
             for output in cell.get("outputs", []) if "text/markdown" in output.get("data", {})]
    gpu = load_measurement(GPU)
    for table in (histogram_table(gpu.histograms("hist-bundled")), bench_table(gpu.bench)):
        assert sum(text.startswith(table + "\n\nMachine: " + gpu.machine + ".") for text in shown) == 1
    assert any(model_gap_line(gpu.bench) in text for text in shown)
