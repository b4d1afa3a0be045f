"""audit-generate's engine options on the command line: each mistake is one line and exit status 2, found
before torch is imported; a Python engine named module:function and a subprocess engine run end to end."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from specmath.cli import main

ROOT = Path(__file__).resolve().parents[3]
TOY = Path(__file__).with_name("toy_jsonl_engine.py")
WRAPPER = ("import sys\nfrom specmath.cli import main\nstatus = main(sys.argv[1:])\n"
           "print('torch imported:', 'torch' in sys.modules)\nsys.exit(status)\n")

MISTAKES = [
    (["llama-cpp-ngram", "--pair", "tiny"], r"the GGUF engines run GGUF files: --target smollm2 or --target FILE\.gguf"),
    (["llama-cpp-ngram", "--target", "missing.gguf"], r"--target missing\.gguf: no such GGUF file"),
    (["llama-cpp-ngram", "--target", "smollm2", "--draft", "missing.gguf"], r"--draft missing\.gguf: no such GGUF file"),
    (["llama_cpp_ngram", "--target", "smollm2"], r"unknown engine 'llama_cpp_ngram' \(did you mean 'llama-cpp-ngram'\?\)"),
    (["mymodule:generate"], r"name the model the law comes from: --target MODEL"),
    (["--engine-cmd", "x", "--endpoint", "http://localhost:1"], r"name one engine: ENGINE, --engine-cmd or --endpoint"),
    (["specmath", "--pair", "tiny", "--min-p", "0.1"], r"the engine \(specmath\) does not take min_p"),
    (["specmath", "--pair", "tiny", "--target", "smollm2"], r"specmath takes --pair, --n and sampling options"),
    (["hf-lookup", "--pair", "tiny", "--logit-bias", "5"], r"--logit-bias takes TOKEN=BIAS"),
    (["hf-lookup", "--pair", "tiny", "--min-p", "0"], r"--min-p must be a finite number in \(0, 1\], got 0\.0"),
    (["llama-cpp-ngram", "--target", "smollm2", "--option", "min-p", "--n", "5"],
     r"invalid choice|unknown --option value 'min-p' \(did you mean 'min-p 0\.1'\?\)"),
    (["llama-cpp-ngram", "--target", "smollm2", "--option", "min-p 0.1", "--top-k", "5"],
     r"--option 'min-p 0\.1' sets the sampling options itself: leave out the others"),
    (["--options-table", "--engine-cmd", "x"], r"--options-table runs the GGUF engines"),
    (["--json-out", "x.json", "hf-lookup", "--pair", "tiny"], r"--json-out writes the records of --options-table"),
    (["--endpoint", "localhost:8080", "--target", "tiny"], r"--endpoint must be an http\(s\) URL, got 'localhost:8080'"),
    (["tiny_engines:tiny_speculative", "--target", "tiny", "--prompt", " "], r"--prompt is empty"),
    (["--endpoint", "http://h:1", "--plain-endpoint", "h:2", "--target", "tiny", "--pathwise", "5"],
     r"--plain-endpoint must be an http\(s\) URL, got 'h:2'"),
    (["--plain-endpoint", "http://h:2", "--engine-cmd", "x", "--target", "tiny", "--pathwise", "5"],
     r"--plain-endpoint is the plain reference of an --endpoint: give --endpoint URL too"),
    (["--endpoint", "http://h:1", "--plain-endpoint", "http://h:2", "--target", "tiny"],
     r"--plain-endpoint is the reference of --pathwise N: give --pathwise N too"),
    (["--endpoint", "http://h:1", "--plain-endpoint", "http://h:2", "--law", "server", "--vocab-size", "9",
      "--pathwise", "5"], r"--plain-endpoint is the reference of --pathwise N, which an audit with --law server"),
    (["--endpoint", "http://h:1", "--target", "tiny", "--pathwise", "5"],
     r"--pathwise N with --endpoint compares against plain decoding: give --plain-endpoint URL"),
    (["mymodule:generate", "--target", "tiny", "--tv", "0.05", "--n", "500"], r"give --n N or --tv TV, not both"),
    (["specmath", "--pair", "tiny", "--tv", "0.05"], r"specmath takes --pair, --n and sampling options \(not .*--tv\)"),
    (["--endpoint", "http://h:1", "--law", "server", "--vocab-size", "100", "--tv", "0.05"],
     r"--tv chooses N from a --target's law, which --law server does not compute beforehand: give --n N"),
    (["--all", "--tv", "0.05"], r"--tv chooses N from a --target's law, which --all does not compute"),
    (["mymodule:generate", "--target", "tiny", "--tv", "0"], r"--tv must be a finite number in \(0, 1\], got 0\.0"),
]
#: mistakes seen where the engine starts, after the target (and torch) is loaded: still one line and exit 2
MISTAKES_AT_START = [
    (["--engine-cmd", "false", "--target", "tiny"], r"the engine 'false' did not answer \{\"op\": \"info\"\}: .*status 1"),
    (["--engine-cmd", "sh -c 'echo its reason >&2; exit 3'", "--target", "tiny"], r"did not answer .*its reason"),
    (["--endpoint", "http://127.0.0.1:9", "--target", "tiny"], r"--endpoint http://127\.0\.0\.1:9/v1/completions serves no completions: cannot reach"),
    (["--endpoint", "http://127.0.0.1:9", "--plain-endpoint", "http://127.0.0.1:9", "--target", "tiny", "--pathwise",
      "5"], r"--endpoint http://127\.0\.0\.1:9/v1/completions serves no completions: cannot reach"),
    (["tiny_engines:tiny_speculative", "--target", "tiny", "--logit-bias", "99999=1"],
     r"--logit-bias token 99999 is outside tiny's vocabulary: a token id in \[0, 32\)"),
]


@pytest.mark.parametrize("args,line", MISTAKES, ids=[" ".join(a) for a, _ in MISTAKES])
def test_an_engine_option_mistake_is_one_line_and_exit_2_before_torch(args, line, tmp_path):
    out = subprocess.run([sys.executable, "-c", WRAPPER, "audit-generate", *args], capture_output=True, text=True,
                         cwd=tmp_path, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 2, (out.stdout, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and re.search(line, lines[0]), out.stderr
    assert "torch imported: False" in out.stdout


@pytest.mark.parametrize("args,line", MISTAKES_AT_START, ids=[" ".join(a) for a, _ in MISTAKES_AT_START])
def test_an_engine_that_cannot_start_is_one_line_and_exit_2(args, line):
    pytest.importorskip("torch")
    out = subprocess.run([sys.executable, "-m", "specmath", "audit-generate", *args], capture_output=True, text=True,
                         cwd=ROOT, env={"PYTHONPATH": f"{ROOT}:{TOY.parent}", "PATH": "/usr/bin:/bin",
                                        "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"})
    assert out.returncode == 2, (out.stdout, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and re.search(line, lines[0]), out.stderr


def _function_engine_audit(capsys, monkeypatch, *args: str) -> tuple[int, dict]:
    """(exit status, JSON report) of ``audit-generate tiny_engines:tiny_speculative --target tiny`` at T = 0.8."""
    pytest.importorskip("torch")
    monkeypatch.syspath_prepend(str(TOY.parent))
    status = main(["audit-generate", "tiny_engines:tiny_speculative", "--target", "tiny", *args,
                   "--temperature", "0.8", "--json"])
    return status, json.loads(capsys.readouterr().out)


def test_a_python_function_engine_from_the_command_line(capsys, monkeypatch):
    status, report = _function_engine_audit(capsys, monkeypatch, "--n", "600")
    assert status == 0 and report["verdict"] == "PASS (no negative control)", report
    assert report["engine"] == "tiny_engines:tiny_speculative" and report["n"] == 600


def test_tv_runs_the_audit_at_the_n_whose_tests_detect_it_and_its_reproducer_names_that_n(capsys, monkeypatch):
    # at N = 1000 this audit's tests detect about 0.14: asking for 0.1 must raise N until both detect 0.1
    status, report = _function_engine_audit(capsys, monkeypatch, "--tv", "0.1")
    assert status == 0 and report["verdict"].startswith("PASS"), report
    tvs = [c["detectable_tv"] for c in report["checks"] if c["role"] == "engine"]
    assert len(tvs) == 2 and max(tvs) <= 0.1, tvs
    assert 1000 < report["n"] <= 50_000
    assert report["reproducer"].endswith(f"--n {report['n']} --seed 0") and "--tv" not in report["reproducer"]


def test_a_subprocess_engine_from_the_command_line_takes_its_semantics_from_its_info(capsys):
    pytest.importorskip("torch")
    status = main(["audit-generate", "--engine-cmd", f"{sys.executable} {TOY}", "--target", "tiny", "--n", "400",
                   "--min-p", "0.2", "--pathwise", "5", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert status == 0 and report["verdict"] == "PASS (no negative control)", report
    assert report["pathwise"]["promised"] and report["pathwise"]["differences"] == 0


@pytest.mark.parametrize("flags,tv", [([], 0.05), (["--tv", "0.1"], 0.1)], ids=["default", "--tv 0.1"])
def test_the_options_table_detects_the_tv_asked_for(flags, tv, capsys, monkeypatch):
    # the table's rows each choose their N from target_tv; no engine runs here: the table's runner is replaced
    import specmath.audit.engines.table_runs as table_runs
    import specmath.audit.engines.target as target_module
    from specmath.commands import audit_generate_command

    asked = {}
    monkeypatch.setattr(audit_generate_command, "_check_target", lambda *a, **k: None)
    monkeypatch.setattr(target_module, "load_target", lambda name: name)
    monkeypatch.setattr(table_runs, "run_options_table", lambda engines, target, **kw: asked.update(kw) or [])
    assert main(["audit-generate", "--options-table", "--target", "smollm2", *flags]) == 0
    assert asked["target_tv"] == tv and asked["n"] is None
