"""``specmath audit-generate ENGINE --pair PAIR [--n N] [--temperature T] [--top-k K] [--top-p P] [--json]``.

Runs N whole generate calls of an engine (``specmath``, ``hf-assisted``, ``hf-lookup``,
``llama-cpp``) and of its lossy negative control, and G-tests their first token and first two
tokens against the exact warped target law (``specmath.audit.generate_audit``). Prints one row per
sampler and check (G, dof, p-value, detectable TV at power 0.99, level), or JSON with ``--json``.

``--all`` runs the whole table (every engine x pair x the three configurations T=1,
T=0.7 + top-k 20, top-p 0.9; ``--pair`` and ENGINE narrow it) and prints one row per audit,
in Markdown with ``--markdown``.

Exit status: 0 when every audit passes (engine not rejected, control caught) or was skipped, 1 when an
engine fails or a control is not caught (inconclusive), 2 when an engine raised (an error, named) or
on a mistake in the arguments (one line on stderr, found before torch is imported).
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys

from specmath.choices import AUDIT_ENGINES, AUDIT_PAIRS
from specmath.cli import IntegerValue, RealValue
from specmath.validation import InvalidArgument


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("engine", nargs="?", choices=AUDIT_ENGINES, help="the engine whose generate path is audited")
    parser.add_argument("--pair", choices=AUDIT_PAIRS, help="target/draft pair (tiny is fast enough for CI)")
    parser.add_argument("--n", metavar="N", action=IntegerValue, min_value=1, default=None,
                        help="generate calls per sampler, an int >= 1 (default 2000; --all: per pair)")
    parser.add_argument("--temperature", metavar="T", action=RealValue, min_value=0, open_min=True, default=1.0,
                        help="temperature T > 0 (the audit compares sampled laws; default 1)")
    parser.add_argument("--top-k", metavar="K", action=IntegerValue, min_value=1, default=None, help="keep the K >= 1 most likely tokens")
    parser.add_argument("--top-p", metavar="P", action=RealValue, min_value=0, max_value=1, open_min=True, default=None,
                        help="keep the most likely tokens up to mass P in (0, 1]")
    parser.add_argument("--seed", action=IntegerValue, min_value=0, default=0, help="seed of the first generate call, an int >= 0")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--all", action="store_true", help="the whole table: engines x pairs x the three configurations")
    parser.add_argument("--markdown", action="store_true", help="with --all: a Markdown table")


def check_arguments(args: argparse.Namespace) -> None:
    """The mistakes argparse cannot see, named before torch is imported."""
    if not args.all and (not args.engine or not args.pair):
        raise InvalidArgument("give an ENGINE and --pair PAIR, or --all")


#: generate calls per sampler in the full table: the shared 2-core CPU affords fewer for larger models
TABLE_N = {"tiny": 2000, "bundled": 1000, "smollm2": 200}


def _fmt(x: float, spec: str) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else ("inf" if math.isinf(x) else format(x, spec))


def _print_one(audit) -> None:
    print(f"audit-generate {audit.engine} on {audit.pair}, {audit.config}: N = {audit.n} generate calls per sampler, "
          f"prompt ids {audit.prompt}")
    print(f"engine {audit.seconds:.1f} s, control {audit.control_seconds:.1f} s; each test at level "
          f"{audit.checks[0].level:.2g} (family 1e-6), detectable TV at power 0.99" if audit.checks else "")
    for c in audit.checks:
        extra = f"  impossible {c.impossible}" if c.impossible else ""
        print(f"  {c.role:8s} {c.name:17s} G = {_fmt(c.statistic, '.1f'):>8s}  dof {c.dof:3d}  p = {c.p_value:.3g}  "
              f"detectable TV {_fmt(c.detectable_tv, '.3f')}  {'pass' if c.passed else 'REJECTED'}{extra}")
    print(audit.verdict)


def _status(audits) -> int:
    if any(a.error for a in audits):
        return 2
    return 0 if all(a.passed or a.skipped for a in audits) else 1


def _table(audits, markdown: bool) -> str:
    header = ["engine", "pair", "config", "N", "engine s", "control s", "p first", "p first two",
              "detectable TV first / two", "control caught", "verdict"]
    rows = []
    for a in audits:
        engine = [c for c in a.checks if c.role == "engine"]
        control = [c for c in a.checks if c.role == "control"]
        rows.append([
            a.engine, a.pair, a.config, str(a.n) if not a.skipped else "-",
            _fmt(a.seconds, ".1f") if not a.skipped else "-", _fmt(a.control_seconds, ".1f") if not a.skipped else "-",
            f"{engine[0].p_value:.2g}" if engine else "-", f"{engine[1].p_value:.2g}" if engine else "-",
            f"{_fmt(a.detectable('first token'), '.3f')} / {_fmt(a.detectable('first two tokens'), '.3f')}" if engine else "-",
            ("yes" if a.control_caught else "NO") if control else "-", a.verdict,
        ])
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in [header] + rows)


def _run_all(args: argparse.Namespace) -> int:
    from specmath.audit.engines import ENGINES
    from specmath.audit.generate_audit import CONFIGS, run_generate_audit
    from specmath.audit.generate_pairs import PAIRS

    engines = [args.engine] if args.engine else list(ENGINES)
    pairs = [args.pair] if args.pair else list(PAIRS)
    audits = []
    for pair in pairs:
        n = args.n or TABLE_N[pair]
        for engine in engines:
            for config in CONFIGS:
                audit = run_generate_audit(engine, pair, config, n=n, seed=args.seed)
                audits.append(audit)
                # progress, one line per audit (stderr when stdout carries the Markdown or JSON)
                print(_table([audit], False).splitlines()[-1], flush=True,
                      file=sys.stderr if args.markdown or args.json else sys.stdout)
    if args.json:
        print(json.dumps([a.to_json() for a in audits], indent=2))
    else:
        print(f"\nhardware: {platform.machine()} CPU, {_cores()} cores, torch threads {_threads()}; family level 1e-6, power 0.99")
        print(_table(audits, args.markdown))
    return _status(audits)


def _cores() -> int:
    import os

    return os.cpu_count() or 1


def _threads() -> int:
    import torch

    return torch.get_num_threads()


def run(args: argparse.Namespace) -> int:
    check_arguments(args)
    from specmath.audit.generate_audit import run_generate_audit
    from specmath.lm.warps import Sampling

    if args.all:
        return _run_all(args)
    sampling = Sampling(args.temperature, top_k=args.top_k, top_p=args.top_p)
    audit = run_generate_audit(args.engine, args.pair, sampling, n=args.n or 2000, seed=args.seed)
    if audit.skipped:  # the engine cannot run here (a package or a model file is missing): say why
        raise InvalidArgument(f"engine {args.engine!r} cannot run here: {audit.skipped}")
    if args.json:
        print(json.dumps(audit.to_json(), indent=2))
    else:
        _print_one(audit)
    return _status([audit])
