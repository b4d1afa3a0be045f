"""``specmath audit-generate ENGINE --pair PAIR | --target MODEL [sampling options] [--json]``.

Runs N whole generate calls of an engine and of its lossy negative control, and G-tests their first token
and first two tokens against the exact target law under the engine's sampling options
(``specmath.audit.engines.runner``, the one audit of every engine). The engine is an entry of
``specmath.audit.engines.registry``, read here without torch (the names, what each runs on, its semantics):

* ``specmath``, ``hf-assisted``, ``hf-lookup``: on a pair's torch models (``--pair``);
* ``llama-cpp-draft``, ``llama-cpp-ngram``, ``node-llama-cpp-lookup``, ``node-llama-cpp-draft``: built by
  ``make engines``, on a GGUF target (``--target smollm2`` or ``--target FILE.gguf``; ``--draft FILE.gguf``);
* ``vllm-ngram``, ``vllm-draft``: built by ``make vllm``, on a model folder (``--target FOLDER`` or
  ``--target smollm2``; ``--draft FOLDER``);
* ``module:function`` or ``path/to/file.py:function``: a Python function ``(prompt_ids, n, seed, **options)``;
* ``--engine-cmd "CMD"``: a subprocess speaking JSON lines; ``--endpoint URL``: an OpenAI-compatible server
  (the protocol: ``specmath.audit.engines.protocol``).

Sampling options: ``--temperature``, ``--top-k``, ``--top-p``, ``--min-p``, ``--logit-bias TOKEN=BIAS``
(repeatable), ``--repetition-penalty``, ``--penalty-window``, ``--presence-penalty``, ``--frequency-penalty``;
or ``--option ROW``, a row of the options table with its control and its prompt. ``--prompt TEXT`` audits at
that text. ``--pathwise N`` compares speculative with plain output over N seeds (an ``--endpoint``'s plain output
comes from ``--plain-endpoint URL``, the same model served without speculation). ``--options-table`` runs
every row for the GGUF engines, each row at the N where it detects a TV of 0.05 with probability 0.99
(``--json-out FILE`` keeps the records); ``--all`` the torch engines' table.

Every audit ends in one verdict (``specmath.audit.engines.checks.VERDICTS``), the first word of its line and of
the JSON ``verdict`` field: PASS, LOSS (with the TV measured, the TV the test detects and the command that
reproduces the samples), ENGINE ERROR (the engine crashed or answered nothing usable: its message and version),
REFUSED (the engine rejected the request: its message), INCONCLUSIVE (the control was not caught, or the engine
did not speculate: why). An engine that cannot run here (not installed) is no audit: a table says so in its
verdict column ("not run: why", JSON ``verdict`` null and ``skipped`` the reason) and it leaves the exit status
alone; a single such engine is a mistake in the arguments (exit 2).

Exit status: 0 PASS; 1 LOSS; 2 ENGINE ERROR, or a mistake in the arguments (one line on stderr, found before
torch is imported); 3 REFUSED or INCONCLUSIVE. A table exits with the status of its first verdict among LOSS,
ENGINE ERROR, REFUSED, INCONCLUSIVE (0 when every row passed).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from pathlib import Path

from specmath.audit.engines.registry import ENGINES, EngineEntry, engines_for, offered_engines
from specmath.choices import AUDIT_PAIRS, ENGINE_SEMANTICS, OPTION_ROWS
from specmath.cli import IntegerValue, RealValue
from specmath.settings import CI
from specmath.validation import InvalidArgument, InvalidFile, UnknownName, check_choice, check_integer, check_real

#: the exit statuses, as --help prints them (``specmath.audit.engines.checks.EXIT_STATUS``)
EPILOG = ("exit status: 0 PASS, 1 LOSS, 2 ENGINE ERROR or a mistake in the arguments, 3 REFUSED or INCONCLUSIVE "
          "(a table: its first of LOSS, ENGINE ERROR, REFUSED, INCONCLUSIVE)")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EPILOG
    parser.add_argument("engine", nargs="?", metavar="ENGINE",
                        help=f"{', '.join(offered_engines())}, or module:function (a Python engine)")
    parser.add_argument("--pair", choices=AUDIT_PAIRS, help="target/draft pair (tiny is fast enough for CI)")
    parser.add_argument("--target", metavar="MODEL", help="the model the law comes from: a pair, FILE.gguf or a model folder")
    parser.add_argument("--engine-cmd", metavar="CMD", help="a subprocess engine speaking JSON lines")
    parser.add_argument("--endpoint", metavar="URL", help="an OpenAI-compatible completions server")
    parser.add_argument("--plain-endpoint", metavar="URL",
                        help="with --endpoint: the same model served without speculation, the plain reference of "
                             "--pathwise N")
    parser.add_argument("--model", metavar="NAME", default="default", help="the model name sent to --endpoint")
    parser.add_argument("--samples-per-request", metavar="N", action=IntegerValue, min_value=1, default=None,
                        help="--endpoint: samples per request (n); default 500 for --semantics vllm (choice i of "
                             "(n, seed S) is the request (1, S + i)), else 1")
    parser.add_argument("--timeout", metavar="S", action=RealValue, min_value=0, open_min=True, default=600.0,
                        help="--endpoint: seconds each request may take (default 600)")
    parser.add_argument("--law", choices=("target", "server"), default="target",
                        help="--endpoint: the law from --target's forward (default), or from the server's own "
                             "logprobs (no local weights; needs --vocab-size)")
    parser.add_argument("--vocab-size", metavar="V", action=IntegerValue, min_value=2, default=None,
                        help="--law server: the served model's vocabulary size (its config.json)")
    parser.add_argument("--logprobs", metavar="K", action=IntegerValue, min_value=1, default=20,
                        help="--law server: log-probabilities per position to ask for (vLLM's --max-logprobs, 20)")
    parser.add_argument("--drafter", choices=("lookup", "model"), default="model",
                        help="--law server without --prompt: how the server drafts, for the prompt choice")
    parser.add_argument("--semantics", choices=ENGINE_SEMANTICS, default=None,
                        help=f"the order and penalty history of a function or endpoint engine (default "
                             f"{ENGINES['function'].semantics}; endpoint: {ENGINES['endpoint'].semantics})")
    parser.add_argument("--draft", metavar="FILE", help="the draft GGUF of a draft-model GGUF engine (default: the target)")
    parser.add_argument("--n", metavar="N", action=IntegerValue, min_value=1, default=None,
                        help=f"generate calls per sampler, an int >= 1 (default {CI.generate_calls}; --all: per pair; "
                             f"--options-table: each row's N for a detectable TV of 0.05)")
    parser.add_argument("--tv", metavar="TV", action=RealValue, min_value=0, max_value=1, open_min=True, default=None,
                        help="instead of --n: the N at which both tests detect a TV of TV with probability 0.99, "
                             "computed from the target's law at the audit's prompt (an engine on a --target, or "
                             "--options-table, whose default is 0.05)")
    parser.add_argument("--seed", action=IntegerValue, min_value=0, default=0, help="seed of the first generate call, an int >= 0")
    parser.add_argument("--temperature", metavar="T", action=RealValue, min_value=0, open_min=True, default=1.0,
                        help="temperature T > 0 (the audit compares sampled laws; default 1)")
    parser.add_argument("--top-k", metavar="K", action=IntegerValue, min_value=1, default=None, help="keep the K >= 1 most likely tokens")
    parser.add_argument("--top-p", metavar="P", action=RealValue, min_value=0, max_value=1, open_min=True, default=None,
                        help="keep the most likely tokens up to mass P in (0, 1]")
    parser.add_argument("--min-p", metavar="P", action=RealValue, min_value=0, max_value=1, open_min=True, default=None,
                        help="keep tokens of probability >= P times the largest, P in (0, 1]")
    parser.add_argument("--logit-bias", metavar="TOKEN=BIAS", action="append", default=None,
                        help="add BIAS to TOKEN's logit (repeatable)")
    parser.add_argument("--repetition-penalty", metavar="R", action=RealValue, min_value=0, open_min=True, default=None,
                        help="divide (z > 0) or multiply (z <= 0) the logit of a seen token by R > 0")
    parser.add_argument("--penalty-window", metavar="W", action=IntegerValue, min_value=1, default=None,
                        help="the penalties count the last W tokens of their history (default: the engine's)")
    parser.add_argument("--presence-penalty", metavar="A", action=RealValue, default=None, help="subtract A from a seen token's logit")
    parser.add_argument("--frequency-penalty", metavar="F", action=RealValue, default=None,
                        help="subtract F times its count from a seen token's logit")
    parser.add_argument("--option", choices=OPTION_ROWS, default=None,
                        help="a row of the options table: its options, its control, its prompt")
    parser.add_argument("--prompt", metavar="TEXT", help="audit at this text (the target's tokenizer, no special tokens)")
    parser.add_argument("--pathwise", metavar="N", action=IntegerValue, min_value=0, default=0,
                        help="also compare speculative with plain output over N seeds (engines with a plain path); a seed "
                             "that differs is LOSS (pathwise): seed reproducibility, not a test of the law")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--all", action="store_true", help="the torch engines' table: engines x pairs x three configurations")
    parser.add_argument("--options-table", action="store_true", help="every option row for the GGUF engines")
    parser.add_argument("--json-out", metavar="FILE", help="with --options-table: write the records to FILE")
    parser.add_argument("--markdown", action="store_true", help="with --all or --options-table: a Markdown table")


def _sampling_options(args: argparse.Namespace):
    from specmath.sampling_options import SamplingOptions

    bias = []
    for item in args.logit_bias or ():
        token, sep, value = item.partition("=")
        if not sep or not token.strip().lstrip("-").isdigit():
            raise InvalidArgument(f"--logit-bias takes TOKEN=BIAS (a token id and a number), got {item!r}")
        try:
            number = float(value)
        except ValueError:
            number = value
        bias.append((check_integer(int(token), "--logit-bias token", min_value=0), check_real(number, "--logit-bias bias")))
    return SamplingOptions(args.temperature, top_k=args.top_k, top_p=args.top_p, min_p=args.min_p, logit_bias=tuple(bias),
                           repetition_penalty=args.repetition_penalty, presence_penalty=args.presence_penalty,
                           frequency_penalty=args.frequency_penalty, penalty_window=args.penalty_window)


def _engine_entry(args: argparse.Namespace) -> EngineEntry | None:
    """The registry entry the arguments name: an offered ENGINE, or how the user gives their own (None: none)."""
    if args.engine_cmd is not None:
        return ENGINES["command"]
    if args.endpoint is not None:
        return ENGINES["endpoint"]
    if args.engine is None:
        return None
    if ":" in args.engine:
        return ENGINES["function"]
    return ENGINES[check_choice(args.engine, "engine", offered_engines(), also="or module:function")]


def check_arguments(args: argparse.Namespace) -> None:
    """The mistakes argparse cannot see, named before torch is imported."""
    named = [x for x in (args.engine, args.engine_cmd, args.endpoint) if x is not None]
    if len(named) > 1:
        raise InvalidArgument("name one engine: ENGINE, --engine-cmd or --endpoint")
    if args.endpoint is not None or args.plain_endpoint is not None:
        from specmath.audit.engines.endpoint import check_endpoint_url

        if args.endpoint is None:
            raise InvalidArgument("--plain-endpoint is the plain reference of an --endpoint: give --endpoint URL too")
        check_endpoint_url(args.endpoint)
        if args.plain_endpoint is not None:
            check_endpoint_url(args.plain_endpoint, "--plain-endpoint")
            if args.law == "server" or args.options_table or args.all:
                raise InvalidArgument("--plain-endpoint is the reference of --pathwise N, which an audit with "
                                      "--law server, --all or --options-table does not run: leave it out")
            if not args.pathwise:
                raise InvalidArgument("--plain-endpoint is the reference of --pathwise N: give --pathwise N too")
        elif args.pathwise:
            raise InvalidArgument("--pathwise N with --endpoint compares against plain decoding: give --plain-endpoint "
                                  "URL, the same model served without speculation")
    if args.tv is not None:
        if args.n is not None:
            raise InvalidArgument("give --n N or --tv TV, not both: --tv chooses the N that detects TV")
        if args.all or args.law == "server":
            raise InvalidArgument(f"--tv chooses N from a --target's law, which {'--all' if args.all else '--law server'} "
                                  f"does not compute beforehand: give --n N")
    entry = _engine_entry(args)
    options = _sampling_options(args)
    explicit = options.to_json().keys() - {"temperature"} or args.temperature != 1.0
    if args.option and explicit:
        raise InvalidArgument(f"--option {args.option!r} sets the sampling options itself: leave out the others")
    if args.prompt is not None and not args.prompt.strip():
        raise InvalidArgument("--prompt is empty: give the text to audit at (or leave it out for the built-in prompts)")
    if args.json_out and not args.options_table:
        raise InvalidArgument("--json-out writes the records of --options-table")
    if args.all or args.options_table:
        if args.options_table and entry is not None and entry.target != "gguf":
            raise InvalidArgument(f"--options-table runs the GGUF engines: {', '.join(engines_for('gguf'))}")
        _check_target(args, "gguf" if args.options_table else "pair")
        return
    if entry is None:
        raise InvalidArgument("give an ENGINE and --pair PAIR (or --target MODEL), or --all")
    if args.law == "server" or args.vocab_size is not None:
        if entry.name != "endpoint" or args.law != "server":
            raise InvalidArgument("--law server (with --vocab-size) takes the law from an --endpoint's own logprobs")
        if args.vocab_size is None:
            raise InvalidArgument("--law server needs --vocab-size V, the served model's vocabulary size")
        if args.pair or args.target:
            raise InvalidArgument("--law server takes the law from the server: leave out --target")
        from specmath.audit.engines.server_law import check_options

        check_options(option_row_options(args, options), args.logprobs)
        return
    if entry.target == "pair":
        if not args.pair:
            raise InvalidArgument("give an ENGINE and --pair PAIR, or --all")
        if args.target or args.option or args.prompt or args.pathwise or args.tv is not None:
            raise InvalidArgument(f"{args.engine} takes --pair, --n and sampling options (not --target, --option, "
                                  f"--prompt, --pathwise, --tv)")
        entry.engine_semantics().check_supports(options)
        return
    if args.pair and args.target:
        raise InvalidArgument("give the target once: --pair or --target")
    if not (args.pair or args.target):
        raise InvalidArgument(f"name the model the law comes from: --target MODEL ({', '.join(AUDIT_PAIRS)}, FILE.gguf or a folder)")
    _check_target(args, entry.target, entry)


def option_row_options(args: argparse.Namespace, options):
    """The options an audit runs: the ``--option`` row's, else those given one by one."""
    if args.option:
        from specmath.audit.engines.rows import option_row_named

        return option_row_named(args.option).options
    return options


