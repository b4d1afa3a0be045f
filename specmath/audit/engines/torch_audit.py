"""End-to-end audit of an engine's generate path: its first two tokens against the target's own law.

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)).

A lossless engine emits, whatever its draft and however it verifies, tokens whose law is the target's
law under the engine's sampling options. So after N whole generate calls on one prompt c:

* **first token**: x1 ~ w(p(. | c)), where w is the sampling chain (temperature, top-k, top-p, min-p,
  logit bias, penalties) in the engine's own order (``specmath.audit.engines.law``), computed in float64
  from raw logits, independently of every engine's own sampling code;
* **first two tokens**: (x1, x2) ~ w(p(. | c))(x1) w(p(. | c x1))(x2), the second law from its own
  prefix (penalties count x1), pooled so that every cell expects at least 5 samples.

Each is a G-test (``specmath.stats.g_test``; a token of law 0 is a certain failure) at level
1e-6 / 2 (Bonferroni over the engine's two checks, so a correct engine fails with probability at most
1e-6), with its power stated: ``specmath.stats.detectable_tv``, the smallest TV (on the test's cells)
detected with probability 0.99. A negative control (a lossy variant of the same kind of engine) runs the
same checks in the same audit: the audit *passes* when the engine passes both checks and the control
fails one; a control that passes means the run could not tell a loss here (inconclusive, not a pass).
An engine that raises is an *error*, reported with its exception, never a loss.

This module holds the checks and the audit of the engines that run on a pair's torch models
(``specmath.audit.engines.torch_engines``); engines reached by the protocol (a function, a subprocess, an endpoint)
are audited by ``specmath.audit.engines.runner`` with the same checks.

Tolerance: the law comes from one target forward over the whole prompt, the engines compute theirs
incrementally with a KV cache; the two float32 paths differ by about 1e-6 in a logit, a TV far below
any detectable TV here (0.01 or more). A top-k or top-p boundary that falls within such rounding of
a token would show up as an impossible token; none does on these pairs (the run says so if it did).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from specmath.audit.engines.checks import (
    FAMILY_LEVEL,
    POWER,
    Check,
    ExactLaws,
    GenerateAudit,
    check_samples,
    exact_laws,
    timed,
)
from specmath.audit.engines.law import MIN_EXPECTED, OTHER, Logits, sampling_law
from specmath.audit.engines.law import first_token_law as engine_first_token_law
from specmath.audit.engines.law import two_token_law as engine_two_token_law
from specmath.audit.engines.pairs import AuditPair, load_audit_pair
from specmath.audit.engines.semantics import SEMANTICS
from specmath.audit.engines.torch_engines import Engine, engine_named
from specmath.sampling_options import SamplingOptions
from specmath.validation import InvalidArgument, check_choice, check_integer

__all__ = ["CONFIGS", "Check", "GenerateAudit", "ExactLaws", "warped_law", "first_token_law", "two_token_law",
           "torch_logits", "run_generate_audit", "FAMILY_LEVEL", "POWER", "MIN_EXPECTED", "OTHER"]

#: the table's sampling configurations
CONFIGS = {
    "T=1": SamplingOptions(1.0),
    "T=0.7 top-k 20": SamplingOptions(0.7, top_k=20),
    "top-p 0.9": SamplingOptions(1.0, top_p=0.9),
}


def warped_law(logits: np.ndarray, sampling: SamplingOptions) -> np.ndarray:
    """(V,) logits -> (V,) float64 law: Hugging Face's processor order (temperature, top-k, top-p), softmax."""
    return sampling_law(logits, sampling, SEMANTICS["hf"])


def torch_logits(target: torch.nn.Module) -> Logits:
    """The ``Logits`` of a torch causal LM: float32 logits at each context's last position, in float64."""

    @torch.inference_mode()
    def logits(contexts: list[list[int]]) -> np.ndarray:
        rows: dict[int, torch.Tensor] = {}
        by_length: dict[int, list[int]] = {}
        for i, context in enumerate(contexts):
            by_length.setdefault(len(context), []).append(i)
        for indices in by_length.values():  # contexts of one length go in batches of 64
            for start in range(0, len(indices), 64):
                chunk = indices[start:start + 64]
                out = target(torch.tensor([contexts[i] for i in chunk])).logits[:, -1].float()
                rows.update(zip(chunk, out, strict=True))
        return torch.stack([rows[i] for i in range(len(contexts))]).double().numpy()

    return logits


def first_token_law(pair: AuditPair, sampling: SamplingOptions) -> np.ndarray:
    """w(p(. | prompt)) as a float64 vector (Hugging Face's order)."""
    return engine_first_token_law(torch_logits(pair.target), pair.prompt, sampling, SEMANTICS["hf"])


def two_token_law(pair: AuditPair, sampling: SamplingOptions, n: int) -> tuple[dict, set]:
    """({cell: probability}, frequent x1): the pooled law of the first two tokens (``engine_law.two_token_law``)."""
    return engine_two_token_law(torch_logits(pair.target), pair.prompt, sampling, SEMANTICS["hf"], n)


def run_generate_audit(engine: Engine | str, pair: str, config: str | SamplingOptions = "T=1", n: int = 2000,
                       seed: int = 0, control: bool = True) -> GenerateAudit:
    """N generate calls of ``engine`` on ``pair``'s prompt (and of its control), tested as described above."""
    engine = engine_named(engine) if isinstance(engine, str) else engine
    if isinstance(config, str):
        config = CONFIGS[check_choice(config, "sampling configuration", CONFIGS, also="or SamplingOptions")]
    options = config
    if options.greedy:
        raise InvalidArgument("the engine audit compares sampled laws: temperature must be > 0")
    n = check_integer(n, "n (generate calls)", min_value=1)
    audit = GenerateAudit(engine.name, pair, options.label(), n, control=engine.control_description)
    reason = engine.unavailable(pair)
    if reason:
        audit.skipped = reason
        return audit
    engine.semantics.check_supports(options)
    loaded = load_audit_pair(pair)
    if engine.lookup:
        loaded = dataclasses.replace(loaded, prompt=loaded.lookup_prompt)
    audit.prompt = list(loaded.prompt)
    laws = exact_laws(torch_logits(loaded.target), loaded.prompt, options, engine.semantics, n)
    samples, audit.error, audit.seconds = timed(engine.sample, loaded, options, n, seed)
    if samples is not None:
        audit.checks += check_samples(samples, "engine", laws)
    if control and samples is not None:
        controls, error, audit.control_seconds = timed(engine.control, loaded, options, n, seed + 10**6)
        if error:
            audit.error = f"the control raised {error}"
        else:
            audit.checks += check_samples(controls, "control", laws)
    return audit
