"""The command line's choices come from ``specmath.choices``, and each registry that implements them is keyed by them."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from specmath import choices


def _action(command: str, dest: str) -> argparse.Action:
    import importlib

    from specmath.cli import COMMANDS

    parser = argparse.ArgumentParser()
    importlib.import_module(COMMANDS[command][0]).configure(parser)
    (action,) = [a for a in parser._actions if a.dest == dest]
    return action


@pytest.mark.parametrize("command,dest,offered,default", [
    ("bench", "lean", choices.LEAN, "none"),
    ("bench", "verify", choices.VERIFY, "token"),
    ("bench", "dtype", choices.DTYPES, "float32"),
    ("audit-generate", "pair", choices.AUDIT_PAIRS, None),
    ("audit-generate", "semantics", choices.ENGINE_SEMANTICS, None),
    ("audit-generate", "option", choices.OPTION_ROWS, None),
    ("audit", "generator", choices.GENERATOR_KINDS, "numpy"),
    ("audit", "tree", choices.TREE_CHILDREN, None),
])
def test_each_command_offers_the_choices_of_specmath_choices(command, dest, offered, default):
    action = _action(command, dest)
    assert tuple(action.choices) == offered and action.default == default


def test_building_the_command_line_and_verifying_import_no_torch():
    code = ("import sys; from specmath.cli import build_parser; build_parser(); "
            "import specmath.choices; print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_registries_that_implement_the_choices_are_keyed_by_them():
    pytest.importorskip("torch")
    from specmath.audit.engines.pairs import PAIRS
    from specmath.audit.engines.rows import OPTION_ROWS
    from specmath.audit.engines.semantics import SEMANTICS
    from specmath.audit.rounds.adapters import make_generator
    from specmath.lm.block_verify import VERIFIERS
    from specmath.speculative.symbolic_step import SYMBOLIC_RULES

    assert tuple(SEMANTICS) == choices.ENGINE_SEMANTICS
    assert tuple(OPTION_ROWS) == choices.OPTION_ROWS
    assert tuple(PAIRS) == choices.AUDIT_PAIRS
    assert tuple(VERIFIERS) == choices.VERIFY
    assert tuple(SYMBOLIC_RULES) == choices.SYMBOLIC_RULES
    assert [type(make_generator(kind, 0)).__module__.split(".")[0] for kind in choices.GENERATOR_KINDS] == ["numpy", "torch"]


def test_audit_generate_offers_the_engines_of_the_registry_and_choices_repeats_none():
    # the engines are named once, in specmath.audit.engines.registry (torch-free): the command line reads them there
    from specmath.audit.engines.registry import ENGINES, offered_engines

    help_text = _action("audit-generate", "engine").help
    assert help_text == f"{', '.join(offered_engines())}, or module:function (a Python engine)"
    assert offered_engines() == tuple(name for name, entry in ENGINES.items() if entry.offered)
    assert {"specmath", "hf-assisted", "hf-lookup", "llama-cpp-ngram"} <= set(offered_engines())
    assert not hasattr(choices, "AUDIT_ENGINES") and not hasattr(choices, "GGUF_AUDIT_ENGINES")
    assert set(ENGINES["specmath"].engine_semantics().options) == {"temperature", "top_k", "top_p"}
    for entry in ENGINES.values():  # every semantics an entry names is one --semantics offers
        assert entry.semantics is None or entry.semantics in choices.ENGINE_SEMANTICS


def test_the_pair_loader_and_the_lean_option_name_the_choices_in_their_errors():
    pytest.importorskip("transformers")
    from specmath.lm.pairs import load_named_pair

    with pytest.raises(ValueError, match="choose from: bundled, smollm2"):
        load_named_pair("bundle")
    with pytest.raises(ValueError, match="choose from: none, draft, all"):
        load_named_pair("bundled", lean="target")


def test_the_cases_the_audit_checks_without_scipy_are_those_of_its_batteries():
    # specmath audit checks a case name against these tuples before importing scipy;
    # a case added to a battery needs its name in specmath/choices.py too
    from specmath.audit.rounds.cases import BATTERY
    from specmath.audit.trees.cases import TREE_BATTERY
    from specmath.speculative.tree import CHILDREN

    assert tuple(case.name for case in BATTERY) == choices.AUDIT_CASES
    assert tuple(case.name for case in TREE_BATTERY) == choices.TREE_AUDIT_CASES
    assert tuple(CHILDREN) == choices.TREE_CHILDREN


def test_the_audit_offers_the_names_of_its_registries_and_the_bug_zoos():
    # the adapters are not repeated in specmath/choices.py: the command reads the registries' names
    from specmath.audit.rounds.adapters import ADAPTERS, adapter_names
    from specmath.audit.trees.adapters import TREE_ADAPTERS, tree_adapter_names
    from specmath.bugzoo import BUGS, TREE_BUGS

    assert adapter_names() == (*ADAPTERS.names, *(f"bug:{name}" for name in BUGS))
    assert tree_adapter_names() == (*TREE_ADAPTERS,
                                    *(f"tree-bug:{bug.name}" for bug in TREE_BUGS if not bug.greedy_root))
    action = _action("audit", "adapter")
    assert action.choices is None  # checked against the registries when the command runs, with did-you-mean