def _check_target(args: argparse.Namespace, kind: str, entry: EngineEntry | None = None) -> None:
    """The target fits what the engine runs on (``specmath.audit.engines.registry.TARGET_KINDS``), its files exist."""
    gguf = kind == "gguf"
    target = args.target or args.pair or ("smollm2" if gguf else None)
    if target is None:
        return
    if target.endswith(".gguf") and not Path(target).is_file():
        raise InvalidFile(f"--target {target}: no such GGUF file")
    if gguf and not (target == "smollm2" or target.endswith(".gguf")):
        raise InvalidArgument(f"the GGUF engines run GGUF files: --target smollm2 or --target FILE.gguf, not {target!r}")
    if kind == "folder":
        if entry is not None and any(name == target for name, _, _ in entry.folders):
            return  # a named target the engine has its own folder for (checked when it starts)
        if not Path(target).is_dir():
            raise InvalidArgument(f"{args.engine} runs a Hugging Face model folder: --target FOLDER, not {target!r}")
        if args.draft and not Path(args.draft).is_dir():
            raise InvalidFile(f"--draft {args.draft}: no such model folder")
    elif args.draft and not Path(args.draft).is_file():
        raise InvalidFile(f"--draft {args.draft}: no such GGUF file")


#: generate calls per sampler in the torch engines' table: the shared 2-core CPU affords fewer for larger models
TABLE_N = {"tiny": 2000, "bundled": 1000, "smollm2": 200}



