"""The ``specmath`` command line. Each subcommand lives in ``specmath/commands/<name>.py`` with
``configure(parser)`` and ``run(args) -> int``; add a module name to COMMANDS to expose one.
Modules are imported lazily, so ``specmath --help`` and ``specmath verify`` never import torch.

A user's mistake gets one line on stderr and exit status 2, in one style for every subcommand::

    specmath bench: error: unknown pair 'bundeld' (did you mean 'bundled'?); choose from: ...

argparse's own errors (an unknown option, a value of the wrong type, a choice not offered) are
shortened to that line by ``OneLineParser``; a ``specmath.validation.InvalidArgument`` (and its
``UnknownName`` / ``InvalidFile``) raised while a command runs is printed the same way, never as
a traceback. A command checks its arguments before it imports torch, so a mistake is reported at once.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from importlib.metadata import PackageNotFoundError, version

from specmath.validation import InvalidArgument, did_you_mean

#: subcommand -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "bench": ("specmath.commands.bench_command", "tokens/s of plain, speculative and HF assisted decoding on real models; speedup model"),
    "figures": ("specmath.commands.figures_command", "regenerate every file in figures/ from library plotting functions"),
    "verify": ("specmath.commands.verify_command", "prove a sampler lossless: exact law vs target, TV distance, verdict"),
    "verify-rule": ("specmath.commands.verify_rule_command", "check a user's rule(p, q, x): lossless on a battery, or the smallest counterexample"),
    "article": ("specmath.commands.article_command", "check every number the article states against its exact value"),
    "audit": ("specmath.commands.audit_command", "audit a speculative sampler (HF, specmath's, the bug zoo): G-tests with power, edge-draw probes, exact replay"),
    "audit-generate": ("specmath.commands.audit_generate_command", "audit an engine's whole generate path (specmath, HF assisted/lookup, llama.cpp): first tokens vs the exact target law"),
    "bugzoo": ("specmath.commands.bugzoo_command", "lossy variants from real engine bugs: instance, exact TV, citation (--accepted: accepted lengths)"),
}

#: the exit status of a user's mistake (a bad argument, an unknown name, a missing or malformed file)
USAGE_ERROR = 2


def specmath_version() -> str:
    """The installed distribution's version (the source tree's pyproject when run uninstalled)."""
    try:
        return version("specmath")
    except PackageNotFoundError:  # pragma: no cover - run from a checkout without an install
        return "unknown"


def usage_error(prog: str, message: str) -> int:
    """Print the one-line form of a user's mistake and return its exit status (2)."""
    print(f"{prog}: error: {message}", file=sys.stderr)
    return USAGE_ERROR


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line, with "did you mean" for a near miss of a choice."""

    def error(self, message: str):  # argparse calls this for every parsing mistake
        choice = re.match(r"argument (?P<arg>[^:]+): invalid choice: '(?P<value>[^']*)' \(choose from (?P<choices>.*)\)$", message)
        if choice:
            offered = [c.strip().strip("'") for c in choice["choices"].split(",")]
            near = did_you_mean(choice["value"], offered)
            hint = f" (did you mean {near!r}?)" if near else ""
            arg = choice["arg"].split("/")[-1]
            what = "unknown command" if arg == "COMMAND" else f"{arg}: unknown value"
            message = f"{what} {choice['value']!r}{hint}; choose from: {', '.join(offered)}"
        self.exit(USAGE_ERROR, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="specmath", description="Exact proofs that speculative decoding is lossless.")
    parser.add_argument("--version", action="version", version=f"specmath {specmath_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=OneLineParser)
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(_module=module, _prog=p.prog)
        importlib.import_module(module).configure(p)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(importlib.import_module(args._module).run(args) or 0)
    except InvalidArgument as exc:  # a user's mistake found while the command runs: one line, exit 2
        return usage_error(args._prog, str(exc))


if __name__ == "__main__":
    sys.exit(main())
