"""``specmath audit ADAPTER [--json PATH] [--profile NAME] [--n N] [--sequential]``: audit a speculative sampler.

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

How strong the audit is: ``--profile`` names an audit profile (``specmath.settings``: dev, ci (the
default), thorough), and ``--n``, ``--seed``, ``--sequential`` / ``--no-sequential`` change its
settings.

``--tree CHILDREN`` audits a token-tree sampler instead (``specmath.audit.trees.runner``): a
``module:function`` taking (parents [nodes], target_probs [N, nodes+1, V], draft_probs [N, nodes, V],
draft_tokens [N, nodes], generator) and returning [N, depth+1] (the accepted path, one token, -1s),
whose verifier assumes children drawn as CHILDREN says (iid, without-replacement, top-k); it runs on
the tree battery. The registered tree samplers are ``tree-specinfer``, ``tree-without-replacement``,
``tree-target-only`` and ``tree-bug:NAME``; ``--tree`` audits one of them under other children
(``tree-specinfer --tree top-k`` is SpecInfer's rule on EAGLE's top-k trees).
"""

from __future__ import annotations

import argparse

from specmath.choices import AUDIT_CASES, GENERATOR_KINDS, TREE_AUDIT_CASES, TREE_CHILDREN
from specmath.cli import IntegerValue, RealValue
from specmath.function_reference import FUNCTION_REFERENCE, resolve_function
from specmath.settings import DEFAULT_PROFILE, PROFILES, AuditSettings, settings_named
from specmath.validation import InvalidArgument, check_choice, check_output_file


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("adapter", nargs="?", metavar="ADAPTER",
                        help=f"which sampler (see --list; tree-* are token-tree samplers), or {FUNCTION_REFERENCE} with the adapter "
                             "interface (a tree sampler: with --tree)")
    parser.add_argument("--generator", choices=GENERATOR_KINDS, default=GENERATOR_KINDS[0],
                        help="generator kind a module:function sampler draws from (default numpy)")
    parser.add_argument("--profile", choices=tuple(PROFILES), default=DEFAULT_PROFILE,
                        help=f"the audit's strength (specmath.settings): {', '.join(f'{k} (n {v.n})' for k, v in PROFILES.items())}; "
                             f"default {DEFAULT_PROFILE}")
    parser.add_argument("--n", metavar="N", action=IntegerValue, min_value=1, default=None,
                        help="rounds per case, an int >= 1 (default: the profile's)")
    parser.add_argument("--seed", action=IntegerValue, min_value=0, default=None,
                        help="seed of the drafts and of the sampler's generator, an int >= 0 (default: the profile's, 0)")
    parser.add_argument("--sequential", action=argparse.BooleanOptionalAction, default=None,
                        help="looks at N/16..N; stop at the first clear failure (default: the profile's)")
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
    parser.add_argument("--tree", metavar="CHILDREN", choices=TREE_CHILDREN, default=None,
                        help="the module:function is a token-tree sampler (parents [nodes], target_probs [N, nodes+1, V], "
                             "draft_probs [N, nodes, V], draft_tokens [N, nodes], generator) -> [N, depth+1] (the accepted "
                             "path, one token, -1s), the tree as parent indices (-1: a child of the root; "
                             "specmath.speculative.tree_layouts converts vLLM's speculative_token_tree paths and SGLang's "
                             "next-token/next-sibling arrays), whose verifier assumes children drawn as CHILDREN "
                             f"({', '.join(TREE_CHILDREN)}); it runs on the tree battery. With a registered tree sampler: "
                             "audit it under these children")


def _user_function(name: str | None) -> bool:
    return bool(name) and ":" in name and not name.startswith(("bug:", "tree-bug:"))


def _is_tree(args: argparse.Namespace) -> bool:
    """Whether the ADAPTER is a tree sampler: a registered one, or a module:function given with --tree."""
    from specmath.audit.trees.adapters import tree_adapter_names

    return bool(args.adapter) and (args.adapter in tree_adapter_names() or args.adapter.startswith("tree-bug:")
                                   or (_user_function(args.adapter) and args.tree is not None))