def _status(audits) -> int:
    """The exit status of the audits' verdicts (``specmath.audit.engines.checks.exit_status``)."""
    from specmath.audit.engines.checks import exit_status

    return exit_status([a.verdict for a in audits])


def _reproducer(args: argparse.Namespace, n: int) -> str:
    """The command line that runs this audit again, drawing the same samples (N and the seed written out)."""
    from specmath.audit.engines.table_runs import option_flags, reproducer_command

    engine = (["--engine-cmd", args.engine_cmd] if args.engine_cmd else ["--endpoint", args.endpoint] if args.endpoint
              else [args.engine])
    if args.endpoint and args.plain_endpoint:
        engine += ["--plain-endpoint", args.plain_endpoint]
    if args.endpoint and args.model != "default":
        engine += ["--model", args.model]
    model = ["--pair", args.pair] if args.pair else ["--target", args.target]
    model += ["--draft", args.draft] if args.draft else []
    model += ["--semantics", args.semantics] if args.semantics else []
    sampling = ["--option", args.option] if args.option else option_flags(_sampling_options(args))
    sampling += ["--prompt", args.prompt] if args.prompt else []
    extra = ["--pathwise", str(args.pathwise)] if args.pathwise else []
    return reproducer_command(engine, model, sampling, n, args.seed, extra)


