"""The engine registry: read without torch, each entry's code imported when it is opened, and a JSON-lines
engine that needs its own interpreter and a model folder added as one entry with a command template."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from specmath.audit.engines.registry import (
    ENGINES,
    JSON_LINES,
    TARGET_KINDS,
    EngineEntry,
    EngineOpening,
    Requirement,
    engine_entry,
    engines_for,
    offered_engines,
)
from specmath.validation import InvalidArgument, UnknownName

TOY = Path(__file__).with_name("toy_jsonl_engine.py")


def test_naming_an_engine_and_building_the_help_import_neither_torch_scipy_nor_any_engine():
    code = ("import sys; from specmath.cli import build_parser; build_parser(); "
            "from specmath.audit.engines.registry import ENGINES; [e.unavailable() for e in ENGINES.values()]; "
            "print(sorted(m for m in sys.modules if m in ('torch', 'scipy') or m.startswith('specmath.audit')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # the registry, the semantics it names, and the packages above them: no engine's code, no audit
    assert out.stdout.strip() == str(["specmath.audit", "specmath.audit.engines", "specmath.audit.engines.registry",
                                      "specmath.audit.engines.semantics"])


def test_every_entry_is_complete_for_what_it_runs_on():
    for name, entry in ENGINES.items():
        assert entry.name == name and entry.target in TARGET_KINDS and entry.description
        module, _, attribute = entry.factory.partition(":")
        assert module.startswith("specmath.audit.engines.") and attribute, entry.factory
        if entry.target == "pair":  # torch engines: semantics and a named control declared here
            assert entry.semantics is not None and entry.controls and not entry.command
        if entry.target == "gguf":  # started from a command template, after its requirements are checked
            assert entry.factory == JSON_LINES and "{target}" in entry.command and entry.requires
        if entry.control_engine is not None:
            assert not entry.controls and ENGINES[entry.control_engine].controls
    assert engines_for("pair") == ("specmath", "hf-assisted", "hf-lookup")
    assert set(offered_engines()) == set(ENGINES) - {"function", "command", "endpoint"}
    with pytest.raises(UnknownName, match="did you mean 'hf-lookup'"):
        engine_entry("hf-lokup")


def test_every_factory_is_a_function_of_its_module():
    pytest.importorskip("torch")
    for entry in ENGINES.values():
        assert callable(entry.factory_function()), entry.factory


def test_a_missing_requirement_is_the_reason_and_refuses_to_start(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECMATH_ENGINES_DIR", str(tmp_path / "engines"))
    entry = EngineEntry("x", "x", "folder", JSON_LINES, command=("{root}/.venv-x/bin/python",),
                        requires=(Requirement("its venv is missing: run `make engines-x` ({root})",
                                              path="{root}/.venv-x/bin/python"),
                                  Requirement("no such program", program="no-such-program-here")))
    assert entry.unavailable() == f"its venv is missing: run `make engines-x` ({tmp_path})"
    assert entry.command_line("/m") == [f"{tmp_path}/.venv-x/bin/python"]
    target = _folder_target(tmp_path)
    with pytest.raises(InvalidArgument, match=r"x: its venv is missing"):
        entry.open(EngineOpening(target))
    with pytest.raises(InvalidArgument, match="x runs a Hugging Face model folder: give --target FOLDER"):
        entry.open(EngineOpening(dataclasses.replace(target, folder=None)))
    assert dataclasses.replace(entry, requires=entry.requires[1:]).unavailable() == "no such program"


def _folder_target(folder: Path):
    from specmath.audit.engines.target import AuditTarget

    return AuditTarget(folder.name, None, lambda: pytest.fail("the target's torch model was loaded"), folder=folder)


def test_a_json_lines_engine_in_its_own_interpreter_on_a_model_folder_is_one_entry(tmp_path, monkeypatch, capsys):
    # the shape of an engine in its own venv (vLLM's offline LLM): an interpreter, its script, --model FOLDER
    pytest.importorskip("torch")
    from specmath.audit.engines.rows import OPTION_ROWS
    from specmath.audit.engines.table_runs import open_engine, run_row
    from specmath.cli import main

    python = Path(sys.executable)
    entry = EngineEntry("toy-folder", "the toy engine on a model folder", "folder", JSON_LINES,
                        command=(str(python), str(TOY), "--model", "{target}", "--draft", "{draft}"),
                        requires=(Requirement("the interpreter is missing", path=str(python)),), lookup=True)
    monkeypatch.setitem(ENGINES, entry.name, entry)
    target = _folder_target(tmp_path)
    with open_engine(entry.name, EngineOpening(target)) as opened:
        assert opened.engine.name == "toy-folder" and opened.engine.info["engine"] == f"toy on {tmp_path}"
        assert opened.control_engine is None and opened.lookup  # the toy takes no controls
        audit, _, _ = run_row(opened, target, OPTION_ROWS["T=1"], n=400, prompt=[31, 26, 29, 31, 26])
    # the law from the engine's own logits at N = 400: a correct engine passes with probability >= 1 - 1e-6
    assert audit.error is None and audit.verdict == "PASS (no negative control)", [c.to_json() for c in audit.checks]
    with pytest.raises(InvalidArgument, match="toy-folder: no model folder at /no/draft"):
        open_engine(entry.name, EngineOpening(target, draft="/no/draft"))
    assert entry.name in offered_engines()
    assert main(["audit-generate", "toy-folder", "--target", "tiny"]) == 2
    assert "toy-folder runs a Hugging Face model folder: --target FOLDER, not 'tiny'" in capsys.readouterr().err
    assert main(["audit-generate", "toy-folder", "--target", str(tmp_path), "--draft", "/no/draft"]) == 2
    assert "--draft /no/draft: no such model folder" in capsys.readouterr().err
