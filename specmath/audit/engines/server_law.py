"""The target law from the server's own log-probabilities: an endpoint audit that needs no local weights.

Notation: p = target law, K = the log-probabilities a server returns per position, V = vocabulary size.

A team serving a 70B model on eight GPUs cannot run it in transformers on the auditing machine. vLLM returns,
for each generated position, the K most likely tokens and their log-probabilities (``logprobs: K``, at most
its ``--max-logprobs``, 20 by default), by default the *raw* ones (``logprobs_mode`` ``raw_logprobs``: the
model's log-softmax before penalties, temperature and truncation). A request's first token is not drafted where
its prompt is computed in full (where the prefix cache holds all its tokens but the last, vLLM drafts it too:
claim vllm-no-draft-before-first-token; so the endpoint salts these requests' cache where the server shares KV
blocks, ``EndpointEngine.top_logprobs``), so a one-token request at context c without a draft returns
log p(. | c) of the plain target, whatever the speculation. ``ServerLogprobs`` asks one such request per
audited context (the prompt, then the prompt and each likely first token) and turns the reply into a row of
V logits:

    z(x) = log p(x | c)                        for the K returned tokens,
    z(x) = log(R / (V - K)),  R = 1 - sum_K p  for every other token (the rest of the mass, spread evenly).

What the row determines exactly, and so what it is used for (``check_options``):

* T = 1 with no truncation: p on the K tokens, and R on the rest, which the test pools into one cell;
* top-k with k <= K, at any temperature: the law is softmax(z / T) over the k kept tokens, all among the K;
* top-p at T = 1, when the nucleus ends inside the K tokens (checked per context: ``nucleus_inside``).

Anything else (a temperature without top-k: its normaliser needs every logit; penalties and logit bias on
tokens outside the K; min-p) is refused with one line. The cost in power: the G-test pools rare tokens into
one cell anyway; here every token outside the K is in that cell whatever its expected count, so a loss that
only moves mass among those tokens is not seen, and the test's detectable TV is that of the pooled cells. The
rest mass R of each context is kept (``rest``) so a report can say how much law the bin holds (the vLLM table
gives it per served row: docs/measurements/vllm-2026-12-01.md).

Each request's spec-decode counters (``/metrics``) are read around it: ``drafted`` must stay 0, the check
that no drafting happened before a first token (``drafted_during_law``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from specmath.audit.engines.protocol import EngineProtocolError
from specmath.sampling_options import SamplingOptions
from specmath.validation import InvalidArgument

__all__ = ["ServerLogprobs", "check_options", "logits_row", "run_server_law_audit"]


def check_options(options: SamplingOptions, top: int) -> None:
    """InvalidArgument unless the server's top-``top`` log-probabilities determine the law under ``options``."""
    if options.penalised or options.logit_bias or options.min_p:
        raise InvalidArgument("the law from the server's logprobs covers temperature with top-k <= K, and top-p at "
                              "T = 1: penalties, logit bias and min-p need every logit (give --target MODEL)")
    if options.top_k is not None:
        if options.top_k > top:
            raise InvalidArgument(f"top-k {options.top_k} > the {top} log-probabilities the server returns")
        return
    if options.temperature != 1:
        raise InvalidArgument("at T != 1 without top-k the law's normaliser needs every logit: give --target MODEL")


def logits_row(top: dict[int, float], vocab_size: int) -> tuple[np.ndarray, float]:
    """(V,) logits from {token: log p} of the K returned tokens, the rest R spread evenly; and R."""
    if not top:
        raise EngineProtocolError("the server returned no log-probabilities")
    mass = math.fsum(math.exp(v) for v in top.values())
    rest = max(0.0, 1.0 - mass)
    others = vocab_size - len(top)
    row = np.full(vocab_size, -np.inf if rest <= 0 or others == 0 else math.log(rest / others))
    for token, value in top.items():
        if not 0 <= token < vocab_size:
            raise EngineProtocolError(f"the server returned token {token}, outside [0, {vocab_size})")
        row[token] = value
    return row, rest


