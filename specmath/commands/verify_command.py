"""``specmath verify NAME [--json]``, ``specmath verify --all`` and ``specmath verify symbolic-step``.

``symbolic-step`` proves that one speculative step outputs the target law p for every target p and
draft q on 2, 3 and 4 tokens (sympy symbols, one case per sign pattern of p - q; see
``specmath.speculative.symbolic_step``); with ``--rule resample-from-target`` it returns the
counterexample region of that lossy rule. Its timing per size goes to stderr, never into the JSON.

Exit status: 0 when every verification is lossless, 1 when some law differs from its target (NOT
LOSSLESS), 2 when some verification raised (an ERROR line naming the exception; ``--json`` carries it as
``"error"``): an exception is no verdict, so it never reads as "not lossless".
"""

from __future__ import annotations

import argparse
import json
import sys

from specmath.choices import SYMBOLIC_RULES
from specmath.cli import IntegerValue
from specmath.validation import InvalidArgument, check_choice

SYMBOLIC_STEP = "symbolic-step"

#: the vocabulary sizes ``symbolic-step`` proves by default
DEFAULT_SIZES = (2, 3, 4)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", metavar="NAME", help=f"which sampler (see --list), or {SYMBOLIC_STEP}")
    parser.add_argument("--all", action="store_true",
                        help="run every verification; exit 1 if any is not lossless, 2 if any raised")
    parser.add_argument("--json", action="store_true", help="print JSON (one object, or a list with --all)")
    parser.add_argument("--list", action="store_true", help="list the names")
    parser.add_argument("--rule", choices=SYMBOLIC_RULES, default=None,
                        help=f"{SYMBOLIC_STEP} only: the rule to prove ({', '.join(SYMBOLIC_RULES)}; default {SYMBOLIC_RULES[0]})")
    parser.add_argument("--sizes", action=IntegerValue, min_value=2, max_value=26, nargs="+", default=None,
                        help=f"{SYMBOLIC_STEP} only: vocabulary sizes, each an int in [2, 26] "
                             f"(default {' '.join(map(str, DEFAULT_SIZES))})")


def run_symbolic_step(args: argparse.Namespace) -> int:
    """Prove one step lossless for all p, q per vocabulary size; exit 1 with a counterexample if not."""
    from specmath.speculative.symbolic_step import SYMBOLIC_RULES as RULES
    from specmath.speculative.symbolic_step import prove_step_symbolically

    rule = args.rule or SYMBOLIC_RULES[0]
    proofs = [prove_step_symbolically(n, RULES[rule], rule) for n in args.sizes or DEFAULT_SIZES]
    lossless = all(p.lossless for p in proofs)
    for p in proofs:  # machine-dependent, so never part of the JSON
        print(f"{SYMBOLIC_STEP}: {len(p.tokens)} tokens, {p.cases} cases in {p.seconds:.2f} s", file=sys.stderr)
    if args.json:
        payload = {
            "name": SYMBOLIC_STEP,
            "rule": rule,
            "lossless": lossless,
            "cases": {str(len(p.tokens)): p.cases for p in proofs},
            "sizes": [p.to_json() for p in proofs],
        }
        print(json.dumps(payload, indent=2))
    else:
        for p in proofs:
            bad = p.counterexample
            if bad is None:
                print(f"{len(p.tokens)} tokens: output law == p in all {p.cases} sign-pattern regions of p - q")
            else:
                w = {k: v for k, v in bad.witness.items()}
                law = {k: "{" + ", ".join(f"{x}: {v}" for x, v in w[k].items()) + "}" for k in ("p", "q", "output")}
                print(f"{len(p.tokens)} tokens: LOSSY in the region p >= q exactly on {list(bad.above)}; "
                      f"witness p = {law['p']}, q = {law['q']}: output {law['output']}, TV from p = {w['tv']}")
        print(f"rule {rule!r}: " + ("lossless for every p, q" if lossless else "not lossless"))
    return 0 if lossless else 1


def run(args: argparse.Namespace) -> int:
    from specmath.proofs import VERIFIERS, run_verification

    if args.list:
        print("\n".join([*VERIFIERS, SYMBOLIC_STEP]))
        return 0
    if args.name and args.all:
        raise InvalidArgument("give a NAME or --all, not both")
    if args.name:
        check_choice(args.name, "verification", [*VERIFIERS, SYMBOLIC_STEP])
    elif not args.all:
        raise InvalidArgument("give a NAME, --all or --list")
    if args.name != SYMBOLIC_STEP and (args.rule or args.sizes):
        raise InvalidArgument(f"--rule and --sizes apply to {SYMBOLIC_STEP} only")
    if args.name == SYMBOLIC_STEP:
        return run_symbolic_step(args)
    names = list(VERIFIERS) if args.all else [args.name]
    results = [run_verification(n) for n in names]
    errors = [r for r in results if r.lossless is None]
    if args.json:
        payload = [r.to_json() for r in results] if args.all else results[0].to_json()
        print(json.dumps(payload, indent=2))
    else:
        for r in results:
            print(r.report())
            print()
        if args.all:
            good = sum(r.lossless is True for r in results)
            lossy = sum(r.lossless is False for r in results)
            tail = "".join([f", {lossy} NOT LOSSLESS" if lossy else "",
                            f", {len(errors)} ERROR (raised: no verdict)" if errors else ""])
            print(f"{good} of {len(results)} samplers lossless{tail}")
    if errors:
        return 2
    return 0 if all(r.lossless for r in results) else 1
