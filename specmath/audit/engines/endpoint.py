"""An engine behind an OpenAI-compatible completions endpoint (``--endpoint URL``): vLLM, SGLang, llama-server.

Notation: p = target law, N = generate calls, M = new tokens per call.

Each generate call is one POST to ``URL/v1/completions`` (``URL`` may end in ``/completions`` already)::

    {"model": MODEL, "prompt": [token ids], "max_tokens": M, "n": 1, "seed": S + i, "ignore_eos": true,
     "temperature": T, "top_k": K, "top_p": P, "min_p": P, "logit_bias": {"id": bias},
     "repetition_penalty": r, "repeat_penalty": r, "repeat_last_n": w, "presence_penalty": a, "frequency_penalty": f,
     "logprobs": 1, "return_token_ids": true, "return_tokens_as_token_ids": true}

(the truncations always, switched off as 0, 1.0 and 0.0 where not asked for: llama-server's defaults would cut
at top-k 40, top-p 0.95 and min-p 0.05; the penalties only when on; ``repeat_penalty`` and ``repeat_last_n`` are
llama-server's names). The token
ids are read from whichever field the server fills: ``choices[0].token_ids`` (vLLM ``return_token_ids``),
``choices[0].logprobs.content[j].id`` (llama-server), or ``choices[0].logprobs.tokens`` as ``token_id:ID``
(vLLM ``return_tokens_as_token_ids``). One request per sample, each with its own seed: a server's
``n`` > 1 under one seed need not give independent samples, so it is not relied on.

The endpoint gives no logits here: the exact law comes from ``--target``, the model the server serves
(the same weights: a quantised server is then measured together with its quantisation), and the engine's
semantics from ``--semantics`` (vLLM's order by default). No plain path, no controls: the pathwise check and
the control need an engine that runs them. A request the server rejects with HTTP 400 or 422 (a validation error:
vLLM refuses min_p and logit_bias with speculative decoding so) is the engine's refusal, REFUSED; any other
failure is its error, ENGINE ERROR.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from specmath.audit.engines.protocol import EngineClient, EngineProtocolError, EngineRefused, Generation
from specmath.audit.engines.registry import EngineEntry, EngineOpening
from specmath.audit.engines.semantics import EngineSemantics, semantics_named
from specmath.sampling_options import SamplingOptions
from specmath.validation import InvalidArgument

__all__ = ["EndpointEngine", "completion_request", "completion_tokens", "endpoint_engine"]

#: the HTTP statuses of a request the server validated and rejected: the verdict is REFUSED, not ENGINE ERROR
_REJECTED = (400, 422)


def completion_request(prompt: list[int], seed: int, max_new_tokens: int, options: SamplingOptions,
                       model: str) -> dict:
    """The body of one completions request (the fields above)."""
    body = {"model": model, "prompt": prompt, "max_tokens": max_new_tokens, "n": 1, "seed": seed, "ignore_eos": True,
            "temperature": options.temperature, "logprobs": 1, "return_token_ids": True,
            "return_tokens_as_token_ids": True}
    body["top_k"] = options.top_k or 0
    body["top_p"] = 1.0 if options.top_p is None else options.top_p
    body["min_p"] = options.min_p or 0.0
    for name in ("presence_penalty", "frequency_penalty"):
        if getattr(options, name) is not None:
            body[name] = getattr(options, name)
    if options.repetition_penalty is not None:
        body["repetition_penalty"] = body["repeat_penalty"] = options.repetition_penalty
    if options.penalty_window is not None:
        body["repeat_last_n"] = options.penalty_window
    if options.logit_bias:
        body["logit_bias"] = {str(token): bias for token, bias in options.logit_bias}
    return body


def completion_tokens(reply: dict) -> list[int]:
    """The generated token ids of a completions reply's first choice (EngineProtocolError when absent)."""
    choices = reply.get("choices") if isinstance(reply, dict) else None
    if not choices:
        raise EngineProtocolError(f"the endpoint's reply has no choices: {json.dumps(reply)[:200]}")
    choice = choices[0]
    if isinstance(choice.get("token_ids"), list):
        return choice["token_ids"]
    logprobs = choice.get("logprobs") or {}
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if isinstance(content, list) and all(isinstance(t, dict) and "id" in t for t in content):
        return [t["id"] for t in content]
    tokens = logprobs.get("tokens") if isinstance(logprobs, dict) else None
    if isinstance(tokens, list) and all(isinstance(t, str) and t.startswith("token_id:") for t in tokens):
        return [int(t.partition(":")[2]) for t in tokens]
    raise EngineProtocolError("the endpoint returned no token ids (vLLM: return_token_ids; llama-server: logprobs); "
                              f"its first choice: {json.dumps(choice)[:200]}")


class EndpointEngine(EngineClient):
    """An OpenAI-compatible completions endpoint serving the target model."""

    def __init__(self, url: str, *, model: str = "default", semantics: EngineSemantics | str = "vllm",
                 vocab_size: int | None = None, timeout: float = 120.0):
        if not url.startswith(("http://", "https://")):
            raise InvalidArgument(f"--endpoint must be an http(s) URL, got {url!r}")
        url = url.rstrip("/")
        self.url = url if url.endswith("/completions") else url + ("/completions" if url.endswith("/v1") else
                                                                    "/v1/completions")
        self.name = f"endpoint {self.url}"
        self.model = model
        self.semantics = semantics_named(semantics) if isinstance(semantics, str) else semantics
        self.vocab_size = vocab_size
        self.timeout = timeout

    def check_reachable(self) -> None:
        """InvalidArgument when the URL serves no completions (a mistake in it, no server, a wrong --model): one
        request of one token, before any audit runs."""
        try:
            self._post({"model": self.model, "prompt": [0], "max_tokens": 1})
        except EngineProtocolError as exc:
            raise InvalidArgument(f"--endpoint {self.url} serves no completions: {exc}") from exc

    def _post(self, body: dict) -> dict:
        request = urllib.request.Request(self.url, data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")[:300]
            # 400 (vLLM's validation errors, e.g. min_p with speculative decoding) and 422: the request is rejected
            kind = EngineRefused if exc.code in _REJECTED else EngineProtocolError
            raise kind(f"the endpoint answered HTTP {exc.code}: {' '.join(detail.split())}") from exc
        except (urllib.error.URLError, OSError) as exc:
            raise EngineProtocolError(f"cannot reach the endpoint {self.url}: {getattr(exc, 'reason', exc)}") from exc
        except json.JSONDecodeError as exc:
            raise EngineProtocolError(f"the endpoint's reply is not JSON: {exc}") from exc

    def _generate(self, prompt, n, seed, max_new_tokens, options, speculative, control) -> Generation:
        return Generation([completion_tokens(self._post(completion_request(prompt, seed + i, max_new_tokens, options,
                                                                           self.model)))
                           for i in range(n)])


def endpoint_engine(entry: EngineEntry, opening: EngineOpening) -> EndpointEngine:
    """The registry's ``endpoint`` engine: ``--endpoint URL`` serving ``--target``, its semantics ``--semantics``
    (``entry.semantics`` by default), checked to serve completions before any audit runs."""
    engine = EndpointEngine(opening.spec, model=opening.model, semantics=opening.semantics or entry.semantics,
                            vocab_size=opening.target.vocab_size)
    engine.check_reachable()
    return engine
