"""Internal: Runs of ``specmath audit-generate``: one engine on a pair, one option row on a target, the two tables.

Notation: p = target law, N = generate calls, c = prompt.

Every engine is an entry of ``specmath.audit.engines.registry`` and every run ends in the one audit,
``specmath.audit.engines.runner.run_engine_audit``. ``open_engine`` starts an entry on what it runs on
(``EngineOpening``) and, where the engine takes no control itself, the engine its controls run in.

* ``run_on_pair``: an engine on a pair's torch models, at the pair's audit prompt (``AuditPair.prompt_for``), with
  the engine's named control; ``PAIR_CONFIGS`` are the configurations of the torch engines' table (``--all``).
* ``run_row``: an engine on a target, one option row (``specmath.audit.engines.rows``): at ``--prompt`` when given,
  otherwise at the prompt chosen for the row's control; with the row's control where one can run (an engine that
  takes controls, or its control engine); with the pathwise check when asked for. ``run_options_table`` runs
  every row for several GGUF engines and returns the audits with what the table shows (``table_record``).
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial

from specmath.audit.engines.checks import GenerateAudit, n_for_tv
from specmath.audit.engines.protocol import EngineClient
from specmath.audit.engines.registry import EngineEntry, EngineOpening, engine_entry
from specmath.audit.engines.rows import (
    LONG_PROMPTS,
    OPTION_ROWS,
    OptionRow,
    block_prompts,
    candidate_texts,
    choose_prompt,
)
from specmath.audit.engines.runner import AuditPlan, NegativeControl, run_engine_audit
from specmath.audit.engines.target import AuditTarget
from specmath.sampling_options import SamplingOptions
from specmath.settings import CI
from specmath.validation import InvalidArgument, check_integer

__all__ = ["OpenEngine", "open_engine", "PAIR_CONFIGS", "TARGET_TV", "MOST_CALLS", "run_on_pair", "run_row", "run_options_table",
           "table_record", "option_flags", "reproducer_command"]

#: a GGUF engine's n-gram drafter needs the prompt longer than n-gram + drafted tokens + 1 (llama.cpp ngram-simple)
_MIN_NGRAM_PROMPT = 8
#: the torch engines' table: these option rows, without their row controls (each engine brings its own)
PAIR_CONFIGS = ("T=1", "T=0.7 top-k 20", "top-p 0.9")
#: the TV every row of the options table detects with probability 0.99 at its level (it chooses its N for it)
TARGET_TV = 0.05
#: the most generate calls a row chooses (per sampler): within 10 minutes of a row on 2 cores for llama-cpp-ngram
MOST_CALLS = 30_000


@dataclass
class OpenEngine:
    """A started engine, the engine its controls run in (None: no control), and how it drafts."""

    engine: EngineClient
    control_engine: EngineClient | None
    lookup: bool  # drafts by lookup in the text so far (the control reaches x2 only where x1 hits that draft)
    description: str
    entry: EngineEntry

    def close(self) -> None:
        self.engine.close()
        if self.control_engine is not None and self.control_engine is not self.engine:
            self.control_engine.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _control_engine(entry: EngineEntry, engine: EngineClient, opening: EngineOpening) -> EngineClient | None:
    """Where a row's control runs: an engine that takes controls runs them itself, in a second process of it where
    its entry says ``control_apart`` (``run_engine_audit`` then runs the control's calls beside the engine's);
    another engine in its ``control_engine``; None: it has no control."""
    if engine.has_controls:
        return entry.open(opening) if entry.control_apart else engine
    return engine_entry(entry.control_engine).open(opening) if entry.control_engine else None


def open_engine(entry: EngineEntry | str, opening: EngineOpening) -> OpenEngine:
    """Start the engine on ``opening``; InvalidArgument when it cannot run here (not built, no such target)."""
    entry = engine_entry(entry) if isinstance(entry, str) else entry
    engine = entry.open(opening)
    try:
        control = _control_engine(entry, engine, opening)
    except Exception:
        engine.close()
        raise
    # a JSON-lines engine says how it drafts (info["drafter"]): a lookup engine is audited at a prompt a lookup drafts at
    return OpenEngine(engine, control, entry.lookup or engine.lookup, entry.describe(opening.spec), entry)


def option_flags(options: SamplingOptions) -> list[str]:
    """``specmath audit-generate``'s flags for ``options`` (the options that are on)."""
    flags = []
    for name, value in options.to_json().items():
        if name == "logit_bias":
            flags += [arg for token, bias in value for arg in ("--logit-bias", f"{token}={bias:g}")]
        elif name != "temperature" or value != 1:
            flags += ["--" + name.replace("_", "-"), f"{value:g}" if isinstance(value, float) else str(value)]
    return flags


def reproducer_command(engine: Sequence[str], model: Sequence[str], sampling: Sequence[str], n: int, seed: int,
                       extra: Sequence[str] = ()) -> str:
    """The ``specmath audit-generate`` line that draws the same samples: the engine's arguments (its name, or
    ``--endpoint URL`` ...), the model's (``--target smollm2``), the sampling's (``--option ROW`` or
    ``option_flags``), N and the seed (call i is seeded seed + i)."""
    return shlex.join(["specmath", "audit-generate", *engine, *model, *sampling, "--n", str(n), "--seed", str(seed),
                       *extra])


