"""Every mistake a user can make on the command line gets one line, exit status 2, and no torch.

Each row of ``MISTAKES`` is a command line and a regular expression of the one line it must print
on stderr. Each runs as a user runs it, in an interpreter of its own that has imported nothing but
``specmath.cli``: one runner process imports it, then forks a child per row, which calls
``specmath.cli.main`` exactly as ``python -m specmath`` does and then reports whether torch was
imported (a mistake is found before torch, seconds on a busy machine, is loaded). Forking spares each
of the 118 rows an interpreter's start and specmath's imports (about 0.5 CPU-s each); the child's
modules, files and exit status are its own. Two tests start fresh interpreters outright
(``python -m specmath`` and ``--version``). How long each row takes is measured outside the tests,
never asserted (CI machines are busy).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: runs the command line as ``python -m specmath`` would, then says whether torch was imported
WRAPPER = ("import sys\nfrom specmath.cli import main\nstatus = main(sys.argv[1:])\n"
           "print('torch imported:', 'torch' in sys.modules)\nsys.exit(status)\n")

#: reads a JSON list of command lines on stdin, imports specmath.cli once, then runs each line in a forked child
#: as WRAPPER would (its stdout and stderr to files of its own, SIGALRM after 300 s against a hang) and prints a
#: JSON list of [exit status, stdout, stderr]; a child killed by a signal reports -signal, as subprocess does
RUNNER = """
import json, os, signal, sys, tempfile, traceback
from specmath.cli import main
rows = json.load(sys.stdin)
results = []
for args in rows:
    out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            os.dup2(out.fileno(), 1)
            os.dup2(err.fileno(), 2)
            signal.alarm(300)
            sys.argv = ['-c', *args]
            status = main(args)
            print('torch imported:', 'torch' in sys.modules)
        except SystemExit as stop:
            status = stop.code if isinstance(stop.code, int) else 1
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status if isinstance(status, int) else 1)
    _, code = os.waitpid(pid, 0)
    status = os.waitstatus_to_exitcode(code)
    texts = []
    for stream in (out, err):
        stream.seek(0)
        texts.append(stream.read().decode('utf-8', 'replace'))
        stream.close()
    results.append([status, *texts])
