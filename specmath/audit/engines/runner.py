"""The audit of one engine, whatever reaches it: a pair's torch models, a function, a subprocess, an endpoint.

Notation: p = target law, w = the engine's sampling chain, N = generate calls.

``run_engine_audit`` runs N generate calls of the engine on one prompt (``AuditPlan``) and G-tests their first
two tokens against the exact law (``specmath.audit.engines.checks``), computed from

* the engine's own non-speculative logits when it gives them (``EngineClient.logits``): a pair's torch engines
  give their target's, so the law is the target's own; a quantised engine is held to its own quantised model,
  so quantisation is no confound; ``reference`` (transformers' dequantised forward of the same file) then only
  *states* the quantisation, as the TV between the first token's law from the two forwards;
* otherwise ``reference``, the target's torch forward (a function or an endpoint serving that model).

A negative control (``NegativeControl``) runs the same checks: a generate request with a lossy ``control``
(a control the engine names, or an option row's bug at drafted rows: ``specmath.audit.engines.rows.Control``),
in the same engine or one of the same kind (in a second process of it where the engine is a subprocess, so that
the control's calls run beside the engine's). Where the engine promises that speculative output equals plain
output seed by seed, ``AuditPlan.pathwise_seeds`` > 0 adds the pathwise check (``specmath.audit.engines.pathwise``).

The engine's failures are its verdict (``specmath.audit.engines.checks.VERDICTS``): a refused request is REFUSED,
any other exception of the engine ENGINE ERROR (of its pathwise check's plain path too); the control's engine
failing leaves the audit INCONCLUSIVE, as the control is not the engine under audit.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial

from specmath.audit.engines.checks import GenerateAudit, check_samples, exact_laws, timed
from specmath.audit.engines.law import Logits, first_token_law, tv_distance
from specmath.audit.engines.pathwise import pathwise_check
from specmath.audit.engines.protocol import EngineClient
from specmath.sampling_options import SamplingOptions
from specmath.validation import InvalidArgument, check_integer

__all__ = ["AuditPlan", "NegativeControl", "run_engine_audit", "CONTROL_SEED_OFFSET"]

#: the control's N calls start from seed + this: never the engine's own seeds
CONTROL_SEED_OFFSET = 10**6


@dataclass(frozen=True)
class AuditPlan:
    """What one audit runs: N generate calls from ``seed`` on ``prompt`` under ``options``."""

    prompt: Sequence[int]
    options: SamplingOptions
    n: int
    seed: int = 0
    label: str | None = None  # the options' name in the report (default: ``options.label()``)
    pathwise_seeds: int = 0  # > 0: also compare speculative with plain output over that many seeds
    reproducer: str | None = None  # the command that runs this plan again (the same samples), for a LOSS's report


@dataclass(frozen=True)
class NegativeControl:
    """A lossy control: what it does wrong, the ``control`` of its generate requests, the engine it runs in."""

    description: str
    request: dict
    engine: EngineClient


def _generate(engine: EngineClient, plan: AuditPlan, seed: int, control: dict | None = None,
              requests: list[dict] | None = None) -> tuple[list[list[int]], int | None, int | None]:
    """The plan's N calls in requests of ``engine.calls_per_request``: request k of n calls from seed S + start, so
    that call i of the audit is seeded seed + i; each request's seed, n and report appended to ``requests``."""
    tokens, drafted, accepted = [], 0, 0
    chunk = engine.calls_per_request or plan.n
    for start in range(0, plan.n, chunk):
        n = min(chunk, plan.n - start)
        out = engine.generate(plan.prompt, n, seed + start, 2, plan.options, control=control)
        if requests is not None:
            requests.append({"role": "control" if control is not None else "engine", "seed": seed + start, "n": n,
                             "max_new_tokens": 2, "drafted": out.drafted, "accepted": out.accepted,
                             **(out.report or {})})
        tokens += out.tokens
        drafted = None if out.drafted is None or drafted is None else drafted + out.drafted
        accepted = None if out.accepted is None or accepted is None else accepted + out.accepted
    return tokens, drafted, accepted


def _apart(engine: EngineClient, control: EngineClient) -> bool:
    """The engine and its control run in two processes of their own, so their requests can run side by side."""
    return control is not engine and engine.own_process and control.own_process


def run_engine_audit(engine: EngineClient, target: str, plan: AuditPlan, *, reference: Logits | None = None,
                     control: NegativeControl | None = None) -> GenerateAudit:
    """N generate calls of ``engine`` on the plan's prompt (and of its control), tested against the exact law."""
    n = check_integer(plan.n, "n (generate calls)", min_value=1)
    if not plan.prompt:
        raise InvalidArgument("the prompt is empty: give at least one token")
    options = plan.options
    if options.greedy:
        raise InvalidArgument("the engine audit compares sampled laws: temperature must be > 0")
    engine.semantics.check_supports(options)
    audit = GenerateAudit(engine.name, target, plan.label or options.label(), n, prompt=list(plan.prompt),
                          control=control.description if control else "", engine_version=engine.version,
                          seed=plan.seed, reproducer=plan.reproducer)
    logits = engine.logits if engine.has_logits else reference
    if logits is None:
        raise InvalidArgument(f"{engine.name} does not give its logits: name the model it serves with --target")
    laws = exact_laws(logits, plan.prompt, options, engine.semantics, n)
    if engine.has_logits and reference is not None:
        audit.quantisation_tv = tv_distance(laws.first, first_token_law(reference, plan.prompt, options,
                                                                        engine.semantics))
    engine_requests, control_requests = [], []
    run_engine = partial(timed, _generate, engine, plan, plan.seed, None, engine_requests)
    run_control = None if control is None else partial(timed, _generate, control.engine, plan,
                                                       plan.seed + CONTROL_SEED_OFFSET, control.request, control_requests)
    if control is not None and _apart(engine, control.engine):
        # two processes, one thread each: the control's calls run beside the engine's (a row on 2 cores takes
        # the longer of the two, not their sum); the samples and the records are the same as one after the other
        with ThreadPoolExecutor(max_workers=1) as pool:
            controlled = pool.submit(run_control)
            (result, failure, audit.seconds), control_run = run_engine(), controlled.result()
    else:
        result, failure, audit.seconds = run_engine()
        control_run = run_control() if failure is None and control is not None else None
    audit.requests += engine_requests
    if failure is not None:
        audit.record_failure(failure)
        return audit
    samples, audit.drafted, audit.accepted = result
    audit.checks += check_samples(samples, "engine", laws)
    if control_run is not None:
        controls, failure, audit.control_seconds = control_run
        audit.requests += control_requests
        if failure is not None:
            audit.control_error = failure.message
        else:
            audit.checks += check_samples(controls[0], "control", laws)
    if plan.pathwise_seeds and engine.has_plain:
        audit.pathwise, failure, _ = timed(pathwise_check, engine, plan.prompt, options, plan.pathwise_seeds, plan.seed)
        if failure is not None:
            audit.record_failure(failure, "the pathwise check: ")
    return audit