def _named_control(opened: OpenEngine) -> NegativeControl | None:
    """The engine's own named control (the first its entry lists), run in the engine itself."""
    if not opened.entry.controls or opened.control_engine is None:
        return None
    control = opened.entry.controls[0]
    return NegativeControl(control.description, {"name": control.name}, opened.control_engine)


def run_on_pair(entry: EngineEntry | str, pair: str, options: SamplingOptions, *, n: int = CI.generate_calls,
                seed: int = 0) -> GenerateAudit:
    """N generate calls of a pair engine on ``pair``'s audit prompt (and of its control); skipped (with the reason)
    where it cannot run here."""
    from specmath.audit.engines.pairs import load_audit_pair

    entry = engine_entry(entry) if isinstance(entry, str) else entry
    if entry.target != "pair":
        raise InvalidArgument(f"{entry.name} does not run on a pair's torch models")
    if options.greedy:
        raise InvalidArgument("the engine audit compares sampled laws: temperature must be > 0")
    n = check_integer(n, "n (generate calls)", min_value=1)
    reason = entry.unavailable()
    if reason:
        control = entry.controls[0].description if entry.controls else ""
        return GenerateAudit(entry.name, pair, options.label(), n, control=control, skipped=reason)
    entry.engine_semantics().check_supports(options)
    loaded = load_audit_pair(pair)
    with open_engine(entry, EngineOpening(loaded)) as opened:
        again = reproducer_command([entry.name], ["--pair", pair], option_flags(options), n, seed)
        plan = AuditPlan(loaded.prompt_for(entry.lookup), options, n, seed, reproducer=again)
        return run_engine_audit(opened.engine, pair, plan, control=_named_control(opened))


#: the probe of a candidate prompt: this many calls, one request (seeds far from the audit's own)
_PROBE_CALLS, _PROBE_SEED = 16, 10**8


def _drafts_at(engine: EngineClient, prompt: list[int], options: SamplingOptions, *, accepted: bool = False,
               failures: list[str] | None = None, control: dict | None = None) -> bool:
    """Whether the engine drafts at ``prompt`` (``accepted``: and the target accepts a drafted token there): a probe
    request; True where the engine counts neither, or fails (the audit's own request then meets that failure and
    reports it as the engine's verdict; the probe's message is appended to ``failures``, since an engine the probe
    killed answers the audit only that it is gone). ``control``: the probe runs that control, as the row will."""
    try:
        result = engine.generate(prompt, _PROBE_CALLS, _PROBE_SEED, 2, options, control=control)
    except Exception as exc:  # noqa: BLE001 - reported by the audit itself, as REFUSED or ENGINE ERROR
        if failures is not None:
            failures.append(f"{type(exc).__name__}: {exc}")
        return True
    count = result.accepted if accepted else result.drafted
    return count is None or count > 0


def _both_draft_at(opened: OpenEngine, prompt: list[int], options: SamplingOptions,
                   failures: list[str] | None = None, control: dict | None = None) -> bool:
    """The engine drafts at ``prompt``, and so does the engine its control runs in (another engine's lookup, as
    llama.cpp's for node-llama-cpp's, may decline there: its control would then have no drafted row to spoil).

    A draft model always drafts, but a row's control acts at x2 only where the target accepted the draft of x1, and
    ``choose_prompt`` models the proposal only as the target's most likely token (the draft may be another model,
    or decline under the row's options): there the probe asks for an accepted token. Why: at "1, 2, 3, 1, 2, 3,
    ..., 1," the draft proposes " 2", which frequency 1.5 has made so unlikely that llama-cpp-draft accepted none of
    8483 drafts, and its control could not act.

    The engine the control runs in is probed with the row's ``control`` (its protocol): that carries the engine's
    semantics, and another engine's own may change x1's law. Probed without it, llama.cpp counted the prompt
    " knock knock ..." into repetition 1.5, where node-llama-cpp counts the generated tokens only, drew " knock" too
    seldom to accept a draft in 16 calls, and node-llama-cpp-draft's row fell back to a prompt where its control
    could not act."""
    others = [e for e in (opened.control_engine,) if e is not None and e is not opened.engine]
    return (_drafts_at(opened.engine, prompt, options, accepted=not opened.lookup, failures=failures)
            and all(_drafts_at(e, prompt, options, accepted=not opened.lookup, failures=failures, control=control)
                    for e in others))


