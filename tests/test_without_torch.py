"""What works without torch runs where torch is absent; what needs it says so in one line and exits 2.

Each test runs a fresh interpreter in which ``import torch`` (and ``import transformers``) fails as it
does where they are not installed: a finder at the front of ``sys.meta_path`` raises
``ModuleNotFoundError`` for them, and records each attempt. (``sys.modules["torch"] = None`` would
not do: scipy reads ``sys.modules["torch"]`` to recognise tensors, and a None there breaks it.) The
torch-free paths must pass *and* never try to import torch; the torch paths must fail with the line
``specmath.cli.missing_extra`` writes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: run first in the child: torch and transformers are absent, each attempt to import them is kept
ABSENT = """
import atexit, sys
attempts = []
class Absent:
    def find_spec(self, name, path=None, target=None):
        if name.partition('.')[0] in ('torch', 'transformers'):
            attempts.append(name)
            raise ModuleNotFoundError(f'No module named {name!r}', name=name)
sys.meta_path.insert(0, Absent())
atexit.register(lambda: print('torch attempts:', sorted(set(attempts)), file=sys.stderr))
"""

#: the command line, as ``python -m specmath`` runs it
CLI = ABSENT + "from specmath.cli import main\nsys.exit(main(sys.argv[1:]))\n"

#: a user's numpy code, as the README's engineers write it
USER_CODE = '''
from fractions import Fraction

import numpy as np

from specmath.speculative.reference_round import reference_sample_round
from specmath.speculative.tree_reference import sample_tree_rounds


def my_round(target_probs, draft_probs, draft_tokens, rng):
    """The correct round, in numpy."""
    return reference_sample_round(np.asarray(target_probs), np.asarray(draft_probs), draft_tokens, rng)


def my_tree(parents, target_probs, draft_probs, draft_tokens, rng):
    """SpecInfer's verifier on i.i.d. children, in numpy."""
    return sample_tree_rounds(parents, target_probs, draft_probs, draft_tokens, rng, verifier="specinfer")


def my_rule(p, q, x):
    """accept min(1, p/q), else resample norm(max(0, p - q)), the residual computed with numpy on Fractions."""
    tokens = list(p)
    residual = np.maximum(np.array([p[y] - q[y] for y in tokens], dtype=object), Fraction(0))
    mass = residual.sum()  # 1 - alpha; 0 when p == q: every draft is accepted, nothing is resampled
    return min(Fraction(1), Fraction(p[x]) / q[x]), dict(zip(tokens, residual / mass)) if mass else None
'''


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("without_torch")
    (folder / "my_engine.py").write_text(USER_CODE)
    return folder


def run_without_torch(code: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(cwd), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


def _attempts(out: subprocess.CompletedProcess) -> str:
    return out.stderr.rstrip("\n").rsplit("\n", 1)[-1]


@pytest.mark.parametrize("args,shows", [
    (["verify", "--all"], "23 of 23 samplers lossless"),
    (["verify-rule", "my_engine:my_rule"], "lossless on all 54 instances"),
    (["audit", "my_engine:my_round", "--n", "200"], "PASS: 14 of 14 cases pass"),
    (["audit", "my_engine:my_tree", "--tree", "iid", "--n", "200"], "PASS: 10 of 10 cases pass"),
    (["audit", "--list"], "specmath-torch"),
    (["bugzoo", "residual-softmax"], "residual-softmax (chain): TV ="),
], ids=lambda value: " ".join(value) if isinstance(value, list) else None)
def test_the_torch_free_commands_pass_without_trying_to_import_torch(args, shows, workdir):
    out = run_without_torch(CLI, args, workdir)
    assert out.returncode == 0, out.stderr[-3000:]
    assert shows in out.stdout, out.stdout[-3000:]
    assert _attempts(out) == "torch attempts: []", out.stderr[-3000:]


def test_the_testing_api_audits_a_numpy_sampler_and_a_rule_without_torch(workdir):
    code = ABSENT + (
        "from my_engine import my_round, my_rule, my_tree\n"
        "from specmath.testing import assert_rule_lossless, assert_sampler_lossless, assert_tree_sampler_lossless\n"
        "assert assert_sampler_lossless(my_round, n=200).passed\n"
        "assert assert_tree_sampler_lossless(my_tree, n=200, children='iid').passed\n"
        "assert_rule_lossless(my_rule, random_instances=4)\n"
        "print('all passed')\n")
    out = run_without_torch(code, [], workdir)
    assert out.returncode == 0 and out.stdout == "all passed\n", out.stderr[-3000:]
    assert _attempts(out) == "torch attempts: []", out.stderr[-3000:]


NEEDS_TORCH = (r"needs torch, which cannot be imported \(No module named 'torch'\); install the extra specmath\[torch\] "
               r'\(from a clone: pip install "\.\[torch\]"\)')


@pytest.mark.parametrize("args,line", [
    (["bench"], rf"specmath bench: error: this command {NEEDS_TORCH}$"),
    (["audit-generate", "specmath", "--pair", "tiny"], rf"specmath audit-generate: error: this command {NEEDS_TORCH}$"),
    (["audit", "specmath-torch", "--n", "200"], rf"specmath audit: error: this command {NEEDS_TORCH}$"),
    (["audit", "my_engine:my_round", "--generator", "torch", "--n", "200"], rf"specmath audit: error: this command {NEEDS_TORCH}$"),
    (["figures", "--out", "out"], rf"specmath figures: error: drawing lm_first_token_histogram\.png, "
                                  rf"lm_acceptance_by_position\.png, lm_timing\.png, lm_pass_time\.png, lm_pass_time_gpu\.png {NEEDS_TORCH}, or leave them out with --only$"),
], ids=lambda value: " ".join(value) if isinstance(value, list) else None)
def test_a_command_that_needs_torch_says_so_in_one_line_and_exits_2(args, line, workdir):
    import re

    out = run_without_torch(CLI, args, workdir)
    lines = out.stderr.rstrip("\n").split("\n")
    assert out.returncode == 2 and len(lines) == 2, out.stderr[-3000:]  # the line, then the attempts
    assert re.match(line, lines[0]), lines[0]
    assert not (workdir / "out").exists() or not any((workdir / "out").iterdir())  # no figure drawn before the line


def test_figures_that_need_no_torch_are_drawn_without_it(workdir):
    out = run_without_torch(CLI, ["figures", "--only", "two_token_paths.png", "--out", "drawn"], workdir)
    assert out.returncode == 0 and (workdir / "drawn" / "two_token_paths.png").is_file(), out.stderr[-3000:]
    assert _attempts(out) == "torch attempts: []"


def test_the_extras_named_are_those_pyproject_declares():
    tomllib = pytest.importorskip("tomllib")
    from specmath.cli import EXTRAS

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for package, extra in EXTRAS.items():
        declared = {requirement.split(">")[0].split("=")[0].split("<")[0].split("[")[0].strip() for requirement in extras[extra]}
        assert package in declared, f"specmath.cli.EXTRAS says {extra!r} installs {package}; pyproject.toml's [{extra}] does not list it"
