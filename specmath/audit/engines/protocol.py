"""One protocol for every engine under audit: a Python function, a subprocess, an endpoint, a pair's torch models.

Notation: p = target law, q = draft law, N = generate calls, M = new tokens per call.

**A Python function** (``specmath audit-generate module:function --target MODEL``)::

    def generate(prompt_ids: list[int], n: int, seed: int, **options) -> list[list[int]]

returns n token lists, each the first ``max_new_tokens`` new tokens of one independent generate call
(call i seeded from ``seed`` + i, say; the same arguments must give the same tokens). ``options`` are
``max_new_tokens`` and the sampling options that are on (``SamplingOptions.to_json``): ``temperature``,
``top_k``, ``top_p``, ``min_p``, ``logit_bias`` ([[token, bias], ...]), ``repetition_penalty``,
``presence_penalty``, ``frequency_penalty``, ``penalty_window``. End-of-sequence tokens are ordinary
tokens here: a call must not stop before ``max_new_tokens``. A function may carry attributes:
``semantics`` (a name of ``SEMANTICS`` or a dict as in ``info`` below; default: ``--semantics``) and
``plain`` (the same engine without speculation, same signature: it enables the pathwise check).

**A subprocess** (``--engine-cmd "CMD"``, any language): one JSON object per line on its stdin, one
reply per line on its stdout (``{"error": "..."}`` for a failed request; ``{"error": "...", "refused": true}`` for a
request the engine rejects, a validation error: REFUSED; ``{"error": "...", "engine_dead": true}`` when the engine
crashed and takes no more requests: ENGINE ERROR)::

    {"op": "info"} -> {"engine": "name and version", "vocab_size": V, "order": [stages],
                       "history": "prompt+generated" | "generated" | {penalty: ...}, "window": 64 | null,
                       "ignored": [tokens], "options": [names], "logits": bool,
                       "same_tokens_as_plain": bool, "controls": bool,
                       "calls_per_request": n | null, "drafter": "lookup" | "draft model", "batch": bool,
                       "prompt_block": b | null}
    {"op": "generate", "prompt": [ids], "n": N, "seed": S, "max_new_tokens": M, "options": {...},
     "speculative": true, "control": null} -> {"tokens": [[M ids], ...], "drafted": d, "accepted": a}
    {"op": "logits", "contexts": [[ids], ...]} -> {"logits_b64": [base64 of V little-endian float32]}

``calls_per_request`` (optional) is how many calls the engine takes in one request (None: all N at once);
``drafter`` says how it drafts (``lookup``: the audit chooses a prompt that a lookup drafts at); ``batch``: it
takes ``{"op": "batch", "requests": [generate requests]}`` and answers ``{"replies": [generate replies]}``, the
requests run together (one verify batch). ``prompt_block`` (optional): the engine computes a prompt's KV cache in
blocks of b tokens and shares only full blocks among a request's calls (vLLM's prefix caching), so each call
computes the prompt's tokens after its last full block again; the audit then chooses among prompts one token
longer than a multiple of b (``rows.block_prompts``). A generate reply may carry more (its spec-decode counters
before and after, its seconds): the audit keeps it in the request's record.

``logits`` (optional) are the raw next-token logits of the engine's own *non-speculative* forward: the
exact law is then computed from the engine's own model (a quantised engine is held to its quantised
model). ``"speculative": false`` runs the plain path (the pathwise check). ``"control"`` (optional) makes the
engine lossy on purpose, for a negative control: ``{"name": NAME}``, a control the engine names
(``specmath.audit.engines.registry.EngineControl``: the torch engines' residual drawn from p, HF's biased
verification), or an option row's bug at drafted rows (``specmath.audit.engines.rows.Control.protocol``:
``{"drafted": {option: value}, "stale_history": bool, "history": ..., "ignored": [...]}``).

**An endpoint** (``--endpoint URL``): an OpenAI-compatible ``/v1/completions`` server
(``specmath.audit.engines.endpoint``).

**A pair's torch models**: specmath's and Hugging Face's decoders (``specmath.audit.engines.torch_engines``),
clients of the same protocol in the same process.

``EngineClient`` is the Python side of all of them; replies are checked here (n lists of at least M ints
in [0, V)), and a reply that breaks the protocol is an ``EngineProtocolError``: reported as the
engine's error (ENGINE ERROR), never as a loss; a request the engine rejects is an ``EngineRefused`` (REFUSED), one
it died on an ``EngineDead`` (ENGINE ERROR, the engine takes no more requests). ``specmath.audit.engines.registry`` names the engines and how each is opened.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from specmath.audit.engines.registry import EngineEntry, EngineOpening
from specmath.audit.engines.semantics import EngineSemantics, semantics_named
from specmath.sampling_options import SamplingOptions
from specmath.validation import InvalidArgument

__all__ = ["EngineProtocolError", "EngineRefused", "EngineDead", "engine_failure", "Generation", "EngineClient", "CallableEngine", "load_function", "check_tokens",
           "function_engine"]


class EngineProtocolError(RuntimeError):
    """An engine's reply breaks the protocol (wrong shape, out-of-range token, a reported error).

    ``source``: which server failed, where an engine talks to more than one (``EndpointEngine``: ``SERVER``, the
    speculative one under audit, or ``PLAIN_SERVER``), so that a caller tells them apart without reading the message."""

    def __init__(self, message: str = "", source: str | None = None) -> None:
        super().__init__(message)
        self.source = source


class EngineRefused(EngineProtocolError):
    """The engine rejected the request before running it (a validation error): the verdict is REFUSED."""


class EngineDead(EngineProtocolError):
    """The engine crashed on the request and takes no more (vLLM's ``EngineDeadError``): ENGINE ERROR."""


def engine_failure(reply: dict, what: str) -> EngineProtocolError:
    """The exception of an error reply ``{"error": MESSAGE}`` (``"refused": true``: EngineRefused; ``"engine_dead":
    true``: EngineDead); ``what`` names the request."""
    if reply.get("refused"):
        return EngineRefused(f"the engine refused {what}: {reply['error']}")
    if reply.get("engine_dead"):
        return EngineDead(f"the engine died on {what}: {reply['error']}")
    return EngineProtocolError(f"the engine failed on {what}: {reply['error']}")


@dataclass
class Generation:
    """n token lists, and the engine's own count of drafted and accepted tokens when it gives one."""

    tokens: list[list[int]]
    drafted: int | None = None
    accepted: int | None = None
    #: what the engine reports of the request beside its tokens (its spec-decode counters before and after, its
    #: seconds), kept in the audit's record of the request
    report: dict | None = None


def check_tokens(tokens: object, n: int, max_new_tokens: int, vocab_size: int | None) -> list[list[int]]:
    """The first ``max_new_tokens`` of each of n token lists, or EngineProtocolError naming what is wrong."""
    if not isinstance(tokens, (list, tuple)) or len(tokens) != n:
        got = len(tokens) if isinstance(tokens, (list, tuple)) else type(tokens).__name__
        raise EngineProtocolError(f"the engine returned {got} token lists for n = {n}")
    out = []
    for i, row in enumerate(tokens):
        row = list(row) if isinstance(row, (list, tuple, np.ndarray)) else row
        if not isinstance(row, list) or len(row) < max_new_tokens:
            raise EngineProtocolError(f"call {i} returned {row!r:.80}, not a list of {max_new_tokens} tokens")
        row = row[:max_new_tokens]
        for t in row:
            if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or t < 0 or (vocab_size and t >= vocab_size):
                raise EngineProtocolError(f"call {i} returned token {t!r}, not an id in [0, {vocab_size or 'V'})")
        out.append([int(t) for t in row])
    return out


class EngineClient:
    """An engine under audit, whatever reaches it. Subclasses implement ``_generate`` (and ``_logits``)."""

    name = "engine"
    version: str | None = None  # what the engine says it is, for an ENGINE ERROR's report
    semantics: EngineSemantics
    vocab_size: int | None = None
    has_logits = False  # the engine gives its own non-speculative logits
    has_controls = False  # the engine takes a lossy ``control`` (a negative control of the same engine)
    has_plain = False  # the engine runs without speculation too (the pathwise check)
    same_tokens_as_plain = False  # it promises: speculative output == plain output for the same seed
    has_batch = False  # it runs several generate requests together (``JsonLinesEngine.batch``)
    lookup = False  # it says it drafts by lookup in the text so far (a JSON-lines engine's ``info["drafter"]``)
    own_process = False  # it runs in a process of its own: its requests can run beside another engine's
    #: generate calls the audit asks for in one request (a slow engine shows progress between them), None: all N in
    #: one. Splitting N into requests from seed, seed + 250, ... is the same N calls only for an engine that seeds call
    #: i from seed + i; one that seeds batch b from seed + b (specmath's batched decoder) takes all N at once.
    calls_per_request: int | None = 250
    #: the engine shares only full KV blocks of this many prompt tokens among a request's calls (None: it shares the
    #: whole prompt, or nothing): a prompt one token past a multiple of it costs each call one token of prefill
    prompt_block: int | None = None

    def generate(self, prompt: Sequence[int], n: int, seed: int, max_new_tokens: int, options: SamplingOptions, *,
                 speculative: bool = True, control: dict | None = None) -> Generation:
        """n independent generate calls on ``prompt`` (call i from seed + i), their first ``max_new_tokens``."""
        self.semantics.check_supports(options)
        if not speculative and not self.has_plain:
            raise InvalidArgument(f"{self.name} has no plain (non-speculative) path")
        if control is not None and not self.has_controls:
            raise InvalidArgument(f"{self.name} takes no lossy control")
        out = self._generate(list(prompt), n, seed, max_new_tokens, options, speculative, control)
        out.tokens = check_tokens(out.tokens, n, max_new_tokens, self.vocab_size)
        return out

    def logits(self, contexts: list[list[int]]) -> np.ndarray:
        """(len(contexts), V) float64 raw logits of the engine's non-speculative forward after each context."""
        if not self.has_logits:
            raise InvalidArgument(f"{self.name} does not give its logits: audit it against a --target model")
        rows = np.asarray(self._logits(contexts), dtype=np.float64)
        if rows.ndim != 2 or rows.shape[0] != len(contexts) or not np.isfinite(rows).any(axis=1).all():
            raise EngineProtocolError(f"the engine's logits have shape {rows.shape} for {len(contexts)} contexts")
        if np.isnan(rows).any() or np.isposinf(rows).any():
            raise EngineProtocolError("the engine's logits hold NaN or +inf")
        return rows

    def _generate(self, prompt, n, seed, max_new_tokens, options, speculative, control) -> Generation:
        raise NotImplementedError

    def _logits(self, contexts):
        raise NotImplementedError

    def close(self) -> None:
        """Release the engine (a subprocess is ended)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def load_function(spec: str) -> Callable:
    """``module:function`` -> the function (InvalidArgument naming what is missing)."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise InvalidArgument(f"an engine function is given as module:function, got {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise InvalidArgument(f"cannot import {module_name!r} for the engine {spec!r}: {exc}") from exc
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise InvalidArgument(f"{module_name} has no function {attr!r}")
    return fn


class CallableEngine(EngineClient):
    """A Python function ``generate(prompt_ids, n, seed, **options) -> list of n token lists``."""

    def __init__(self, fn: Callable | str, semantics: EngineSemantics | str = "hf", vocab_size: int | None = None):
        self.fn = load_function(fn) if isinstance(fn, str) else fn
        self.name = fn if isinstance(fn, str) else f"{getattr(self.fn, '__module__', '?')}:{self.fn.__name__}"
        declared = getattr(self.fn, "semantics", semantics)
        self.semantics = (semantics_named(declared) if isinstance(declared, str) else
                          declared if isinstance(declared, EngineSemantics) else EngineSemantics.from_json(declared))
        self.vocab_size = vocab_size
        self.plain = getattr(self.fn, "plain", None)
        self.has_plain = callable(self.plain)
        self.same_tokens_as_plain = bool(getattr(self.fn, "same_tokens_as_plain", False))
        parameters = inspect.signature(self.fn).parameters
        if len(parameters) < 3 and not any(p.kind == p.VAR_POSITIONAL for p in parameters.values()):
            raise InvalidArgument(f"{self.name} must take (prompt_ids, n, seed, **options)")

    def _generate(self, prompt, n, seed, max_new_tokens, options, speculative, control) -> Generation:
        fn = self.fn if speculative else self.plain
        return Generation(fn(prompt, n, seed, max_new_tokens=max_new_tokens, **options.to_json()))


def function_engine(entry: EngineEntry, opening: EngineOpening) -> CallableEngine:
    """The registry's ``function`` engine: the user's ``module:function``, its semantics its own or ``--semantics``
    (``entry.semantics`` by default), its tokens checked against the target's vocabulary."""
    return CallableEngine(opening.spec, opening.semantics or entry.semantics, vocab_size=opening.target.vocab_size)