def _torch_table(audits, markdown: bool) -> str:
    from specmath.audit.engines.table import fmt

    header = ["engine", "pair", "config", "N", "engine s", "control s", "p first", "p first two",
              "detectable TV first / two", "control caught", "verdict"]
    rows = []
    for a in audits:
        engine = [c for c in a.checks if c.role == "engine"]
        control = [c for c in a.checks if c.role == "control"]
        rows.append([
            a.engine, a.pair, a.config, str(a.n) if not a.skipped else "-",
            fmt(a.seconds, ".1f") if not a.skipped else "-", fmt(a.control_seconds, ".1f") if not a.skipped else "-",
            f"{engine[0].p_value:.2g}" if engine else "-", f"{engine[1].p_value:.2g}" if engine else "-",
            f"{fmt(a.detectable('first token'))} / {fmt(a.detectable('first two tokens'))}" if engine else "-",
            ("yes" if a.control_caught else "NO") if control else "-",
            a.verdict if a.verdict is not None else f"not run: {a.skipped}",
        ])
    from specmath.tables import markdown_table, text_table

    return markdown_table(header, rows) if markdown else text_table(header, rows)


def _hardware() -> str:
    import os

    import torch

    return (f"hardware: {platform.machine()} CPU, {os.cpu_count() or 1} cores, torch threads {torch.get_num_threads()}; "
            f"family level {CI.family_level:g}, power {CI.power:g}")