json.dump(results, sys.__stdout__)
"""

#: the files the rows name, written into the folder the commands run in
FILES = {
    "broken_rules.py": "def rule(p, q, x:\n",
    "needs_missing.py": "import nosuch_dependency_of_specmath_tests\n",
    "raises_on_import.py": "raise RuntimeError('not ready yet')\n",
    "bad_json.jsonl": '"a good prompt"\n{"not": json\n',
    "number.jsonl": "42\n",
    "blank.jsonl": "\n\n",
    "empty_prompt.jsonl": '"fine"\n"  "\n',
    "garbage.safetensors": "this is not a safetensors file",
    "afile.txt": "a file, not a folder\n",
    # a user's module with a rule, a sampler and a tree sampler, none of them importing anything
    "my_engine.py": ("def my_rule(p, q, x):\n    return 1, None\n\n"
                     "def good_round(target_probs, draft_probs, draft_tokens, generator):\n    return [0]\n\n"
                     "def my_tree(parents, target_probs, draft_probs, draft_tokens, generator):\n    return [[0]]\n"),
}
BINARY_FILES = {"latin1.jsonl": b'"caf\xe9"\n'}

CHOOSE_PAIRS = r"; choose from: bundled, smollm2\[:int8\|lookup"
NUMBERS = [
    # (command line, option, value, the allowed range as the line states it)
    (["audit", "reference"], "--n", "0", r"an int >= 1, got 0"),
    (["audit", "reference"], "--n", "-5", r"an int >= 1, got -5"),
    (["audit", "reference"], "--n", "2.5", r"an int >= 1, got '2.5'"),
    (["audit", "reference"], "--seed", "-1", r"an int >= 0, got -1"),
    (["audit-generate", "specmath", "--pair", "tiny"], "--n", "0", r"an int >= 1, got 0"),
    (["audit-generate", "specmath", "--pair", "tiny"], "--temperature", "0", r"a finite number > 0, got 0.0"),
    (["audit-generate", "specmath", "--pair", "tiny"], "--temperature", "-1", r"a finite number > 0, got -1.0"),
    (["audit-generate", "specmath", "--pair", "tiny"], "--temperature", "nan", r"a finite number > 0, got nan"),
    (["audit-generate", "specmath", "--pair", "tiny"], "--top-k", "0", r"an int >= 1, got 0"),
    (["audit-generate", "specmath", "--pair", "tiny"], "--top-p", "0", r"a finite number in \(0, 1\], got 0.0"),
    (["audit-generate", "specmath", "--pair", "tiny"], "--top-p", "2", r"a finite number in \(0, 1\], got 2.0"),
    (["audit-generate", "specmath", "--pair", "tiny"], "--seed", "-1", r"an int >= 0, got -1"),
    (["bench"], "--gamma", "0", r"an int >= 1 or 'auto', got 0"),
    (["bench"], "--gamma", "many", r"an int >= 1 or 'auto', got 'many'"),
    (["bench"], "--max-new-tokens", "0", r"an int >= 1, got 0"),
    (["bench"], "--prompts", "-2", r"an int >= 1, got -2"),
    (["bench"], "--temperature", "-1", r"a finite number >= 0, got -1.0"),
    (["bench"], "--temperature", "inf", r"a finite number >= 0, got inf"),
    (["bench"], "--top-k", "0", r"an int >= 1, got 0"),
    (["bench"], "--top-p", "0", r"a finite number in \(0, 1\], got 0.0"),
    (["bench"], "--top-p", "2", r"a finite number in \(0, 1\], got 2.0"),
    (["bench"], "--seed", "-1", r"an int >= 0, got -1"),
    (["bench"], "--threads", "0", r"an int >= 1, got 0"),
    (["bench"], "--draft-threshold", "1.5", r"a finite number in \[0, 1\], got 1.5"),
    (["verify", "symbolic-step"], "--sizes", "1", r"an int in \[2, 26\], got 1"),
    (["verify", "symbolic-step"], "--sizes", "three", r"an int in \[2, 26\], got 'three'"),
    (["verify-rule", "rules:rule"], "--random", "-1", r"an int >= 0, got -1"),
    (["verify-rule", "rules:rule"], "--seed", "-1", r"an int >= 0, got -1"),
    (["verify-rule", "rules:rule"], "--max-tv", "1", r"a finite number in \[0, 1\), got 1\.0"),
    (["verify-rule", "rules:rule"], "--max-tv", "-0.5", r"a finite number in \[0, 1\), got -0.5"),
]

#: (command line, the one line on stderr after "specmath <command>: error: ")
MISTAKES = [
    # commands and options
    ([], r"give a COMMAND; choose from: bench, figures, verify, "),
    (["nosuch"], r"unknown command 'nosuch'; choose from: bench, figures, verify, verify-rule, article, audit, "),
    (["verfy"], r"unknown command 'verfy' \(did you mean 'verify'\?\)"),
    (["bench", "--tempreature", "1"], r"unknown option '--tempreature' \(did you mean '--temperature'\?\); choose from: .*--top-k"),
    (["bench", "--clock", "cpu"], r"clock 'cpu' reads this process's CPU time, a run's own time only with 1 torch thread on a "
                                  r"CPU \(this run: the default thread count\): set --threads 1 on a CPU, or use the wall clock$"),
    (["bench", "--clock", "cpu", "--threads", "1", "--device", "cuda"], r"clock 'cpu' .* \(this run: 1 thread on cuda\): set --threads 1 on a CPU"),
    (["bench", "--clock", "gpu"], r"unknown --clock value 'gpu' \(did you mean 'cpu'\?\); choose from: wall, cpu$"),
    (["article", "extra"], r"unexpected argument 'extra'; see --help"),
    (["audit", "--n"], r"--n: expected one argument"),
    # verify
    (["verify", "two_token"], r"unknown verification 'two_token' \(did you mean 'two-token'\?\); choose from: two-token, "),
    (["verify", "nosuch"], r"unknown verification 'nosuch'; choose from: two-token, .*symbolic-step$"),
    (["verify"], r"give a NAME, --all or --list"),
    (["verify", "two-token", "--all"], r"give a NAME or --all, not both"),
    (["verify", "two-token", "--sizes", "3"], r"--rule and --sizes apply to symbolic-step only"),
    (["verify", "symbolic-step", "--rule", "standrd"],
     r"unknown --rule value 'standrd' \(did you mean 'standard'\?\); choose from: standard, resample-from-target"),
    # verify-rule and audit name a user's function the same way
    (["verify-rule"], r"the following arguments are required: rule"),
    (["verify-rule", "nocolon"], r"rule must be module:function or path/to/file\.py:function, got 'nocolon'"),
    (["verify-rule", "nosuch.py:rule"], r"rule 'nosuch\.py:rule': no such file 'nosuch\.py'"),
    (["verify-rule", "afile.txt:rule"], r"rule 'afile\.txt:rule': 'afile\.txt' is not a Python file \(its name must end in \.py\)"),
    (["verify-rule", "nosuch_module:rule"], r"rule 'nosuch_module:rule': no module named 'nosuch_module'"),
    (["verify-rule", "specmath.choices:nosuch"], r"rule 'specmath\.choices:nosuch': module 'specmath\.choices' has no attribute 'nosuch'"),
    (["verify-rule", "specmath.choices:LEAN"], r"rule 'specmath\.choices:LEAN': 'LEAN' is not callable, it is a tuple"),
    (["verify-rule", "broken_rules.py:rule"], r"rule 'broken_rules\.py:rule': loading 'broken_rules\.py' raised SyntaxError: "),
    (["verify-rule", "raises_on_import.py:rule"],
     r"rule 'raises_on_import\.py:rule': loading 'raises_on_import\.py' raised RuntimeError: not ready yet"),
    (["verify-rule", "needs_missing:rule"], r"rule 'needs_missing:rule': importing module 'needs_missing' raised "
                                            r"ModuleNotFoundError: No module named 'nosuch_dependency_of_specmath_tests'"),
    (["audit"], r"give an ADAPTER, --all-bugs or --list"),
    (["audit", "nosuch"], r"unknown adapter 'nosuch'; choose from: reference, specmath-torch, .*bug:residual-softmax, "
                          r".*or module:function or path/to/file\.py:function$"),
    (["audit", "bug:residual_softmax"], r"unknown adapter 'bug:residual_softmax' \(did you mean 'bug:residual-softmax'\?\)"),
    (["audit", "reference", "--all-bugs"], r"give an ADAPTER or --all-bugs, not both"),
    (["audit", "nosuch.py:round"], r"sampler 'nosuch\.py:round': no such file 'nosuch\.py'"),
    (["audit", "tests/nosuch:round"], r"sampler 'tests/nosuch:round': 'tests/nosuch' is neither a dotted module name nor a file"),
    (["audit", "nosuch_module:round"], r"sampler 'nosuch_module:round': no module named 'nosuch_module'"),
    (["audit", "specmath.choices:nosuch"], r"sampler 'specmath\.choices:nosuch': module 'specmath\.choices' has no attribute 'nosuch'"),
    (["audit", "specmath.choices:LEAN"], r"sampler 'specmath\.choices:LEAN': 'LEAN' is not callable, it is a tuple"),
    (["audit", "broken_rules.py:rule"], r"sampler 'broken_rules\.py:rule': loading 'broken_rules\.py' raised SyntaxError: "),
    # the likely mistakes: a near miss of a function's name, a rule or a tree sampler where a sampler is expected
    (["audit", "my_engine:good_roundd"], r"sampler 'my_engine:good_roundd': module 'my_engine' has no attribute "
                                         r"'good_roundd' \(did you mean 'good_round'\?\)$"),
    (["verify-rule", "my_engine:my_rul"], r"rule 'my_engine:my_rul': module 'my_engine' has no attribute 'my_rul' "
                                          r"\(did you mean 'my_rule'\?\)$"),
    (["audit", "my_engine:my_rule"], r"the sampler 'my_engine:my_rule' takes \(p, q, x\), but the audit calls it as "
                                     r"sample_round\(target_probs, draft_probs, draft_tokens, generator\): it looks like a "
                                     r"rule\(p, q, x\) .*: specmath verify-rule my_engine:my_rule, or assert_rule_lossless\(rule\)$"),
    (["audit", "my_engine:my_rule", "--tree", "iid"], r"the tree sampler 'my_engine:my_rule' takes \(p, q, x\), but the "
                                                      r"audit calls it as sample_tree\(parents, .*it looks like a rule"),
    (["audit", "my_engine:my_tree"], r"the sampler 'my_engine:my_tree' takes \(parents, .*\): it looks like a token-tree "
                                     r"sampler \(parents first\): audit it with --tree CHILDREN"),
    (["audit", "my_engine:good_round", "--tree", "iid"], r"the tree sampler 'my_engine:good_round' takes \(target_probs, "
                                                         r".*it looks like a chain sampler \(no parents\): audit it without --tree"),
    (["audit", "reference", "--cases", "vocab2"], r"unknown audit case 'vocab2' \(did you mean 'vocab-2'\?\); choose from: context-g1, "),
    (["audit", "reference", "--generator", "jax"], r"unknown --generator value 'jax'; choose from: numpy, torch"),
    (["audit", "reference", "--json", "nosuch_folder/out.json"], r"--json file 'nosuch_folder/out\.json': no such folder 'nosuch_folder'"),
    (["audit", "reference", "--json", "."], r"--json file '\.' is a folder; give a file name"),
    # token-tree samplers
    (["audit", "tree-specinfer", "--tree", "topk"], r"unknown --tree value 'topk' \(did you mean 'top-k'\?\); choose from: iid, "),
    (["audit", "tree-specinfr"], r"unknown adapter 'tree-specinfr' \(did you mean 'tree-specinfer'\?\)"),
    (["audit", "tree-specinfer", "--cases", "context-g1"], r"audit case 'context-g1' is a case of the chain battery \(see --list\)"),
    (["audit", "reference", "--cases", "tree-context-2"],
     r"audit case 'tree-context-2' is a case of the tree battery: a tree sampler is audited with --tree CHILDREN"),
    (["audit", "tree-specinfer", "--cases", "tree-context-9"], r"unknown tree audit case 'tree-context-9' \(did you mean 'tree-context-3'\?\)"),
    (["audit", "specmath.choices:nosuch", "--tree", "iid"], r"tree sampler 'specmath\.choices:nosuch': module 'specmath\.choices' has no"),
    (["audit", "tree-specinfer", "--batched"], r"--batched, --temperature, --top-k, --top-p and --tree describe a module:function"),
    (["audit", "reference", "--tree", "iid"], r"--batched, --temperature, --top-k, --top-p and --tree describe a module:function"),
    (["audit", "specmath.speculative.tree_reference:sample_tree_rounds", "--tree", "iid", "--top-k", "2"], r"--batched, --temperature, --top-k and --top-p describe a chain sampler; a tree sampler is batched"),
    (["audit", "--all-bugs", "--tree", "iid"], r"--tree gives the children of one tree sampler; --all-bugs audits each"),
    (["audit", "tree-bug:medusa-typical-acceptance"], r"'tree-bug:medusa-typical-acceptance' is not audited: Medusa's fast mode"),
    (["bugzoo", "top-k-sibling"], r"unknown bug 'top-k-sibling' \(did you mean 'top-k-siblings-no-residual'\?\)"),
    # audit-generate
    (["audit-generate", "nosuch", "--pair", "tiny"], r"unknown engine 'nosuch'; choose from: specmath, hf-assisted, hf-lookup, llama-cpp-draft, llama-cpp-ngram, "
     r"node-llama-cpp-lookup, node-llama-cpp-draft, vllm-ngram, vllm-draft, or module:function"),
    (["audit-generate", "hf_assisted", "--pair", "tiny"], r"unknown engine 'hf_assisted' \(did you mean 'hf-assisted'\?\)"),
    (["audit-generate", "specmath", "--pair", "tinyy"], r"unknown --pair value 'tinyy' \(did you mean 'tiny'\?\); choose from: tiny, bundled, smollm2"),
    (["audit-generate", "specmath"], r"give an ENGINE and --pair PAIR, or --all"),
    # bench: names, files, values that do not fit together
    (["bench", "--pair", "nosuchpair"], r"unknown pair 'nosuchpair'" + CHOOSE_PAIRS),
    (["bench", "--pair", "bundeld"], r"unknown pair 'bundeld' \(did you mean 'bundled'\?\)" + CHOOSE_PAIRS),
    (["bench", "--pair", "bundled", "--pair", "smollm2:lookupp"],
     r"unknown SmolLM2 draft 'lookupp' \(did you mean 'lookup'\?\); choose from: int8, lookup, skipK, "),
    (["bench", "--pair", "smollm2:skip0"], r"K in smollm2:skipK \(the layers the draft keeps\) must be an int in \[1, 29\], got 0"),
    (["bench", "--pair", "smollm2:skip30"], r"K in smollm2:skipK \(the layers the draft keeps\) must be an int in \[1, 29\], got 30"),
    (["bench", "--pair", "smollm2:ngram=nosuch.safetensors"], r"ngram file 'nosuch\.safetensors': no such file"),
    (["bench", "--pair", "smollm2:trained=garbage.safetensors"], r"trained file 'garbage\.safetensors' is not a safetensors file"),
    (["bench", "--pair", "./nosuch-target,./nosuch-draft"], r"target model '\./nosuch-target': no such folder, and not a hub name"),
    (["bench", "--pair", "afile.txt,afile.txt"], r"target model 'afile\.txt' is a file; give a model folder or a hub name"),
    (["bench", "--prompts-file", "nosuch.jsonl"], r"prompts file 'nosuch\.jsonl': no such file"),
    (["bench", "--prompts-file", "."], r"prompts file '\.' is not a file"),
    (["bench", "--prompts-file", "bad_json.jsonl"], r"prompts file 'bad_json\.jsonl', line 2: not valid JSON \(.*\); expected one JSON string"),
    (["bench", "--prompts-file", "number.jsonl"], r"prompts file 'number\.jsonl', line 1: expected a JSON string \(the user message\), got int"),
    (["bench", "--prompts-file", "blank.jsonl"], r"prompts file 'blank\.jsonl' holds no prompt"),
    (["bench", "--prompts-file", "empty_prompt.jsonl"], r"prompts file 'empty_prompt\.jsonl', line 2: the prompt is empty"),
    (["bench", "--prompts-file", "latin1.jsonl"], r"prompts file 'latin1\.jsonl', line 1: not UTF-8 text \(byte 0xe9\)"),
    (["bench", "--device", "gpu"], r"--device must be cpu, cuda or cuda:N, got 'gpu'"),
    (["bench", "--dtype", "f32"], r"unknown --dtype value 'f32' \(did you mean 'float32'\?\); choose from: float32, bfloat16, float16"),
    (["bench", "--lean", "drafts"], r"unknown --lean value 'drafts' \(did you mean 'draft'\?\); choose from: none, draft, all"),
    (["bench", "--verify", "blocks"], r"unknown --verify value 'blocks' \(did you mean 'block'\?\); choose from: token, block"),
    (["bench", "--pack-weights"], r"--pack-weights packs bfloat16 models: add --dtype bfloat16"),
    (["bench", "--pair", "smollm2:int8", "--device", "cuda"], r"pair 'smollm2:int8': the int8 draft runs on the CPU only"),
    # bugzoo, figures
    (["bugzoo", "residual_softmax"], r"unknown bug 'residual_softmax' \(did you mean 'residual-softmax'\?\); choose from: q-from-raw-logits, "),
    (["bugzoo", "nosuch"], r"unknown bug 'nosuch'; choose from: q-from-raw-logits, "),
    (["bugzoo", "residual-softmax", "--accepted"], r"--accepted prints the accepted lengths .*: give it without NAME"),
    (["figures", "--only", "nosuch.png"], r"unknown figure 'nosuch\.png'; choose from: two_token_paths\.png, "),
    (["figures", "--only", "rand7_levels"], r"unknown figure 'rand7_levels' \(did you mean 'rand7_levels\.png'\?\)"),
    (["figures", "--only"], r"--only: expected at least one argument"),
    (["figures", "--out", "afile.txt"], r"output folder 'afile\.txt' is a file"),
] + [(command + [option, value], rf"{re.escape(option)} must be {allowed}$") for command, option, value, allowed in NUMBERS]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """A folder holding the files the rows name; the commands run in it."""
    folder = tmp_path_factory.mktemp("cli_mistakes")
    for name, text in FILES.items():
        (folder / name).write_text(text)
    for name, data in BINARY_FILES.items():
        (folder / name).write_bytes(data)
    return folder


def _environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


def run_cli(args: list[str], cwd: Path, *prefix: str) -> subprocess.CompletedProcess:
    """The command line run in a fresh interpreter that imports this checkout's specmath."""
    command = [sys.executable, *(prefix or ("-c", WRAPPER)), *args]
    return subprocess.run(command, cwd=cwd, env=_environment(), capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def outcomes(workdir) -> list[subprocess.CompletedProcess]:
    """Every row of MISTAKES run by RUNNER in the folder of its files, in the order of MISTAKES."""
    rows = [args for args, _ in MISTAKES]
    runner = subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps(rows), cwd=workdir, env=_environment(),
                            capture_output=True, text=True, timeout=300 + 30 * len(rows))
    assert runner.returncode == 0, runner.stderr
    return [subprocess.CompletedProcess(args, status, out, err)
            for args, (status, out, err) in zip(rows, json.loads(runner.stdout), strict=True)]


