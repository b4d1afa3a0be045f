"""The audit of an engine reached by the protocol: a function, a subprocess (llama.cpp, node-llama-cpp), an endpoint.

Notation: p = target law, w = the engine's sampling chain, N = generate calls.

``run_engine_audit`` runs N generate calls of the engine on one prompt and G-tests their first two tokens
against the exact law (``specmath.audit.engines.checks``), computed from

* the engine's own non-speculative logits when it gives them (``EngineClient.logits``): a quantised engine
  is then held to its own quantised model, so quantisation is no confound; ``reference`` (transformers'
  dequantised forward of the same file) then only *states* the quantisation, as the TV between the first
  token's law from the two forwards;
* otherwise ``reference``, the target's torch forward (a function or an endpoint serving that model).

A negative control runs the same checks: ``control_engine`` (the same engine, or one of the same kind)
with ``control`` (``specmath.audit.engines.rows.Control``), a bug of the class the row is about. Where the
engine promises that speculative output equals plain output seed by seed, ``pathwise_seeds`` > 0 adds the
pathwise check (``specmath.audit.engines.pathwise``).
"""

from __future__ import annotations

from collections.abc import Sequence

from specmath.audit.engines.checks import GenerateAudit, check_samples, exact_laws, timed
from specmath.audit.engines.law import Logits, first_token_law, tv_distance
from specmath.audit.engines.pathwise import pathwise_check
from specmath.audit.engines.protocol import EngineClient
from specmath.audit.engines.rows import Control
from specmath.sampling_options import SamplingOptions
from specmath.validation import InvalidArgument, check_integer

__all__ = ["run_engine_audit"]

#: generate calls per request: a subprocess or endpoint answers in chunks, so a slow engine shows progress
_CHUNK = 250


def _generate(engine: EngineClient, prompt: Sequence[int], n: int, seed: int, options: SamplingOptions,
              control: dict | None = None) -> tuple[list[list[int]], int | None, int | None]:
    tokens, drafted, accepted = [], 0, 0
    for start in range(0, n, _CHUNK):
        out = engine.generate(prompt, min(_CHUNK, n - start), seed + start, 2, options, control=control)
        tokens += out.tokens
        drafted = None if out.drafted is None or drafted is None else drafted + out.drafted
        accepted = None if out.accepted is None or accepted is None else accepted + out.accepted
    return tokens, drafted, accepted


def run_engine_audit(engine: EngineClient, target: str, prompt: Sequence[int], options: SamplingOptions, *, n: int,
                     seed: int = 0, reference: Logits | None = None, control: Control | None = None,
                     control_engine: EngineClient | None = None, pathwise_seeds: int = 0,
                     label: str | None = None) -> GenerateAudit:
    """N generate calls of ``engine`` on ``prompt`` (and of its control), tested against the exact law."""
    n = check_integer(n, "n (generate calls)", min_value=1)
    if not prompt:
        raise InvalidArgument("the prompt is empty: give at least one token")
    engine.semantics.check_supports(options)
    audit = GenerateAudit(engine.name, target, label or options.label(), n, prompt=list(prompt),
                          control=control.description if control else "")
    logits = engine.logits if engine.has_logits else reference
    if logits is None:
        raise InvalidArgument(f"{engine.name} does not give its logits: name the model it serves with --target")
    laws = exact_laws(logits, prompt, options, engine.semantics, n)
    if engine.has_logits and reference is not None:
        audit.quantisation_tv = tv_distance(laws.first, first_token_law(reference, prompt, options, engine.semantics))
    result, audit.error, audit.seconds = timed(_generate, engine, prompt, n, seed, options)
    if result is None:
        return audit
    samples, audit.drafted, audit.accepted = result
    audit.checks += check_samples(samples, "engine", laws)
    if control is not None and control_engine is not None:
        request = control.protocol(engine.semantics)
        controls, error, audit.control_seconds = timed(_generate, control_engine, prompt, n, seed + 10**6, options,
                                                       request)
        if error:
            audit.error = f"the control raised {error}"
            return audit
        audit.checks += check_samples(controls[0], "control", laws)
    if pathwise_seeds and engine.has_plain:
        audit.pathwise, error, _ = timed(pathwise_check, engine, prompt, options, pathwise_seeds, seed)
        if error:
            audit.error = f"the pathwise check raised {error}"
    return audit
