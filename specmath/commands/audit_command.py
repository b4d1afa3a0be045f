"""``specmath audit ADAPTER [--json PATH] [--n N] [--sequential]``: audit a speculative sampler.

ADAPTER is a registered name (``--list``) or ``module:function`` taking (target_probs [gamma+1, V],
draft_probs [gamma, V], draft_tokens [gamma], generator) and returning the emitted token ids, with
``--generator numpy|torch`` saying which generator it draws from.

Prints one row per battery case (case, N, worst test, G, dof, p-value, detectable TV, edge probes,
replay, verdict), writes the full JSON with ``--json``, and exits 1 when any case fails, 2 when the
sampler raised (reported as an ERROR naming the exception, never as a loss) or on a bad argument. ``--list`` names the adapters; ``--all-bugs`` audits every bug-zoo adapter and prints which
cases catch each (with ``--sequential``: the first, stopping there). ``--markdown`` prints the table in Markdown (the README's audit section).
"""

from __future__ import annotations

import argparse

from specmath.choices import GENERATOR_KINDS


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("adapter", nargs="?", help="which sampler (see --list), or module:function with the adapter interface")
    parser.add_argument("--generator", choices=GENERATOR_KINDS, default=GENERATOR_KINDS[0],
                        help="generator kind a module:function sampler draws from (default numpy)")
    parser.add_argument("--n", type=int, default=None, help="rounds per case (default 20000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the drafts and of the sampler's generator")
    parser.add_argument("--sequential", action="store_true", help="looks at N/16..N; stop at the first clear failure")
    parser.add_argument("--json", metavar="PATH", help="write the full report as JSON to PATH")
    parser.add_argument("--markdown", action="store_true", help="print the table in Markdown")
    parser.add_argument("--cases", help="comma-separated case names (default: the whole battery)")
    parser.add_argument("--list", action="store_true", help="list the adapters and the cases")
    parser.add_argument("--all-bugs", action="store_true",
                        help="audit every bug-zoo adapter, print which cases catch it (with --sequential: the first); exit 1 if one escapes")


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
    from specmath.audit import DEFAULT_ROUNDS, adapter_named, adapters, run_audit
    from specmath.audit.cases import BATTERY
    from specmath.audit.report import markdown_table, table, write_json

    n = DEFAULT_ROUNDS if args.n is None else args.n
    if n < 1:
        print(f"--n must be a positive number of rounds, got {n}")
        return 2
    if args.list:
        for name, adapter in adapters().items():
            print(f"{name:36s} {adapter.description}")
        print()
        for case in BATTERY:
            print(f"{case.name:20s} gamma={case.gamma} V={case.vocab_size}: {case.description}")
        return 0
    try:
        if args.all_bugs:
            return _all_bugs(args, n)
        if not args.adapter:
            print("give an ADAPTER, --all-bugs or --list")
            return 2
        adapter = adapter_named(args.adapter, args.generator)
        cases = _cases(args.cases)
    except ValueError as exc:
        print(exc)
        return 2
    report = run_audit(adapter, cases, n=n, seed=args.seed, sequential=args.sequential)
    print(markdown_table(report) if args.markdown else table(report))
    if args.json:
        write_json(report, args.json)
    if report.errored:
        return 2
    return 0 if report.passed else 1