def nucleus_inside(top: dict[int, float], top_p: float) -> bool:
    """The smallest set of most likely tokens holding top_p of p ends among the K returned."""
    return math.fsum(math.exp(v) for v in top.values()) >= top_p


class ServerLogprobs:
    """``Logits`` (contexts -> (len, V) logits) from an endpoint's one-token requests with ``logprobs=K``."""

    def __init__(self, endpoint, vocab_size: int, options: SamplingOptions, top: int = 20):
        check_options(options, top)
        self.endpoint, self.vocab_size, self.options, self.top = endpoint, vocab_size, options, top
        self.rest: dict[tuple[int, ...], float] = {}
        self.drafted_during_law = 0
        self._cache: dict[tuple[int, ...], np.ndarray] = {}

    def __call__(self, contexts: list[list[int]]) -> np.ndarray:
        return np.stack([self._row(list(c)) for c in contexts])

    def _row(self, context: list[int]) -> np.ndarray:
        key = tuple(context)
        if key not in self._cache:
            before = self.endpoint.counters()
            top = self.endpoint.top_logprobs(context, self.top)
            after = self.endpoint.counters()
            if before is not None and after is not None:
                self.drafted_during_law += after.get("drafted", 0) - before.get("drafted", 0)
            opts = self.options
            if opts.top_k is None and opts.top_p is not None and opts.top_p < 1 and not nucleus_inside(top, opts.top_p):
                raise InvalidArgument(f"top-p {opts.top_p}: the nucleus after this context reaches beyond the server's "
                                      f"{self.top} log-probabilities (give --target MODEL)")
            self._cache[key], self.rest[key] = logits_row(top, self.vocab_size)
        return self._cache[key]

    def report(self, contexts: Sequence[Sequence[int]] = ()) -> dict:
        """What the law rests on: K, the contexts asked, their rest mass, the drafting seen during the law."""
        rests = list(self.rest.values())
        return {"source": "the server's logprobs", "top": self.top, "contexts": len(self.rest),
                "rest_mass_max": max(rests) if rests else None, "rest_mass_prompt":
                self.rest.get(tuple(contexts[0])) if contexts else None, "drafted_during_law": self.drafted_during_law}


def run_server_law_audit(engine, row, *, n: int, seed: int = 0, vocab_size: int, top: int = 20,
                         prompt_text: str | None = None, lookup: bool = False, control=None):
    """The audit of an endpoint against the law from its own logprobs (no local weights): the row's options, at
    ``prompt_text`` (the server's tokenizer) or at the candidate prompt where the row's control moves the law most
    (``specmath.audit.engines.rows.choose_prompt``, on the server's rows); the law's report in the audit's notes."""
    from specmath.audit.engines.rows import candidate_texts, choose_prompt
    from specmath.audit.engines.runner import AuditPlan, run_engine_audit

    law = ServerLogprobs(engine, vocab_size, row.options, top=top)
    if prompt_text is not None:
        prompt, options = engine.tokenize(prompt_text), row.options
    else:
        candidates = [engine.tokenize(t) for t in candidate_texts(row)]
        prompt, options, _ = choose_prompt(law, candidates, row, engine.semantics, lookup=lookup,
                                           min_length=8 if lookup else 1)
    law.options = options
    plan = AuditPlan(prompt, options, n, seed, label=row.name)
    audit = run_engine_audit(engine, "the server's logprobs", plan, reference=law, control=control)
    report = law.report([prompt])
    audit.notes.append(f"law from the server's top-{top} logprobs: {report}")
    if report["drafted_during_law"]:
        audit.notes.append(f"{report['drafted_during_law']} tokens were drafted during one-token requests: a first "
                           "token was drafted, the law's premise does not hold")
    return audit, law
