"""Internal: The ``specmath`` command line. Each subcommand lives in ``specmath/commands/<name>.py`` with
``configure(parser)`` and ``run(args) -> int``; add a module name to COMMANDS to expose one.
Modules are imported lazily, so ``specmath --help`` and ``specmath verify`` never import torch.

A user's mistake gets one line on stderr and exit status 2, in one style for every subcommand::

    specmath bench: error: unknown pair 'bundeld' (did you mean 'bundled'?); choose from: ...

argparse's own errors (an unknown option, a missing value, a choice not offered) are shortened to
that line by ``OneLineParser``; a number is read by an ``IntegerValue`` or ``RealValue`` action,
which checks its range as it is parsed (``--n must be an int >= 1, got 0``); a
``specmath.validation.InvalidArgument`` (and its ``UnknownName`` / ``InvalidFile``) raised while a
command runs is printed the same way, never as a traceback. A command checks its names and files
before it imports torch, so a mistake is reported within a second, even on a busy machine.

A command that needs a package an extra of specmath installs (torch for ``bench``, ``audit-generate``,
the real-model figures), run where it is missing, gets the same one line naming the extra and exit 2::

    specmath bench: error: this command needs torch, which cannot be imported (No module named 'torch'); install the extra specmath[torch] (from a clone: pip install ".[torch]")

``main`` turns any ``ModuleNotFoundError`` of such a package into that line (``missing_extra``); a
command that knows in advance calls ``require_extra`` before it starts work.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import re
import sys
from importlib.metadata import PackageNotFoundError, version

from specmath.validation import InvalidArgument, check_integer, check_real, did_you_mean

#: subcommand -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "bench": ("specmath.commands.bench_command", "tokens/s of plain, speculative and HF assisted decoding on real models; speedup model"),
    "figures": ("specmath.commands.figures_command", "regenerate every file in figures/ from library plotting functions"),
    "verify": ("specmath.commands.verify_command", "prove a sampler lossless: exact law vs target, TV distance, verdict"),
    "verify-rule": ("specmath.commands.verify_rule_command", "check a user's rule(p, q, x): lossless on a battery, or the smallest counterexample"),
    "article": ("specmath.commands.article_command", "check every number the article states against its exact value"),
    "audit": ("specmath.commands.audit_command", "audit a speculative sampler (HF, specmath's, the bug zoo): G-tests with power, edge-draw probes, exact replay"),
    "audit-generate": ("specmath.commands.audit_generate_command", "audit an engine's whole generate path (specmath, HF assisted/lookup, llama.cpp): first tokens vs the exact target law"),
    "bugzoo": ("specmath.commands.bugzoo_command", "lossy variants by source: engine bugs, lossy by design, fixed upstream; exact TV, dated claims (--claims, --accepted)"),
}

#: a package a command may import -> the extra of specmath that installs it (pyproject.toml's optional-dependencies)
EXTRAS: dict[str, str] = {
    "torch": "torch", "transformers": "torch", "safetensors": "torch", "gguf": "torch", "accelerate": "torch",
    "hypothesis": "testing",
    "ipywidgets": "notebooks", "jupytext": "notebooks", "nbclient": "notebooks", "nbformat": "notebooks",
    "nbconvert": "notebooks",
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


def missing_extra(error: ModuleNotFoundError, what: str = "this command", instead: str | None = None) -> str | None:
    """The one line for a package an extra installs that could not be imported (None for any other module):
    what needs it, the import error, the extra that supplies it and its ``pip install`` from a clone (specmath is on
    no registry; docs/how-to/install.md), and ``instead`` (another way) if given."""
    package = (error.name or "").partition(".")[0]
    if package not in EXTRAS:
        return None
    other = f", or {instead}" if instead else ""
    extra = EXTRAS[package]
    return (f"{what} needs {package}, which cannot be imported ({error}); install the extra specmath[{extra}] "
            f'(from a clone: pip install ".[{extra}]"){other}')


def require_extra(package: str, what: str = "this command", instead: str | None = None) -> None:
    """``InvalidArgument`` with ``missing_extra``'s line unless ``package`` (one of ``EXTRAS``) can be found.

    It is looked for, not imported (``importlib.util.find_spec``), so a check made before the real work
    costs nothing; an installed package that fails to import is caught by ``main`` when it is imported.
    """
    try:
        found = importlib.util.find_spec(package) is not None
    except ImportError:  # a finder that refuses the name: not importable either
        found = False
    if not found:
        line = missing_extra(ModuleNotFoundError(f"No module named {package!r}", name=package), what, instead)
        raise InvalidArgument(line)


class CommandLineMistake(InvalidArgument):
    """A mistake argparse found while parsing (``prog``: the command it was parsing for)."""

    def __init__(self, prog: str, message: str) -> None:
        super().__init__(message)
        self.prog = prog


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line, with "did you mean" for a near miss of a choice.

    An error is raised as ``CommandLineMistake`` (never ``SystemExit``), so ``main`` prints every
    mistake, from parsing or from a command, in one place and returns 2.
    """

    def error(self, message: str):  # argparse calls this for every parsing mistake
        choice = re.match(r"argument (?P<arg>[^:]+): invalid choice: '(?P<value>[^']*)' \(choose from (?P<choices>.*)\)$", message)
        if choice:
            offered = [c.strip().strip("'") for c in choice["choices"].split(",")]
            near = did_you_mean(choice["value"], offered)
            hint = f" (did you mean {near!r}?)" if near else ""
            arg = choice["arg"].split("/")[-1]
            what = "command" if arg == "COMMAND" else f"{arg} value" if arg.startswith("-") else arg
            message = f"unknown {what} {choice['value']!r}{hint}; choose from: {', '.join(offered)}"
        elif message == "the following arguments are required: COMMAND":
            (commands,) = [a.choices for a in self._actions if isinstance(a, argparse._SubParsersAction)]
            message = f"give a COMMAND; choose from: {', '.join(commands)}"
        elif message.startswith("argument "):  # "argument --n: expected one argument" -> "--n: expected one argument"
            message = message.removeprefix("argument ")
        raise CommandLineMistake(self.prog, message)


