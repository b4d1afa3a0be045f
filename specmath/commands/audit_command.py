"""``specmath audit ADAPTER [--json PATH] [--n N] [--sequential]``: audit a speculative sampler.

ADAPTER is a registered name (``--list``) or ``module:function`` / ``path/to/file.py:function``
(``specmath.function_reference``) taking (target_probs [gamma+1, V],
draft_probs [gamma, V], draft_tokens [gamma], generator) and returning the emitted token ids, with
``--generator numpy|torch`` saying which generator it draws from; with ``--batched`` it takes every
round at once ([N, gamma+1, V], [N, gamma, V], [N, gamma] -> [N, gamma+1], -1 after each row's last
token), and ``--temperature`` / ``--top-k`` / ``--top-p`` say that it warps (it must then emit the
warped target's law; ``specmath.testing.assert_sampler_lossless``).

Prints one row per battery case (case, N, worst test, G, dof, p-value, detectable TV, edge probes,
replay, verdict), writes the full JSON with ``--json``, and exits 1 when any case fails, 2 when the
sampler raised (reported as an ERROR naming the exception, never as a loss) or on a mistake in the
arguments (one line on stderr, found before scipy and torch are imported). ``--list`` names the
adapters; ``--all-bugs`` audits every bug-zoo adapter and prints which cases catch each (with
``--sequential``: the first, stopping there). ``--markdown`` prints the table in Markdown (the
README's audit section).
"""

from __future__ import annotations

import argparse

from specmath.choices import AUDIT_CASES, AUDIT_SAMPLERS, BUG_NAMES, GENERATOR_KINDS
from specmath.cli import IntegerValue, RealValue
from specmath.function_reference import FUNCTION_REFERENCE, resolve_function
from specmath.validation import InvalidArgument, check_choice, check_output_file

#: every sampler the audit names (``specmath.audit.adapters.adapters``), torch-free
ADAPTERS = (*AUDIT_SAMPLERS, *(f"bug:{name}" for name in BUG_NAMES))


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("adapter", nargs="?", metavar="ADAPTER",
                        help=f"which sampler (see --list), or {FUNCTION_REFERENCE} with the adapter interface")
    parser.add_argument("--generator", choices=GENERATOR_KINDS, default=GENERATOR_KINDS[0],
                        help="generator kind a module:function sampler draws from (default numpy)")
    parser.add_argument("--n", metavar="N", action=IntegerValue, min_value=1, default=None,
                        help="rounds per case, an int >= 1 (default 20000)")
    parser.add_argument("--seed", action=IntegerValue, min_value=0, default=0,
                        help="seed of the drafts and of the sampler's generator, an int >= 0 (default 0)")
    parser.add_argument("--sequential", action="store_true", help="looks at N/16..N; stop at the first clear failure")
    parser.add_argument("--json", metavar="PATH", help="write the full report as JSON to PATH")
    parser.add_argument("--markdown", action="store_true", help="print the table in Markdown")
    parser.add_argument("--cases", metavar="NAMES", help="comma-separated case names (default: the whole battery; see --list)")
    parser.add_argument("--list", action="store_true", help="list the adapters and the cases")
    parser.add_argument("--all-bugs", action="store_true",
                        help="audit every bug-zoo adapter, print which cases catch it (with --sequential: the first); exit 1 if one escapes")
    parser.add_argument("--batched", action="store_true",
                        help="the module:function sampler takes every round at once: [N, gamma+1, V] ... -> [N, gamma+1], -1 padded")
    parser.add_argument("--temperature", metavar="T", action=RealValue, min_value=0, default=None,
                        help="the module:function sampler applies temperature T >= 0 to p and q (it must emit the warped p)")
    parser.add_argument("--top-k", metavar="K", action=IntegerValue, min_value=1, default=None,
                        help="the module:function sampler keeps the K >= 1 most likely tokens of p and q")
    parser.add_argument("--top-p", metavar="P", action=RealValue, min_value=0, max_value=1, open_min=True, default=None,
                        help="the module:function sampler keeps the most likely tokens of p and q up to mass P in (0, 1]")