def run_row(opened: OpenEngine, target: AuditTarget, row: OptionRow, *, n: int | None, seed: int = 0,
            prompt: list[int] | None = None, pathwise_seeds: int = 0,
            reproducer: str | Callable[[int], str] | None = None,
            target_tv: float = TARGET_TV) -> tuple[GenerateAudit, SamplingOptions, float]:
    """(the audit of one row, the options it ran, its control's shift bound at the prompt: NaN for a given prompt).
    ``n`` None: the N at which both tests detect ``target_tv`` with probability 0.99 (``checks.n_for_tv``, at most
    ``MOST_CALLS``). ``reproducer``: the command that runs it again, or a function of the N run that writes it
    (default: ``--option ROW`` on ``target``).

    The law comes from the engine's own logits where it gives them, else from the target's forward; the target's
    forward also states the quantisation of an engine that gives its logits (``GenerateAudit.quantisation_tv``).
    """
    engine = opened.engine
    logits = engine.logits if engine.has_logits else target.reference
    options, shift = row.options, float("nan")
    probe_failures: list[str] = []
    chosen = row.control_for(engine.semantics)
    protocol = chosen.protocol(engine.semantics)
    if prompt is None:
        minimum = _MIN_NGRAM_PROMPT if opened.lookup else 1
        candidates = target.candidates(candidate_texts(row))
        if engine.prompt_block:  # prompts one token past a full block, where the texts reach one (block_prompts)
            candidates = block_prompts(candidates + target.candidates(LONG_PROMPTS), engine.prompt_block) or candidates
        prompt, options, shift = choose_prompt(logits, candidates, row, engine.semantics,
                                               lookup=opened.lookup, min_length=minimum,
                                               drafts_at=partial(_both_draft_at, opened, failures=probe_failures,
                                                                 control=protocol))
    elif row.bias:
        raise InvalidArgument(f"the {row.name!r} row chooses its own prompt and biased token: leave out --prompt")
    if n is None:
        n = n_for_tv(logits, prompt, options, engine.semantics, target_tv, most=MOST_CALLS)
    if callable(reproducer):
        reproducer = reproducer(n)
    # the target's forward: the law of an engine without logits; beside a GGUF engine's own, its quantisation
    reference = target.reference if target.gguf is not None or not engine.has_logits else None
    control = None
    if opened.control_engine is not None:
        control = NegativeControl(chosen.description, protocol, opened.control_engine)
    if reproducer is None and row.name in OPTION_ROWS:
        model = str(target.gguf or target.folder) if target.name.endswith(".gguf") or target.folder else target.name
        reproducer = reproducer_command([opened.entry.name], ["--target", model], ["--option", row.name], n, seed,
                                        ["--pathwise", str(pathwise_seeds)] if pathwise_seeds else [])
    plan = AuditPlan(prompt, options, n, seed, label=row.name, pathwise_seeds=pathwise_seeds, reproducer=reproducer)
    audit = run_engine_audit(engine, target.name, plan, reference=reference, control=control)
    if audit.error and probe_failures and probe_failures[0] != audit.error:
        # the probe met the failure first (an engine it crashed then answers only that it is gone): its message
        audit.error = (f"{probe_failures[0]} (at the prompt probe, {_PROBE_CALLS} calls; the audit's own request "
                       f"then: {audit.error})")
    return audit, options, shift


def table_record(audit: GenerateAudit, *, row: OptionRow, options: SamplingOptions, shift: float, description: str,
                 prompt_text: str) -> dict:
    """One row of the committed measurement: the audit, and what the table shows beside it."""
    return {**audit.to_json(), "row": row.name, "options": options.to_json(), "options_label": options.label(),
            "control_shift_bound": shift, "engine_description": description, "prompt_text": prompt_text}


def run_options_table(engines: Iterable[str], target: AuditTarget, *, n: dict[str, int] | None = None, seed: int = 0,
                      rows: Iterable[str] | None = None, pathwise_seeds: int = 50, draft: str | None = None,
                      target_tv: float = TARGET_TV, progress=print, on_record=None) -> list[dict]:
    """Every option row for every named GGUF engine on ``target``: the records of ``table_record``. An engine's N is
    ``n[engine]`` where given, otherwise each row's own, the N that detects ``target_tv`` (``run_row``).
    ``on_record(record)`` is called after each row (a long run keeps what it finished)."""
    records = []
    for name in engines:
        start = time.perf_counter()
        opened = open_engine(name, EngineOpening(target, draft=draft))
        startup = time.perf_counter() - start
        try:
            for row_name in rows or OPTION_ROWS:
                row = OPTION_ROWS[row_name]
                audit, options, shift = run_row(opened, target, row, n=(n or {}).get(name), seed=seed,
                                                pathwise_seeds=pathwise_seeds if row_name == "T=1" else 0,
                                                target_tv=target_tv)
                record = table_record(audit, row=row, options=options, shift=shift, description=opened.description,
                                      prompt_text=target.tokenizer.decode(audit.prompt) if target.tokenizer else "")
                record["engine_start_seconds"] = startup
                record["target_tv"] = target_tv
                records.append(record)
                if on_record is not None:
                    on_record(record)
                progress(f"{name:22s} {row_name:24s} N {audit.n:5d} {audit.verdict}  engine {audit.seconds:.0f} s, "
                         f"control {audit.control_seconds:.0f} s")
        finally:
            opened.close()
    return records