def check_arguments(args: argparse.Namespace) -> None:
    """Every name and file the command line gives, checked before the audit imports scipy and torch."""
    if args.list:
        return
    if args.adapter and args.all_bugs:
        raise InvalidArgument("give an ADAPTER or --all-bugs, not both")
    if not args.adapter and not args.all_bugs:
        raise InvalidArgument("give an ADAPTER, --all-bugs or --list")
    tree = _is_tree(args)
    offered = (*AUDIT_CASES, *TREE_AUDIT_CASES) if args.all_bugs else TREE_AUDIT_CASES if tree else AUDIT_CASES
    for name in args.cases.split(",") if args.cases else ():
        if name.strip() in (*AUDIT_CASES, *TREE_AUDIT_CASES) and name.strip() not in offered:
            which = "the tree battery: a tree sampler is audited with --tree CHILDREN" if tree is False else "the chain battery"
            raise InvalidArgument(f"audit case {name.strip()!r} is a case of {which} (see --list)")
        check_choice(name.strip(), "tree audit case" if tree else "audit case", offered)
    if args.json:
        check_output_file(args.json, "--json file")
    chain_options = args.batched or any(v is not None for v in (args.temperature, args.top_k, args.top_p))
    if args.all_bugs and args.tree:
        raise InvalidArgument("--tree gives the children of one tree sampler; --all-bugs audits each tree-zoo entry under its own")
    if _user_function(args.adapter):
        from specmath.audit.rounds.usage_hints import ROUND_INTERFACE, TREE_INTERFACE, check_call_shape

        what = "tree sampler" if tree else "sampler"
        check_call_shape(resolve_function(args.adapter, what), TREE_INTERFACE if tree else ROUND_INTERFACE,
                         f"the {what} {args.adapter!r}", args.adapter)
    elif args.adapter:
        from specmath.audit.rounds.adapters import adapter_names
        from specmath.audit.trees.adapters import tree_adapter_names
        from specmath.bugzoo import TREE_BUGS

        if args.adapter.startswith("tree-bug:") and args.adapter not in tree_adapter_names() \
                and args.adapter.removeprefix("tree-bug:") in {bug.name for bug in TREE_BUGS}:
            raise InvalidArgument(f"{args.adapter!r} is not audited: Medusa's fast mode hangs its tree below argmax p, "
                                  "not below the context (its exact TV: specmath bugzoo)")
        check_choice(args.adapter, "adapter", (*adapter_names(), *tree_adapter_names()), also=f"or {FUNCTION_REFERENCE}")
        if chain_options or (args.tree and not tree):
            raise InvalidArgument("--batched, --temperature, --top-k, --top-p and --tree describe a module:function sampler; "
                                  f"{args.adapter!r} is a registered adapter (see --list)")
    if tree and chain_options:
        raise InvalidArgument("--batched, --temperature, --top-k and --top-p describe a chain sampler; a tree sampler is "
                              "batched and emits the law of the raw p")


def _cases(text: str | None):
    from specmath.audit.rounds.cases import BATTERY, case_named

    return BATTERY if not text else tuple(case_named(name.strip()) for name in text.split(","))


def _tree_cases(text: str | None):
    from specmath.audit.trees.cases import tree_cases_named

    return tree_cases_named(None if not text else [name.strip() for name in text.split(",")])


def _settings(args: argparse.Namespace) -> AuditSettings:
    """The profile's settings with what the command line changes."""
    changes = {"n": args.n, "seed": args.seed, "sequential": args.sequential}
    return settings_named(args.profile).replace(**{k: v for k, v in changes.items() if v is not None})