@pytest.mark.parametrize("row", range(len(MISTAKES)), ids=[" ".join(args) or "(nothing)" for args, _ in MISTAKES])
def test_a_mistake_is_one_line_and_exit_status_2_before_torch_is_imported(row, outcomes):
    from specmath.cli import COMMANDS

    args, line = MISTAKES[row]
    out = outcomes[row]
    command = f"specmath {args[0]}" if args and args[0] in COMMANDS else "specmath"
    assert "Traceback" not in out.stderr, out.stderr
    assert out.returncode == 2, (out.returncode, out.stderr)
    assert out.stderr.count("\n") == 1 and out.stderr.endswith("\n"), f"not one line: {out.stderr!r}"
    assert re.match(rf"{re.escape(command)}: error: {line}", out.stderr.rstrip("\n")), out.stderr
    assert out.stdout == "torch imported: False\n", out.stdout


def test_the_mistakes_cover_every_command():
    from specmath.cli import COMMANDS

    covered = {args[0] for args, _ in MISTAKES if args}
    assert set(COMMANDS) <= covered, f"no mistake row for {sorted(set(COMMANDS) - covered)}"


def test_python_dash_m_specmath_prints_the_same_line(workdir, outcomes):
    """A fresh ``python -m specmath``, the wrapper in a fresh interpreter and the forked row agree."""
    args = ["verify", "two_token"]
    forked = outcomes[[row for row, _ in MISTAKES].index(args)]
    wrapped = run_cli(args, workdir)
    direct = run_cli(args, workdir, "-m", "specmath")
    assert (wrapped.returncode, wrapped.stdout, wrapped.stderr) == (forked.returncode, forked.stdout, forked.stderr)
    assert direct.returncode == 2 and direct.stdout == "" and direct.stderr == wrapped.stderr


def test_version_prints_the_installed_version():
    from specmath.cli import specmath_version

    out = run_cli(["--version"], ROOT)
    assert out.returncode == 0 and out.stdout.startswith(f"specmath {specmath_version()}\n")


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def test_every_option_of_every_command_has_help_text():
    from specmath.cli import build_parser

    parser = build_parser()
    missing = [f"specmath {'/'.join(a.option_strings) or a.dest}" for a in parser._actions if not a.help]
    for name, sub in _subparsers(parser).items():
        missing += [f"specmath {name} {'/'.join(a.option_strings) or a.dest}" for a in sub._actions
                    if not (a.help and a.help.strip()) or a.help == argparse.SUPPRESS]
    assert not missing, f"options without help text: {missing}"


def test_a_mistake_in_process_returns_2_and_prints_the_line(capsys):
    # main() returns the status (it never raises SystemExit for a mistake), for callers and tests alike
    from specmath.cli import main

    assert main(["verify", "--sizes", "0"]) == 2
    assert capsys.readouterr().err == "specmath verify: error: --sizes must be an int in [2, 26], got 0\n"
    assert main(["audit", "reference", "--n", "0"]) == 2
    assert capsys.readouterr().err == "specmath audit: error: --n must be an int >= 1, got 0\n"