def _run_all(args: argparse.Namespace) -> int:
    from specmath.audit.engines.pairs import PAIRS
    from specmath.audit.engines.rows import OPTION_ROWS
    from specmath.audit.engines.table_runs import PAIR_CONFIGS, run_on_pair

    pair_engines = engines_for("pair")
    if args.engine and args.engine not in pair_engines:
        raise UnknownName(f"unknown engine {args.engine!r}; choose from: {', '.join(pair_engines)}")
    engines = [args.engine] if args.engine else list(pair_engines)
    audits = []
    for pair in [args.pair] if args.pair else list(PAIRS):
        for engine in engines:
            for config in PAIR_CONFIGS:
                audit = run_on_pair(engine, pair, OPTION_ROWS[config].options, n=args.n or TABLE_N[pair],
                                    seed=args.seed)
                audits.append(audit)
                # progress, one line per audit (stderr when stdout carries the Markdown or JSON)
                print(_torch_table([audit], False).splitlines()[-1], flush=True,
                      file=sys.stderr if args.markdown or args.json else sys.stdout)
    if args.json:
        print(json.dumps([a.to_json() for a in audits], indent=2))
    else:
        print(f"\n{_hardware()}")
        print(_torch_table(audits, args.markdown))
    return _status(audits)


def _run_options_table(args: argparse.Namespace) -> int:
    from specmath.audit.engines.table import options_table
    from specmath.audit.engines.table_runs import TARGET_TV, run_options_table
    from specmath.audit.engines.target import load_target

    engines = [args.engine] if args.engine else list(engines_for("gguf"))
    n = {e: args.n for e in engines} if args.n else None  # None: each row's N detects --tv (TARGET_TV)
    target = load_target(args.target or args.pair or "smollm2")
    records = run_options_table(engines, target, n=n, seed=args.seed, pathwise_seeds=args.pathwise or 50, draft=args.draft,
                                target_tv=TARGET_TV if args.tv is None else args.tv,
                                progress=lambda line: print(line, file=sys.stderr, flush=True))
    if args.json_out:
        Path(args.json_out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json_out).write_text(json.dumps(records, indent=1) + "\n")
    from specmath.audit.engines.checks import exit_status

    print(json.dumps(records, indent=2) if args.json else options_table(records))
    return exit_status([r["verdict"] for r in records])


