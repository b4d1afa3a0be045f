"""The mutation table (tests/mutants.toml) cannot rot: every search text occurs once, every test it names exists.

``make mutants`` (scripts/mutants.py) applies each mutant to a clean copy of the tree and runs its tests;
this file checks, without running any mutant, that the table still fits the code.
"""

import ast
import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("mutants_script", ROOT / "scripts" / "mutants.py")
mutants_script = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("mutants_script", mutants_script)  # the dataclasses of the script look their module up
_spec.loader.exec_module(mutants_script)
MUTANTS = mutants_script.load_table()

#: the bugs the project's mutation measurement named, each a mutant of the table
NAMED_BUGS = {"no-bonus-token", "bonus-wrong-row", "resample-from-p", "no-min-one", "block-running-weight",
              "specinfer-residual", "restart-mass", "torch-accept-u-le", "torch-accept-ratio-swapped", "torch-bonus-row",
              "torch-block-stop-probability", "topk-warp-one-side", "detectable-tv-understates-power",
              "edge-probes-skipped", "law-equality-tolerance", "g-test-dof", "detectable-tv-overstates-power"}


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_the_search_text_occurs_exactly_once_and_the_mutant_still_parses(mutant):
    text = (ROOT / mutant.file).read_text(encoding="utf-8")
    assert text.count(mutant.search) == 1, f"{mutant.name}: search text found {text.count(mutant.search)} times in {mutant.file}"
    mutated = mutant.apply(text)
    assert mutated != text
    ast.parse(mutated)  # a realistic bug, not a syntax error


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_every_test_a_mutant_names_exists(mutant):
    for node in mutant.tests:
        path, _, name = node.partition("::")
        assert (ROOT / path).is_file(), f"{mutant.name}: no test file {path}"
        if name:
            source = (ROOT / path).read_text(encoding="utf-8")
            assert re.search(rf"^def {re.escape(name.split('[')[0])}\(", source, re.M), f"{mutant.name}: no test {node}"


def test_the_table_holds_the_named_bugs_and_more_in_every_group():
    names = {m.name for m in MUTANTS}
    assert NAMED_BUGS <= names, sorted(NAMED_BUGS - names)
    assert len(names) == len(MUTANTS) >= len(NAMED_BUGS) + 10
    assert {m.group for m in MUTANTS} == set(mutants_script.GROUPS)


def test_applying_a_mutant_refuses_a_search_text_that_is_not_there_once():
    mutant = MUTANTS[0]
    with pytest.raises(ValueError, match="occurs 0 times"):
        mutant.apply("nothing to find here")
    with pytest.raises(ValueError, match="occurs 2 times"):
        mutant.apply(mutant.search + "\n" + mutant.search)


def test_a_table_entry_with_an_unknown_field_or_a_repeated_name_is_refused(tmp_path):
    entry = 'name = "x"\ngroup = "core"\nbug = "b"\nfile = "f.py"\nsearch = "a"\nreplace = "b"\ntests = ["t.py"]\n'
    bad = tmp_path / "bad.toml"
    bad.write_text("[[mutant]]\n" + entry + 'colour = "red"\n')
    with pytest.raises(ValueError, match=r"unknown fields \['colour'\]"):
        mutants_script.load_table(bad)
    bad.write_text(("[[mutant]]\n" + entry) * 2)
    with pytest.raises(ValueError, match="listed twice"):
        mutants_script.load_table(bad)


_page_spec = importlib.util.spec_from_file_location("mutant_page", ROOT / "scripts" / "mutant_page.py")
mutant_page = importlib.util.module_from_spec(_page_spec)
_page_spec.loader.exec_module(mutant_page)


def test_the_proofs_page_shows_the_table_and_the_recorded_runs_as_mutant_page_writes_them():
    text = mutant_page.PAGE.read_text(encoding="utf-8")
    assert text == mutant_page.page_text(text, mutant_page.section()), "out of date: run python scripts/mutant_page.py"


def _record(outcomes):
    machine = {"cpu": "a CPU", "cores": 2, "platform": "x86_64", "python": "3.11", "date": "2026-12-01", "commit": "abc"}
    return {"label": "quiet", "seconds": 12.0, "cpu_seconds": 20.0, "jobs": 2, "machine": machine, "load_average": [[1.0, 1, 1], [2.0, 2, 2]],
            "command": "python scripts/mutants.py", "mutants": outcomes}


def test_the_page_shows_a_survivor_and_a_mutant_the_record_does_not_hold_as_such():
    first, second = MUTANTS[0], MUTANTS[1]
    outcome = {"name": first.name, "status": "survived", "killed_by": "", "detail": "3 passed", "seconds": 1.5,
               "verify_status": 0, "verify_line": "23 of 23 samplers lossless", "verify_seconds": 2.0}
    body = mutant_page.section([first, second], [("run", _record([outcome]))])
    assert "**0 of 1 killed** in 12 s (20 CPU-seconds in all), 2 at a time, on 2 cores of an x86_64 a CPU, quiet" in body
    assert f"| `{first.name}` | {first.group} |" in body and "**SURVIVED**: 3 passed | 1.5 |" in body
    assert f"| `{second.name}` | {second.group} |" in body and "| not measured | |" in body
    with pytest.raises(ValueError, match="needs the markers"):
        mutant_page.page_text("no markers here", body)

