"""``specmath verify NAME [--json]``, ``specmath verify --all`` and ``specmath verify symbolic-step``.

``symbolic-step`` proves that one speculative step outputs the target law p for every target p and
draft q on 2, 3 and 4 tokens (sympy symbols, one case per sign pattern of p - q; see
``specmath.speculative.symbolic_step``); with ``--rule resample-from-target`` it returns the
counterexample region of that lossy rule. Its timing per size goes to stderr, never into the JSON.
"""

from __future__ import annotations

import argparse
import json
import sys

from specmath.choices import SYMBOLIC_RULES

SYMBOLIC_STEP = "symbolic-step"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", help="which sampler (see --list)")
    parser.add_argument("--all", action="store_true", help="run every verification; exit 1 if any is not lossless")
    parser.add_argument("--json", action="store_true", help="print JSON (one object, or a list with --all)")
    parser.add_argument("--list", action="store_true", help="list the names")
    parser.add_argument("--rule", default=SYMBOLIC_RULES[0],
                        help=f"{SYMBOLIC_STEP} only: the rule to prove ({', '.join(SYMBOLIC_RULES)})")
    parser.add_argument("--sizes", type=int, nargs="+", default=[2, 3, 4],
                        help=f"{SYMBOLIC_STEP} only: vocabulary sizes (default 2 3 4)")


def run_symbolic_step(args: argparse.Namespace) -> int:
    """Prove one step lossless for all p, q per vocabulary size; exit 1 with a counterexample if not."""
    from specmath.speculative.symbolic_step import SYMBOLIC_RULES as RULES
    from specmath.speculative.symbolic_step import prove_step_symbolically

    if args.rule not in SYMBOLIC_RULES:
        print(f"unknown rule {args.rule!r}; known: {', '.join(SYMBOLIC_RULES)}")
        return 2
    try:
        proofs = [prove_step_symbolically(n, RULES[args.rule], args.rule) for n in args.sizes]
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    lossless = all(p.lossless for p in proofs)
    for p in proofs:  # machine-dependent, so never part of the JSON
        print(f"{SYMBOLIC_STEP}: {len(p.tokens)} tokens, {p.cases} cases in {p.seconds:.2f} s", file=sys.stderr)
    if args.json:
        payload = {
            "name": SYMBOLIC_STEP,
            "rule": args.rule,
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
        print(f"rule {args.rule!r}: " + ("lossless for every p, q" if lossless else "not lossless"))
    return 0 if lossless else 1


def run(args: argparse.Namespace) -> int:
    from specmath.proofs import VERIFIERS, verify

    if args.list:
        print("\n".join([*VERIFIERS, SYMBOLIC_STEP]))
        return 0
    if args.name == SYMBOLIC_STEP and not args.all:
        return run_symbolic_step(args)
    if args.all:
        names = list(VERIFIERS)
    elif args.name:
        if args.name not in VERIFIERS:
            print(f"unknown verification {args.name!r}; known: {', '.join(VERIFIERS)}")
            return 2
        names = [args.name]
    else:
        print("give a NAME, --all or --list")
        return 2
    results = [verify(n) for n in names]
    if args.json:
        payload = [r.to_json() for r in results] if args.all else results[0].to_json()
        print(json.dumps(payload, indent=2))
    else:
        for r in results:
            print(r.report())
            print()
        if args.all:
            good = sum(r.lossless for r in results)
            print(f"{good} of {len(results)} samplers lossless")
    return 0 if all(r.lossless for r in results) else 1