def _all_bugs(args: argparse.Namespace, settings: AuditSettings) -> int:
    """One line per bug-zoo adapter, chain and tree: the case that caught it (sequential) or every case that does.

    With ``--cases``, each zoo runs on the named cases of its own battery (a zoo with none named is skipped).
    """
    from specmath.audit import adapters, run_audit
    from specmath.audit.trees.adapters import tree_adapters
    from specmath.audit.trees.runner import run_tree_audit

    named = [name.strip() for name in args.cases.split(",")] if args.cases else None
    chain = None if named is None else [name for name in named if name in AUDIT_CASES]
    tree = None if named is None else [name for name in named if name in TREE_AUDIT_CASES]
    runs = []
    if chain != []:
        runs += [(name, a, run_audit, _cases(",".join(chain or ()))) for name, a in adapters().items() if name.startswith("bug:")]
    if tree != []:
        runs += [(name, a, run_tree_audit, _tree_cases(",".join(tree or ()))) for name, a in tree_adapters().items()
                 if name.startswith("tree-bug:")]
    escaped = 0
    for name, adapter, audit, cases in runs:
        report = audit(adapter, cases, settings)
        failed = [c for c in report.cases if not c.passed]
        errored = [c for c in report.cases if c.errors]
        escaped += not failed or bool(errored)
        if errored:
            caught = f"ERROR in {errored[0].case}: {errored[0].errors[0][:120]}"
        elif not failed:
            caught = "NOT CAUGHT"
        elif settings.sequential:
            caught = f"caught by {failed[0].case} after {failed[0].n} rounds: {failed[0].reasons[0]}"
        else:
            caught = f"caught by {len(failed)} of {len(report.cases)} cases ({', '.join(c.case for c in failed)}); first: {failed[0].reasons[0]}"
        print(f"{name:48s} {report.seconds:6.1f} s  {caught}", flush=True)
    return 1 if escaped else 0


def _list() -> None:
    from specmath.audit import adapters
    from specmath.audit.rounds.cases import BATTERY
    from specmath.audit.trees.adapters import tree_adapters
    from specmath.audit.trees.cases import TREE_BATTERY

    for name, adapter in adapters().items():
        print(f"{name:48s} {adapter.description}")
    for name, tree_adapter in tree_adapters().items():
        print(f"{name:48s} (tree, {tree_adapter.children} children) {tree_adapter.description}")
    print()
    for case in BATTERY:
        print(f"{case.name:26s} gamma={case.gamma} V={case.vocab_size}: {case.description}")
    for tree_case in TREE_BATTERY:
        print(f"{tree_case.name:26s} nodes={tree_case.nodes} V={tree_case.vocab_size}: {tree_case.description}")


def _hints(args: argparse.Namespace, report) -> str:
    """The usage mistakes a failed audit of a module:function points at (``audit.rounds.usage_hints``), as lines."""
    if not _user_function(args.adapter):
        return ""
    from specmath.audit.rounds.usage_hints import ROUND_INTERFACE, TREE_INTERFACE, report_hints

    function = resolve_function(args.adapter, "sampler")
    interface = TREE_INTERFACE if _is_tree(args) else ROUND_INTERFACE
    return "".join(f"\nhint: {hint}\n" for hint in report_hints(function, interface, report, batched=args.batched))


def run(args: argparse.Namespace) -> int:
    check_arguments(args)
    from specmath.audit import adapter_named, run_audit
    from specmath.audit.rounds.report import failure_text, markdown_table, table, write_json

    settings = _settings(args)
    if args.list:
        _list()
        return 0
    if args.all_bugs:
        return _all_bugs(args, settings)
    if _is_tree(args):
        from specmath.audit.trees.adapters import tree_adapter_named
        from specmath.audit.trees.runner import run_tree_audit

        tree_adapter = tree_adapter_named(args.adapter, args.generator, children=args.tree)
        report = run_tree_audit(tree_adapter, _tree_cases(args.cases), settings)
    else:
        from specmath.audit.rounds.adapters import declared_warp

        warp = declared_warp(args.temperature, args.top_k, args.top_p)
        adapter = adapter_named(args.adapter, args.generator, batched=args.batched, warp=warp)
        report = run_audit(adapter, _cases(args.cases), settings)
    print(markdown_table(report) if args.markdown else table(report))
    if not report.passed and not args.markdown:
        print(f"\nwhat points at the bug:\n{failure_text(report)}")
        print(_hints(args, report), end="")
    if args.json:
        write_json(report, args.json)
    if report.errored:
        return 2
    return 0 if report.passed else 1
