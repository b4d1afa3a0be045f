"""``specmath verify-rule module:function [--max-tv X]``: is a user's verification rule lossless?

The function is ``rule(p, q, x) -> (accept_probability, resample_law | None)`` (see
``specmath.speculative.step``), named as ``module:function`` (the current directory is on the path)
or ``path/to/rules.py:function`` and resolved by ``specmath.function_reference``. A rule computed in
floats is checked up to a bound with ``--max-tv X`` (read exactly: 1e-12 is 1/10^12), as
``assert_rule_lossless(rule, max_tv=X)`` does. Exit status: 0 lossless, 1 lossy, 2 when the rule
cannot be loaded (one line) or raised on an instance.
"""

from __future__ import annotations

import argparse
import sys

from specmath.cli import IntegerValue, RealValue
from specmath.function_reference import FUNCTION_REFERENCE, resolve_function


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rule", help=f"{FUNCTION_REFERENCE}, a rule(p, q, x)")
    parser.add_argument("--random", action=IntegerValue, min_value=0, default=40,
                        help="random (p, q) instances besides the hand-written ones, an int >= 0 (default 40)")
    parser.add_argument("--seed", action=IntegerValue, min_value=0, default=0,
                        help="seed of the random instances, an int >= 0 (default 0)")
    parser.add_argument("--max-tv", metavar="X", action=RealValue, min_value=0, max_value=1, open_max=True, default=0,
                        help="a rule computed in floats passes when TV(law, target) <= X on every instance, resample "
                             "weights within X of 1 renormalised (X read exactly, in [0, 1); default 0: equal exactly)")


def run(args: argparse.Namespace) -> int:
    rule = resolve_function(args.rule, "rule")
    from specmath.speculative.rule_check import verify_rule

    report = verify_rule(rule, random_instances=args.random, seed=args.seed, max_tv=args.max_tv)
    if report.verdict == "error":
        print(f"specmath verify-rule: {report.text()}", file=sys.stderr)
        return 2
    print(report.text())
    return 0 if report.lossless else 1