def check_arguments(args: argparse.Namespace) -> None:
    """Every name and file the command line gives, checked before the audit imports scipy and torch."""
    if args.list:
        return
    if args.adapter and args.all_bugs:
        raise InvalidArgument("give an ADAPTER or --all-bugs, not both")
    if not args.adapter and not args.all_bugs:
        raise InvalidArgument("give an ADAPTER, --all-bugs or --list")
    for name in args.cases.split(",") if args.cases else ():
        check_choice(name.strip(), "audit case", AUDIT_CASES)
    if args.json:
        check_output_file(args.json, "--json file")
    if args.adapter and ":" in args.adapter and not args.adapter.startswith("bug:"):
        resolve_function(args.adapter, "sampler")
    elif args.adapter:
        check_choice(args.adapter, "adapter", ADAPTERS, also=f"or {FUNCTION_REFERENCE}")
        if args.batched or any(v is not None for v in (args.temperature, args.top_k, args.top_p)):
            raise InvalidArgument("--batched, --temperature, --top-k and --top-p describe a module:function sampler; "
                                  f"{args.adapter!r} is a registered adapter (see --list)")


def _cases(text: str | None):
    from specmath.audit.cases import BATTERY, case_named

    return BATTERY if not text else tuple(case_named(name.strip()) for name in text.split(","))


def _all_bugs(args: argparse.Namespace, n: int) -> int:
    """One line per bug-zoo adapter: the case that caught it (sequential) or every case that does."""
    from specmath.audit import adapters, run_audit

    escaped = 0
    for name, adapter in adapters().items():
        if not name.startswith("bug:"):
            continue
        report = run_audit(adapter, _cases(args.cases), n=n, seed=args.seed, sequential=args.sequential)
        failed = [c for c in report.cases if not c.passed]
        errored = [c for c in report.cases if c.errors]
        escaped += not failed or bool(errored)
        if errored:
            caught = f"ERROR in {errored[0].case}: {errored[0].errors[0][:120]}"
        elif not failed:
            caught = "NOT CAUGHT"
        elif args.sequential:
            caught = f"caught by {failed[0].case} after {failed[0].n} rounds: {failed[0].reasons[0]}"
        else:
            caught = f"caught by {len(failed)} of {len(report.cases)} cases ({', '.join(c.case for c in failed)}); first: {failed[0].reasons[0]}"
        print(f"{name:36s} {report.seconds:6.1f} s  {caught}", flush=True)
    return 1 if escaped else 0


def run(args: argparse.Namespace) -> int:
    check_arguments(args)
    from specmath.audit import DEFAULT_ROUNDS, adapter_named, adapters, run_audit
    from specmath.audit.cases import BATTERY
    from specmath.audit.report import failure_text, markdown_table, table, write_json

    n = DEFAULT_ROUNDS if args.n is None else args.n
    if args.list:
        for name, adapter in adapters().items():
            print(f"{name:36s} {adapter.description}")
        print()
        for case in BATTERY:
            print(f"{case.name:20s} gamma={case.gamma} V={case.vocab_size}: {case.description}")
        return 0
    if args.all_bugs:
        return _all_bugs(args, n)
    from specmath.audit.adapters import declared_warp

    warp = declared_warp(args.temperature, args.top_k, args.top_p)
    adapter = adapter_named(args.adapter, args.generator, batched=args.batched, warp=warp)
    report = run_audit(adapter, _cases(args.cases), n=n, seed=args.seed, sequential=args.sequential)
    print(markdown_table(report) if args.markdown else table(report))
    if not report.passed and not args.markdown:
        print(f"\nwhat points at the bug:\n{failure_text(report)}")
    if args.json:
        write_json(report, args.json)
    if report.errored:
        return 2
    return 0 if report.passed else 1