def _run_on_target(args: argparse.Namespace, entry: EngineEntry, options) -> int:
    from specmath.audit.engines.registry import EngineOpening
    from specmath.audit.engines.rows import option_row_named, row_for
    from specmath.audit.engines.table import describe_audit
    from specmath.audit.engines.table_runs import TARGET_TV, open_engine, run_row
    from specmath.audit.engines.target import load_target
    from specmath.function_reference import resolve_function

    target = load_target(args.target or args.pair)
    for token, _ in options.logit_bias:
        if token >= target.vocab_size:
            raise InvalidArgument(f"--logit-bias token {token} is outside {target.name}'s vocabulary: a token id in "
                                  f"[0, {target.vocab_size})")
    spec = {"command": args.engine_cmd, "endpoint": args.endpoint}.get(entry.name, args.engine)
    if entry.name == "function":
        resolve_function(spec, "engine")  # its mistakes as one line, before any model loads
    opening = EngineOpening(target, spec=spec, draft=args.draft, semantics=args.semantics, model=args.model,
                            samples_per_request=args.samples_per_request, timeout=args.timeout,
                            plain_url=args.plain_endpoint)
    with open_engine(entry, opening) as opened:
        row = option_row_named(args.option) if args.option else row_for(options)
        prompt = target.encode(args.prompt) if args.prompt else None
        # --tv: run_row chooses N at the prompt it audits, and the reproducer names that N
        n = None if args.tv is not None else args.n or CI.generate_calls
        audit, _, _ = run_row(opened, target, row, n=n, seed=args.seed, prompt=prompt, pathwise_seeds=args.pathwise,
                              reproducer=lambda n: _reproducer(args, n),
                              target_tv=TARGET_TV if args.tv is None else args.tv)
    print(json.dumps(audit.to_json(), indent=2) if args.json else describe_audit(audit))
    return _status([audit])


def _run_on_server_law(args: argparse.Namespace, options) -> int:
    from specmath.audit.engines.endpoint import EndpointEngine
    from specmath.audit.engines.rows import option_row_named, row_for
    from specmath.audit.engines.server_law import run_server_law_audit
    from specmath.audit.engines.table import describe_audit

    engine = EndpointEngine(args.endpoint, model=args.model, semantics=args.semantics or ENGINES["endpoint"].semantics,
                            vocab_size=args.vocab_size, timeout=args.timeout,
                            samples_per_request=args.samples_per_request)
    engine.check_reachable()
    row = option_row_named(args.option) if args.option else row_for(options)
    audit, _ = run_server_law_audit(engine, row, n=args.n or CI.generate_calls, seed=args.seed,
                                    vocab_size=args.vocab_size, top=args.logprobs, prompt_text=args.prompt,
                                    lookup=args.drafter == "lookup")
    print(json.dumps(audit.to_json(), indent=2) if args.json else describe_audit(audit))
    return _status([audit])


def _run_on_pair(args: argparse.Namespace, entry: EngineEntry, options) -> int:
    from specmath.audit.engines.table import describe_audit
    from specmath.audit.engines.table_runs import run_on_pair

    audit = run_on_pair(entry, args.pair, options, n=args.n or CI.generate_calls, seed=args.seed)
    if audit.skipped:  # the engine cannot run here (a package or a model file is missing): say why
        raise InvalidArgument(f"engine {args.engine!r} cannot run here: {audit.skipped}")
    print(json.dumps(audit.to_json(), indent=2) if args.json else describe_audit(audit))
    return _status([audit])


def run(args: argparse.Namespace) -> int:
    check_arguments(args)
    if args.all:
        return _run_all(args)
    if args.options_table:
        return _run_options_table(args)
    entry = _engine_entry(args)
    options = _sampling_options(args)
    if entry.target == "pair":
        return _run_on_pair(args, entry, options)
    if args.law == "server":
        return _run_on_server_law(args, options)
    return _run_on_target(args, entry, options)