class _CheckedValue(argparse.Action):
    """An argument whose value a ``specmath.validation`` check reads as it is parsed, so a number
    out of range is one line naming the option and its range before any command code runs:
    ``--n must be an int >= 1, got 0``. ``min_value`` / ``max_value`` as the check takes them."""

    def __init__(self, option_strings, dest, *, min_value=None, max_value=None, **kwargs) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.bounds = {"min_value": min_value, "max_value": max_value}

    def check(self, text: str, name: str):
        raise NotImplementedError

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        name = option_string or self.metavar or self.dest
        try:
            checked = [self.check(v, name) for v in values] if isinstance(values, list) else self.check(values, name)
        except InvalidArgument as exc:
            parser.error(str(exc))
        setattr(namespace, self.dest, checked)


class IntegerValue(_CheckedValue):
    """``action=IntegerValue, min_value=1``: an int in range (``check_integer``); '2.5' or 'x' is a mistake."""

    def check(self, text: str, name: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = text  # check_integer names it as given
        return check_integer(value, name, **self.bounds)


class RealValue(_CheckedValue):
    """``action=RealValue, min_value=0, open_min=True``: a finite float in range (``check_real``)."""

    def __init__(self, option_strings, dest, *, open_min: bool = False, open_max: bool = False, **kwargs) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.bounds |= {"open_min": open_min, "open_max": open_max}

    def check(self, text: str, name: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = text
        return check_real(value, name, **self.bounds)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="specmath", description="Exact proofs that speculative decoding is lossless.")
    parser.add_argument("--version", action="version", version=f"specmath {specmath_version()}",
                        help="print the version of specmath and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=OneLineParser,
                                help="what to run (`specmath COMMAND --help` describes its options)")
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        importlib.import_module(module).configure(p)
        options = [o for action in p._actions for o in action.option_strings]
        p.set_defaults(_module=module, _prog=p.prog, _options=options)
    return parser


def unrecognized(extra: list[str], options: list[str]) -> str:
    """The message for arguments no option of the command takes: the first, and what is allowed."""
    first = extra[0]
    if not first.startswith("-"):
        return f"unexpected argument {first!r}; see --help"
    near = did_you_mean(first.partition("=")[0], options)
    hint = f" (did you mean {near!r}?)" if near else ""
    return f"unknown option {first!r}{hint}; choose from: {', '.join(options)}"


def main(argv: list[str] | None = None) -> int:
    """Run one command; its exit status, 2 (and one line on stderr) for any mistake of the user's."""
    try:
        args, extra = build_parser().parse_known_args(argv)
    except CommandLineMistake as exc:
        return usage_error(exc.prog, str(exc))
    if extra:
        return usage_error(args._prog, unrecognized(extra, args._options))
    try:
        return int(importlib.import_module(args._module).run(args) or 0)
    except InvalidArgument as exc:  # a user's mistake found while the command runs: one line, exit 2
        return usage_error(args._prog, str(exc))
    except ModuleNotFoundError as exc:  # an extra not installed: name it, one line, exit 2
        line = missing_extra(exc)
        if line is None:
            raise
        return usage_error(args._prog, line)


if __name__ == "__main__":
    sys.exit(main())
