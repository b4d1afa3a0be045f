"""``specmath verify-rule module:function``: is a user's verification rule lossless?

The function is ``rule(p, q, x) -> (accept_probability, resample_law | None)`` (see
``specmath.speculative.step``); the module is imported by name (the current directory is on the
path) or loaded from a file (``path/to/rules.py:my_rule``). Exit status: 0 lossless, 1 lossy,
2 when the rule cannot be loaded.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rule", help="module:function or path/to/file.py:function, a rule(p, q, x)")
    parser.add_argument("--random", type=int, default=40, help="random (p, q) instances besides the hand-written ones (default 40)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random instances (default 0)")


def load_rule(spec: str) -> Callable:
    """Resolve 'module:function' or 'file.py:function' to the function; ValueError naming what is wrong."""
    module_name, sep, function_name = spec.rpartition(":")
    if not sep or not module_name or not function_name:
        raise ValueError(f"expected module:function, got {spec!r}")
    if module_name.endswith(".py"):
        path = Path(module_name)
        if not path.is_file():
            raise ValueError(f"no such file {module_name!r}")
        loader_spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(loader_spec)
        loader_spec.loader.exec_module(module)
    else:
        if "" not in sys.path:
            sys.path.insert(0, "")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise ValueError(f"cannot import module {module_name!r}: {exc}") from exc
    rule = getattr(module, function_name, None)
    if rule is None:
        raise ValueError(f"module {module_name!r} has no attribute {function_name!r}")
    if not callable(rule):
        raise ValueError(f"{spec!r} is not callable")
    return rule


def run(args: argparse.Namespace) -> int:
    from specmath.speculative.rule_check import verify_rule

    try:
        rule = load_rule(args.rule)
        report = verify_rule(rule, random_instances=args.random, seed=args.seed)
    except ValueError as exc:
        print(f"verify-rule: {exc}", file=sys.stderr)
        return 2
    if report.verdict == "error":
        print(f"verify-rule: {report.text()}", file=sys.stderr)
        return 2
    print(report.text())
    return 0 if report.lossless else 1
