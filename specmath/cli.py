"""The ``specmath`` command line. Each subcommand lives in ``specmath/commands/<name>.py`` with
``configure(parser)`` and ``run(args) -> int``; add a module name to COMMANDS to expose one.
Modules are imported lazily, so ``specmath verify`` never imports torch.
"""

from __future__ import annotations

import argparse
import importlib
import sys

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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="specmath", description="Exact proofs that speculative decoding is lossless.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(_module=module)
        importlib.import_module(module).configure(p)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(importlib.import_module(args._module).run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
