"""Two rows of an engine that runs several requests in one batch (``EngineClient.batch``: vLLM's engine).

Notation: p = target law, w = the engine's sampling chain, N = samples, M = new tokens per sample.

* ``seed_batch_check`` (per-request seeds, pathwise): a request (prompt, n, seed S, options) run alone and run
  inside a batch beside other requests (other prompts, other options) must give the same tokens, sample for
  sample, over M tokens: each request has its own generators (vLLM: one ``torch.Generator`` per seeded child), so
  its neighbours in a batch must not move its draws. The same comparison on the plain path is the check's own
  reference (it must agree there), and the request against itself with seed S + 1 is its negative control (it
  must differ: the comparison sees a different draw). A difference is reported with its sample, position and
  both tokens, and the seed that reproduces it (sample i of (n, S) is the request (1, S + i)).
* ``mixed_batch_audit``: one batch of requests with different options on one prompt, each request's first two
  tokens G-tested against its own exact law (``checks.check_samples``); its control is the same batch with the
  lossy control at drafted rows, in the engine itself or in a ``control_engine`` of the same configuration (a
  served engine takes no control). A batch mixes per-request temperatures, truncations and penalties in one
  verify step: the rows of one request must not take another's options.

Both take any engine with ``batch`` (``EngineClient.has_batch``): a JSON-lines engine runs a batch in one call
(vLLM's ``LLM.generate``), an endpoint sends its requests concurrently and the server decides which share a step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from specmath.audit.engines.checks import GenerateAudit, check_samples, exact_laws, timed
from specmath.audit.engines.law import Logits
from specmath.audit.engines.protocol import EngineClient
from specmath.sampling_options import SamplingOptions

__all__ = ["seed_batch_check", "MixedRequest", "mixed_batch_audit"]


def _differences(a: list[list[int]], b: list[list[int]], seed: int) -> dict:
    differing = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    first = None
    if differing:
        i = differing[0]
        at = next(j for j, (x, y) in enumerate(zip(a[i], b[i], strict=True)) if x != y)
        first = {"sample": i, "seed": seed + i, "position": at, "alone": a[i][at], "batched": b[i][at]}
    return {"differing_samples": len(differing), "first": first}


#: the options of the two neighbours a request is batched with (vLLM takes both under speculation)
NEIGHBOURS = (SamplingOptions(0.8, top_p=0.9), SamplingOptions(1.2, presence_penalty=1.0))


def seed_batch_check(engine: EngineClient, prompt: Sequence[int], options: SamplingOptions, *, n: int = 50,
                     seed: int = 0, max_new_tokens: int = 4,
                     neighbours: tuple[SamplingOptions, SamplingOptions] = NEIGHBOURS) -> dict:
    """{"speculative", "plain", "control", "n", "seed", "max_new_tokens"}: the differences of the request alone
    against in a batch (between two requests under ``neighbours``, one on half the prompt), with and without
    speculation, each with the reports of the batch's three replies (``batch_reports``: what the engine said of
    them, an endpoint's send and reply times among it), and of seed S against S + 1 (the control)."""
    others = [{"prompt": list(prompt[: max(1, len(prompt) // 2)]), "n": 7, "seed": seed + 10**5,
               "max_new_tokens": max_new_tokens, "options": neighbours[0]},
              {"prompt": list(prompt), "n": 5, "seed": seed + 2 * 10**5, "max_new_tokens": max_new_tokens,
               "options": neighbours[1]}]
    out = {"n": n, "seed": seed, "max_new_tokens": max_new_tokens}
    for label, speculative in (("speculative", True), ("plain", False)):
        alone = engine.generate(prompt, n, seed, max_new_tokens, options, speculative=speculative).tokens
        batch = [{**o, "speculative": speculative} for o in others]
        mine = {"prompt": list(prompt), "n": n, "seed": seed, "max_new_tokens": max_new_tokens, "options": options,
                "speculative": speculative}
        replies = engine.batch([batch[0], mine, batch[1]])
        out[label] = {**_differences(alone, replies[1].tokens, seed), "batch_reports": [r.report for r in replies]}
        if speculative:
            shifted = engine.generate(prompt, n, seed + 1, max_new_tokens, options).tokens
            out["control"] = _differences(alone, shifted, seed)
    return out


@dataclass(frozen=True)
class MixedRequest:
    """One request of a mixed batch: its options and its label."""

    label: str
    options: SamplingOptions


def mixed_batch_audit(engine: EngineClient, target: str, logits: Logits, prompt: Sequence[int],
                      requests: Sequence[MixedRequest], *, n: int, seed: int = 0, control: dict | None = None,
                      control_engine: EngineClient | None = None) -> GenerateAudit:
    """One batch of ``requests`` (n samples each) on ``prompt``, each against its own law; then the control batch,
    in ``control_engine`` where given (an engine that takes the lossy ``control``), else in ``engine``. The checks
    are named "LABEL: first token" and so on; ``notes`` say which request each is."""
    apart = control_engine is not None and control_engine is not engine
    described = "the same batch with the control at drafted rows" + (f", in {control_engine.name}" if apart else "")
    audit = GenerateAudit(engine.name, target, "one batch: " + ", ".join(r.label for r in requests), n,
                          prompt=list(prompt), control=described if control else "")
    laws = [exact_laws(logits, prompt, r.options, engine.semantics, n) for r in requests]

    def run(runner: EngineClient, base_seed: int, lossy: dict | None):
        batch = [{"prompt": list(prompt), "n": n, "seed": base_seed + k * n, "max_new_tokens": 2, "options": r.options,
                  "control": lossy} for k, r in enumerate(requests)]
        return runner.batch(batch)

    for role, base, lossy in (("engine", seed, None), ("control", seed + 10**6, control)):
        if role == "control" and control is None:
            break
        runner = control_engine if role == "control" and apart else engine
        replies, failure, seconds = timed(run, runner, base, lossy)
        if role == "engine":
            audit.seconds = seconds
        else:
            audit.control_seconds = seconds
        if failure is not None:
            if role == "control":
                audit.control_error = failure.message
            else:
                audit.record_failure(failure)
            return audit
        for k, (r, law, reply) in enumerate(zip(requests, laws, replies, strict=True)):
            audit.requests.append({"role": role, "label": r.label, "seed": base + k * n, "n": n,
                                   "options": r.options.to_json(), "drafted": reply.drafted, "accepted": reply.accepted,
                                   **(reply.report or {})})
            for c in check_samples(reply.tokens, role, law):
                audit.checks.append(replace(c, name=f"{r.label}: {c.name}"))
        if role == "engine":
            audit.drafted, audit.accepted = replies[0].drafted, replies[0].accepted  # the whole batch's counters
    return audit
