"""Runs of ``specmath audit-generate`` on engines reached by the protocol: one row, or the options table.

Notation: p = target law, N = generate calls, c = prompt.

An engine is named as one of four kinds (``EngineChoice``): a built GGUF engine (``llama-cpp-draft``,
``llama-cpp-ngram``, ``node-llama-cpp-lookup``, ``node-llama-cpp-draft``: ``specmath.audit.engines.gguf``),
a Python function (``module:function``), a subprocess (``--engine-cmd``) or an endpoint (``--endpoint``).
``open_engine`` starts it on the target and, for a GGUF engine, the engine its controls run in.

``run_row`` audits one option row (``specmath.audit.engines.rows``): at ``--prompt`` when given, otherwise at
the prompt chosen for the row's control; with the control where one can be built (a GGUF engine, or a
subprocess that takes controls); with the pathwise check when asked for. ``run_options_table`` runs every
row for several GGUF engines and returns the audits with what the table shows (``table_record``).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from specmath.audit.engines.checks import GenerateAudit
from specmath.audit.engines.gguf import GGUF_ENGINES
from specmath.audit.engines.protocol import CallableEngine, EngineClient
from specmath.audit.engines.rows import OPTION_ROWS, OptionRow, candidate_texts, choose_prompt
from specmath.audit.engines.runner import run_engine_audit
from specmath.audit.engines.target import AuditTarget
from specmath.sampling_options import SamplingOptions
from specmath.validation import InvalidArgument

__all__ = ["EngineChoice", "OpenEngine", "open_engine", "run_row", "run_options_table", "table_record"]

#: a GGUF engine's n-gram drafter needs the prompt longer than n-gram + drafted tokens + 1 (llama.cpp ngram-simple)
_MIN_NGRAM_PROMPT = 8


@dataclass(frozen=True)
class EngineChoice:
    """How the engine was named: kind "gguf" (a built engine), "function", "command" or "endpoint"."""

    kind: str
    spec: str


@dataclass
class OpenEngine:
    """A started engine, the engine its controls run in (None: no control), and how it drafts."""

    engine: EngineClient
    control_engine: EngineClient | None
    lookup: bool  # drafts by lookup in the text so far (the control reaches x2 only where x1 hits that draft)
    description: str

    def close(self) -> None:
        self.engine.close()
        if self.control_engine is not None and self.control_engine is not self.engine:
            self.control_engine.close()


def open_engine(choice: EngineChoice, target: AuditTarget, *, draft: str | None = None, semantics: str = "hf",
                model: str = "default") -> OpenEngine:
    """Start the engine on ``target``; InvalidArgument when it cannot run here (not built, no GGUF target)."""
    if choice.kind == "gguf":
        spec = GGUF_ENGINES[choice.spec]
        if target.gguf is None:
            raise InvalidArgument(f"{choice.spec} runs GGUF files: give --target smollm2 or --target FILE.gguf")
        engine = spec.start(target.gguf, draft)
        try:
            control = engine if spec.control_engine == spec.name else GGUF_ENGINES[spec.control_engine].start(
                target.gguf, draft)
        except Exception:
            engine.close()
            raise
        return OpenEngine(engine, control, not spec.draft_model, spec.description)
    if choice.kind == "function":
        engine = CallableEngine(choice.spec, semantics, vocab_size=target.vocab_size)
        return OpenEngine(engine, None, False, f"the Python function {choice.spec}")
    if choice.kind == "command":
        from specmath.audit.engines.jsonl import JsonLinesEngine

        engine = JsonLinesEngine(choice.spec)
        return OpenEngine(engine, engine if engine.has_controls else None, False, f"the subprocess {choice.spec!r}")
    if choice.kind == "endpoint":
        from specmath.audit.engines.endpoint import EndpointEngine

        engine = EndpointEngine(choice.spec, model=model, semantics=semantics, vocab_size=target.vocab_size)
        engine.check_reachable()
        return OpenEngine(engine, None, False, f"the endpoint {choice.spec}")
    raise InvalidArgument(f"unknown kind of engine {choice.kind!r}")


def run_row(opened: OpenEngine, target: AuditTarget, row: OptionRow, *, n: int, seed: int = 0,
            prompt: list[int] | None = None, pathwise_seeds: int = 0) -> tuple[GenerateAudit, SamplingOptions, float]:
    """(the audit of one row, the options it ran, its control's shift bound at the prompt: NaN for a given prompt).

    The law comes from the engine's own logits where it gives them, else from the target's forward; the target's
    forward also states the quantisation of an engine that gives its logits (``GenerateAudit.quantisation_tv``).
    """
    engine = opened.engine
    logits = engine.logits if engine.has_logits else target.reference
    options, shift = row.options, float("nan")
    if prompt is None:
        minimum = _MIN_NGRAM_PROMPT if opened.lookup else 1
        prompt, options, shift = choose_prompt(logits, target.candidates(candidate_texts(row)), row, engine.semantics,
                                               lookup=opened.lookup, min_length=minimum)
    elif row.bias:
        raise InvalidArgument(f"the {row.name!r} row chooses its own prompt and biased token: leave out --prompt")
    # the target's forward: the law of an engine without logits; beside a GGUF engine's own, its quantisation
    reference = target.reference if target.gguf is not None or not engine.has_logits else None
    audit = run_engine_audit(engine, target.name, prompt, options, n=n, seed=seed, reference=reference,
                             control=row.control if opened.control_engine is not None else None,
                             control_engine=opened.control_engine, pathwise_seeds=pathwise_seeds, label=row.name)
    return audit, options, shift


def table_record(audit: GenerateAudit, *, row: OptionRow, options: SamplingOptions, shift: float, description: str,
                 prompt_text: str) -> dict:
    """One row of the committed measurement: the audit, and what the table shows beside it."""
    return {**audit.to_json(), "row": row.name, "options": options.to_json(), "options_label": options.label(),
            "control_shift_bound": shift, "engine_description": description, "prompt_text": prompt_text}


def run_options_table(engines: Iterable[str], target: AuditTarget, *, n: dict[str, int], seed: int = 0,
                      rows: Iterable[str] | None = None, pathwise_seeds: int = 50, draft: str | None = None,
                      progress=print) -> list[dict]:
    """Every option row for every named GGUF engine on ``target``: the records of ``table_record``."""
    records = []
    for name in engines:
        start = time.perf_counter()
        opened = open_engine(EngineChoice("gguf", name), target, draft=draft)
        startup = time.perf_counter() - start
        try:
            for row_name in rows or OPTION_ROWS:
                row = OPTION_ROWS[row_name]
                audit, options, shift = run_row(opened, target, row, n=n.get(name, 1000), seed=seed,
                                                pathwise_seeds=pathwise_seeds if row_name == "T=1" else 0)
                record = table_record(audit, row=row, options=options, shift=shift, description=opened.description,
                                      prompt_text=target.tokenizer.decode(audit.prompt) if target.tokenizer else "")
                record["engine_start_seconds"] = startup
                records.append(record)
                progress(f"{name:22s} {row_name:24s} N {audit.n:5d} {audit.verdict}  engine {audit.seconds:.0f} s, "
                         f"control {audit.control_seconds:.0f} s")
        finally:
            opened.close()
    return records
