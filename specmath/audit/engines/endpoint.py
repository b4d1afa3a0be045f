"""An engine behind an OpenAI-compatible completions endpoint (``--endpoint URL``): vLLM, SGLang, llama-server.

Notation: p = target law, N = generate calls, M = new tokens per call.

Each generate call is one POST to ``URL/v1/completions`` (``URL`` may end in ``/completions`` already)::

    {"model": MODEL, "prompt": [token ids], "max_tokens": M, "n": 1, "seed": S + i, "ignore_eos": true,
     "temperature": T, "top_k": K, "top_p": P, "min_p": P, "logit_bias": {"id": bias},
     "repetition_penalty": r, "repeat_penalty": r, "repeat_last_n": w, "presence_penalty": a, "frequency_penalty": f,
     "logprobs": 1, "return_token_ids": true, "return_tokens_as_token_ids": true}

(the truncations always, switched off as 0, 1.0 and 0.0 where not asked for: llama-server's defaults would cut
at top-k 40, top-p 0.95 and min-p 0.05; the penalties only when on; ``repeat_penalty`` and ``repeat_last_n`` are
llama-server's names; ``logprobs`` only where the server is not known to be vLLM, since llama-server returns
the ids only with it, and vLLM, which returns them through ``return_token_ids``, took 16-32% longer a sample
with it: 31.0-34.8 s against 26.3-26.7 s for n = 2000 samples of 2 tokens, SmolLM2 with ngram, 2026-12-07). The token
ids are read from whichever field the server fills: ``choices[i].token_ids`` (vLLM ``return_token_ids``),
``choices[i].logprobs.content[j].id`` (llama-server), or ``choices[i].logprobs.tokens`` as ``token_id:ID``
(vLLM ``return_tokens_as_token_ids``), the choices in their ``index`` order.

**Samples per request.** A server's ``n`` > 1 under one seed need not give independent samples, so by default
(``samples_per_request`` 1) each sample is one request with its own seed. vLLM's ``n`` is relied on
(``samples_per_request`` > 1, the default for ``--semantics vllm``): vLLM splits a request of n samples and seed S
into n child requests, child i seeded S + i, each with its own generator (``vllm/v1/engine/parallel_sampling.py``),
and returns them as choice i; so choice i of the request (n, S) is the request (1, S + i), the protocol's "call i
from seed + i", and the n samples are independent. It is checked, not assumed: ``seed_mapping_check`` compares a
request's first tokens with those of the n = 1 requests seeded S + i (at a prompt whose first token is not drafted,
it is reproducible even where the drafted rows are not), and the test against a real vLLM server runs it.

**Speculation counters.** Where the server has ``/metrics`` (vLLM: ``vllm:spec_decode_num_draft_tokens_total``,
``..._accepted_tokens_total``), they are read before and after each request: the request's ``drafted`` and
``accepted`` (a row that drafted nothing is not a pass), and the snapshots in its record. A deployment behind a
load balancer shows the metrics of the replica that answered ``/metrics``, not necessarily of the one that
sampled: give ``metrics_url`` of one replica (and send the audit to that replica) to count them.

**The KV block.** vLLM shares a prompt's *full* KV blocks among a request's n children (prefix caching), so each
child computes the prompt's tokens after its last full block again. Its ``/metrics`` carries its cache
configuration as labels of ``vllm:cache_config_info`` (``block_size``, ``prefix_match_unit``,
``enable_prefix_caching``): ``prompt_block`` reads them once, and the audit then chooses a prompt one token past a
full block (``rows.block_prompts``), as for the offline engine. None where the server has no such metric or
caching is off.

**Not one machine.** Nothing here assumes one: the URL may name any host behind any proxy, ``model`` is the name
the deployment serves, ``api_key`` (``$SPECMATH_API_KEY`` by default) goes in an ``Authorization: Bearer`` header,
``timeout`` bounds every request (a request of n = 500 samples of 2 tokens on a busy deployment takes a while).

**A plain path.** ``plain_url`` names the same model served without speculation (a second server): a request
with ``speculative=False`` goes there (``has_plain``), so the pathwise check and the seeds row compare the
speculative server with its own reference (``specmath audit-generate --endpoint URL --plain-endpoint PLAIN_URL
--pathwise N``). Without it the endpoint has no plain path. A failure of the plain server names it ("the plain
endpoint URL answered HTTP 500"); its own log, where specmath started it, is where its cause is read.

**A batch.** A server has no batch request: ``batch`` sends its requests concurrently, one thread and one POST each
(a request of n samples is one POST under vLLM's n), all to one server, and returns their replies in request
order. Which of them share a step is the server's choice (vLLM's scheduler), not the audit's; each reply records
when its POST was sent and answered, so a record shows whether the requests were in flight together.

The endpoint gives no logits here: the exact law comes from ``--target``, the model the server serves
(the same weights: a quantised server is then measured together with its quantisation), and the engine's
semantics from ``--semantics`` (vLLM's order by default). No controls: a deployment takes no lossy control, so a
row's control runs in an engine that does (the measured table: the offline engine of the same configuration). A
request the server rejects with HTTP 400 or 422 (a validation error: vLLM refuses min_p and logit_bias with
speculative decoding so) is the engine's refusal, REFUSED; any other failure is its error, ENGINE ERROR.
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor

from specmath.audit.engines.protocol import (
    EngineClient,
    EngineDead,
    EngineProtocolError,
    EngineRefused,
    Generation,
    check_tokens,
)
from specmath.audit.engines.registry import EngineEntry, EngineOpening
from specmath.audit.engines.semantics import EngineSemantics, semantics_named
from specmath.sampling_options import SamplingOptions
from specmath.validation import InvalidArgument

__all__ = ["EndpointEngine", "completion_request", "completion_tokens", "completion_samples", "metric_values",
           "cache_block", "completions_url", "endpoint_engine", "SPEC_METRICS", "SERVER", "PLAIN_SERVER"]

#: vLLM's spec-decode counters on /metrics: drafted and accepted tokens
SPEC_METRICS = {"drafted": "vllm:spec_decode_num_draft_tokens_total",
                "accepted": "vllm:spec_decode_num_accepted_tokens_total",
                "drafts": "vllm:spec_decode_num_drafts_total"}
#: samples per request by semantics: vLLM's n is relied on (the module docstring), others get one per request
SAMPLES_PER_REQUEST = {"vllm": 500}

#: the HTTP statuses of a request the server validated and rejected: the verdict is REFUSED, not ENGINE ERROR
_REJECTED = (400, 422)


def completion_request(prompt: list[int], seed: int, max_new_tokens: int, options: SamplingOptions,
                       model: str, n: int = 1, logprobs: bool = True) -> dict:
    """The body of one completions request (the fields above), for n samples from ``seed``; ``logprobs`` False
    leaves the log-probabilities out (a server that returns the ids without them)."""
    body = {"model": model, "prompt": prompt, "max_tokens": max_new_tokens, "n": n, "seed": seed, "ignore_eos": True,
            "temperature": options.temperature, "return_token_ids": True, "return_tokens_as_token_ids": True}
    if logprobs:
        body["logprobs"] = 1
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
    return completion_samples(reply, 1)[0]


def completion_samples(reply: dict, n: int) -> list[list[int]]:
    """The generated token ids of the n choices of a reply, in ``index`` order (EngineProtocolError when absent)."""
    choices = reply.get("choices") if isinstance(reply, dict) else None
    if not choices:
        raise EngineProtocolError(f"the endpoint's reply has no choices: {json.dumps(reply)[:200]}")
    if len(choices) != n:
        raise EngineProtocolError(f"the endpoint returned {len(choices)} choices for n = {n}")
    ordered = sorted(choices, key=lambda c: c.get("index", 0))
    if [c.get("index", i) for i, c in enumerate(ordered)] != list(range(n)):
        raise EngineProtocolError("the endpoint's choices are not indexed 0 .. n - 1")
    return [_choice_tokens(c) for c in ordered]


def metric_values(text: str, names: dict[str, str]) -> dict[str, float]:
    """{key: the sum of metric ``names[key]`` over its label sets} from Prometheus text (0 where absent)."""
    wanted = {v: k for k, v in names.items()}
    out = dict.fromkeys(names, 0.0)
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name in wanted:
            out[wanted[name]] += float(line.rsplit(" ", 1)[1])
    return out


#: one ``key="value"`` label of a Prometheus sample (a value may hold escaped quotes)
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def cache_block(text: str) -> int | None:
    """The prompt tokens a prefix-cache hit is counted in, from vLLM's ``vllm:cache_config_info`` labels in Prometheus
    text: ``prefix_match_unit`` where set, else ``block_size``; None where the metric is absent, prefix caching is
    off, or the labels name no positive whole number (so the audit keeps its ordinary prompt choice)."""
    for line in text.splitlines():
        if not line.startswith("vllm:cache_config_info{"):
            continue
        labels = dict(_LABEL.findall(line.split("{", 1)[1].rsplit("}", 1)[0]))
        if labels.get("enable_prefix_caching") != "True":
            return None
        for key in ("prefix_match_unit", "block_size"):
            if labels.get(key, "").isdigit() and int(labels[key]) > 0:
                return int(labels[key])
        return None
    return None


def _choice_tokens(choice: dict) -> list[int]:
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


def check_endpoint_url(url: str, name: str = "--endpoint") -> str:
    """``url`` if it is an http(s) URL (checked by the command line before torch, and by the engine), else
    InvalidArgument naming the argument ``name``."""
    if not url.startswith(("http://", "https://")):
        raise InvalidArgument(f"{name} must be an http(s) URL, got {url!r}")
    return url


def completions_url(url: str, name: str = "--endpoint") -> str:
    """``URL/v1/completions`` of a server's URL (``URL``, ``URL/v1`` or the completions URL itself)."""
    url = check_endpoint_url(url, name).rstrip("/")
    return url if url.endswith("/completions") else url + ("/completions" if url.endswith("/v1") else
                                                           "/v1/completions")


def _server_base(url: str) -> str:
    """The server's root of its completions URL (where /metrics, /version and /tokenize are)."""
    return url.rsplit("/v1/", 1)[0] if "/v1/" in url else url.rsplit("/", 1)[0]


_UNASKED = object()  # a value not read yet (None is an answer: the server names no block)

#: ``EngineProtocolError.source`` of a failure: the speculative server under audit, or the plain one (its reference)
SERVER, PLAIN_SERVER = "endpoint", "plain endpoint"


class EndpointEngine(EngineClient):
    """An OpenAI-compatible completions endpoint serving the target model."""

    has_batch = True  # concurrent requests, one POST each: the server decides which share a step
    # the server is a process of its own: a row's control, in an engine of its own process (the offline engine of
    # the same configuration), samples beside the server's requests, and the row takes the longer of the two
    own_process = True

    def __init__(self, url: str, *, model: str = "default", semantics: EngineSemantics | str = "vllm",
                 vocab_size: int | None = None, timeout: float = 600.0, samples_per_request: int | None = None,
                 api_key: str | None = None, metrics_url: str | None = None, plain_url: str | None = None):
        self.url = completions_url(url)
        #: the same model served without speculation: the plain path (``speculative=False``), None: no plain path
        self.plain_url = completions_url(plain_url, "plain_url") if plain_url is not None else None
        self.has_plain = self.plain_url is not None
        self.name = f"endpoint {self.url}"
        self.model = model
        self.semantics = semantics_named(semantics) if isinstance(semantics, str) else semantics
        self.vocab_size = vocab_size
        self.timeout = timeout
        per = samples_per_request or SAMPLES_PER_REQUEST.get(self.semantics.name, 1)
        self.samples_per_request = per
        self.calls_per_request = per  # the audit's requests: one POST of n = per samples each
        self.api_key = api_key if api_key is not None else os.environ.get("SPECMATH_API_KEY")
        self.metrics_url = metrics_url or _server_base(self.url) + "/metrics"
        self.plain_metrics_url = _server_base(self.plain_url) + "/metrics" if self.plain_url else None
        self._metrics_seen: dict[str, bool] = {}  # by /metrics URL; absent: not asked yet; False: no /metrics there
        self._version: str | None = None
        self._version_asked = False
        self._prompt_block: int | None | object = _UNASKED

    @property
    def version(self) -> str | None:
        """What the server says it is, for an ENGINE ERROR's report and the form of its requests: vLLM's
        ``GET /version`` ("vLLM 0.32.0 at URL"), asked once; None where the server has no such route (the verdict
        then names the URL alone, and the requests ask for logprobs, where llama-server returns the ids)."""
        if not self._version_asked:
            self._version_asked = True
            base = self.metrics_url.rsplit("/", 1)[0]
            try:
                with urllib.request.urlopen(urllib.request.Request(base + "/version", headers=self._headers()),
                                            timeout=min(self.timeout, 10)) as response:
                    found = json.loads(response.read()).get("version")
            except (urllib.error.URLError, OSError, ValueError, AttributeError):
                found = None
            self._version = f"vLLM {found} at {self.url}" if isinstance(found, str) and found else None
        return self._version

    def check_reachable(self) -> None:
        """InvalidArgument when the URL, or the plain URL where one is given, serves no completions (a mistake in it,
        no server, a wrong --model): one request of one token to each, before any audit runs."""
        for url, flag in ((self.url, "--endpoint"), (self.plain_url, "--plain-endpoint")):
            if url is None:
                continue
            try:
                self._post({"model": self.model, "prompt": [0], "max_tokens": 1}, url)
            except EngineProtocolError as exc:
                raise InvalidArgument(f"{flag} {url} serves no completions: {exc}") from exc

    def _headers(self) -> dict:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def counters(self, speculative: bool = True) -> dict | None:
        """The spec-decode counters (``SPEC_METRICS``) of the speculative server (``speculative=False``: of the plain
        one, where they stay 0), or None where it has no /metrics."""
        url = self.metrics_url if speculative else self.plain_metrics_url
        text = None if url is None else self._metrics_text(url)
        return None if text is None else metric_values(text, SPEC_METRICS)

    def _metrics_text(self, url: str) -> str | None:
        """The Prometheus text at ``url``, or None where there is none (remembered: it is not asked again)."""
        if self._metrics_seen.get(url) is False:
            return None
        request = urllib.request.Request(url, headers=self._headers())
        try:
            with urllib.request.urlopen(request, timeout=min(self.timeout, 60)) as response:
                text = response.read().decode(errors="replace")
        except (urllib.error.URLError, OSError):
            self._metrics_seen[url] = False
            return None
        self._metrics_seen[url] = True
        return text

    @property
    def prompt_block(self) -> int | None:
        """The KV block of prompt tokens the server's prefix cache shares among a request's n children
        (``cache_block`` of its ``/metrics``, read once), None where it says none."""
        if self._prompt_block is _UNASKED:
            text = self._metrics_text(self.metrics_url)
            self._prompt_block = None if text is None else cache_block(text)
        return self._prompt_block

    def top_logprobs(self, context: list[int], top: int) -> dict[int, float]:
        """{token: log p(token | context)} of the ``top`` most likely first tokens: one one-token request with
        ``logprobs`` (vLLM's raw log-probabilities of the plain target). Where the server shares KV blocks
        (``prompt_block``) the request carries a ``cache_salt`` of its own, so that its prompt is computed in full:
        vLLM drafts at a first token whose prompt it finds cached all but its last token."""
        body = {"model": self.model, "prompt": context, "max_tokens": 1, "n": 1, "temperature": 1.0,
                "logprobs": top, "return_tokens_as_token_ids": True, "ignore_eos": True}
        if self.prompt_block is not None:
            body["cache_salt"] = f"specmath-law-{uuid.uuid4().hex}"
        reply = self._post(body)
        try:
            row = reply["choices"][0]["logprobs"]["top_logprobs"][0]
        except (KeyError, IndexError, TypeError) as exc:
            raise EngineProtocolError(f"the endpoint returned no top_logprobs: {json.dumps(reply)[:200]}") from exc
        out = {}
        for key, value in row.items():
            if not (isinstance(key, str) and key.startswith("token_id:")):
                raise EngineProtocolError(f"a top_logprobs key is {key!r}, not token_id:ID (return_tokens_as_token_ids)")
            out[int(key.partition(":")[2])] = float(value)
        return out

    def tokenize(self, text: str) -> list[int]:
        """The ids of ``text`` by the server's own tokenizer (vLLM's ``/tokenize``, no special tokens)."""
        base = self.url.rsplit("/v1/", 1)[0]
        reply = self._post({"model": self.model, "prompt": text, "add_special_tokens": False}, url=base + "/tokenize")
        tokens = reply.get("tokens") if isinstance(reply, dict) else None
        if not isinstance(tokens, list) or not tokens:
            raise EngineProtocolError(f"the server's /tokenize returned no tokens for {text!r}")
        return [int(t) for t in tokens]

    def _post(self, body: dict, url: str | None = None) -> dict:
        url = url or self.url
        # a failure names the server it came from: the plain one (the pathwise reference) is another process
        plain = url == self.plain_url and url != self.url
        who = f"the plain endpoint {url}" if plain else "the endpoint"
        server = PLAIN_SERVER if plain else SERVER
        request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=self._headers())
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            detail = " ".join(exc.read().decode(errors="replace")[:300].split())
            # 400 / 422: the server rejected the request (vLLM: a validation error), REFUSED; 5xx: it failed on it
            kind = EngineRefused if exc.code in _REJECTED else EngineDead if exc.code >= 500 else EngineProtocolError
            raise kind(f"{who} answered HTTP {exc.code}: {detail}", source=server) from exc
        except (urllib.error.URLError, OSError) as exc:
            target = who if plain else f"the endpoint {url}"
            raise EngineProtocolError(f"cannot reach {target}: {getattr(exc, 'reason', exc)}", source=server) from exc
        except json.JSONDecodeError as exc:
            raise EngineProtocolError(f"{who}'s reply is not JSON: {exc}", source=server) from exc

    def _samples(self, url: str, prompt, n, seed, max_new_tokens, options) -> list[list[int]]:
        """n samples from the server at ``url``: one POST of n (choice i is the request (1, seed + i)) where its n is
        relied on, else n POSTs seeded seed + i."""
        if self.samples_per_request > 1:
            return completion_samples(self._post(self._request(prompt, seed, max_new_tokens, options, n), url), n)
        return [completion_tokens(self._post(self._request(prompt, seed + i, max_new_tokens, options), url))
                for i in range(n)]

    def _request(self, prompt, seed, max_new_tokens, options, n: int = 1) -> dict:
        """``completion_request`` for this server: no logprobs where it answers vLLM's ``/version`` (``version``),
        which returns the ids without them."""
        return completion_request(prompt, seed, max_new_tokens, options, self.model, n=n,
                                  logprobs=self.version is None)

    def _counted(self, tokens, before: dict | None, after: dict | None, **report) -> Generation:
        """A Generation with the spec-decode counters' change from ``before`` to ``after`` (None: no /metrics)."""
        if before is None or after is None:
            return Generation(tokens, report={"counters": None, "n_per_post": self.samples_per_request, **report})
        delta = {k: int(after[k] - before[k]) for k in SPEC_METRICS}
        return Generation(tokens, delta["drafted"], delta["accepted"],
                          {"drafts": delta["drafts"], "counters": {"before": before, "after": after},
                           "n_per_post": self.samples_per_request, **report})

    def _generate(self, prompt, n, seed, max_new_tokens, options, speculative, control) -> Generation:
        _ = self.version  # asked while the server lives: a request that kills it leaves the report its version
        url = self.url if speculative else self.plain_url
        before = self.counters(speculative)
        tokens = self._samples(url, prompt, n, seed, max_new_tokens, options)
        return self._counted(tokens, before, self.counters(speculative),
                             **({} if speculative else {"server": "plain"}))

    def batch(self, requests: list[dict]) -> list[Generation]:
        """Several generate requests (``prompt``, ``n``, ``seed``, ``max_new_tokens``, ``options`` as
        ``SamplingOptions``, optional ``speculative`` and ``control``: ``JsonLinesEngine.batch``'s shape) sent
        concurrently, a thread and a POST each, all to one server (``"speculative": false``: ``plain_url``). One
        Generation per request, in request order; each carries the whole batch's counters (read before the first
        POST and after the last reply) and its own ``sent`` and ``answered`` times in seconds from the batch's start.
        Which requests share a step is the server's choice: concurrent requests are what a batch is to a server."""
        if not requests:
            raise InvalidArgument("a batch needs at least one request")
        controlled = [k for k, r in enumerate(requests) if r.get("control") is not None]
        if controlled:
            raise InvalidArgument(f"{self.name} takes no lossy control: request {controlled[0]} of the batch carries "
                                  f"control {json.dumps(requests[controlled[0]]['control'])}; run a served row's "
                                  "control in an engine that takes one (the offline engine of the same configuration)")
        paths = {r.get("speculative", True) is not False for r in requests}
        if len(paths) != 1:
            raise InvalidArgument("a served batch goes to one server: give its requests one 'speculative' (all true: "
                                  "the speculative server, all false: plain_url)")
        speculative = paths.pop()
        if not speculative and not self.has_plain:
            raise InvalidArgument(f"{self.name} has no plain (non-speculative) path: give plain_url, the same model "
                                  "served without speculation")
        for r in requests:
            self.semantics.check_supports(r["options"])
        url = self.url if speculative else self.plain_url
        _ = self.version
        start = time.perf_counter()

        def one(r: dict) -> tuple[list[list[int]], float, float]:
            sent = time.perf_counter() - start
            tokens = self._samples(url, list(r["prompt"]), r["n"], r["seed"], r["max_new_tokens"], r["options"])
            return tokens, sent, time.perf_counter() - start

        before = self.counters(speculative)
        # a thread per request: each POST is in flight while the others are, so the server can batch them
        with ThreadPoolExecutor(max_workers=len(requests)) as pool:
            futures = [pool.submit(one, r) for r in requests]
        done = [f.result() for f in futures]  # the first failure in request order is the batch's
        after = self.counters(speculative)
        out = []
        for r, (tokens, sent, answered) in zip(requests, done, strict=True):
            g = self._counted(tokens, before, after, sent=round(sent, 4), answered=round(answered, 4),
                              **({} if speculative else {"server": "plain"}))
            g.tokens = check_tokens(g.tokens, r["n"], r["max_new_tokens"], self.vocab_size)
            out.append(g)
        return out

    def seed_mapping_check(self, prompt: list[int], options: SamplingOptions, seed: int, n: int = 8) -> dict:
        """Choice i of the request (n, seed) against the request (1, seed + i), on the first token:
        {"n", "seed", "agree": bool, "first_tokens", "alone"}. Give a prompt whose first token vLLM does not draft
        (not one token past a full KV block, ``prompt_block``): a drafted row need not reproduce under its seed."""
        many = completion_samples(self._post(self._request(prompt, seed, 1, options, n)), n)
        alone = [completion_tokens(self._post(self._request(prompt, seed + i, 1, options)))
                 for i in range(n)]
        return {"n": n, "seed": seed, "agree": [t[0] for t in many] == [t[0] for t in alone],
                "first_tokens": [t[0] for t in many], "alone": [t[0] for t in alone]}


def endpoint_engine(entry: EngineEntry, opening: EngineOpening) -> EndpointEngine:
    """The registry's ``endpoint`` engine: ``--endpoint URL`` serving ``--target``, its semantics ``--semantics``
    (``entry.semantics`` by default), its plain path ``--plain-endpoint`` where given, both checked to serve
    completions before any audit runs."""
    engine = EndpointEngine(opening.spec, model=opening.model, semantics=opening.semantics or entry.semantics,
                            vocab_size=opening.target.vocab_size if opening.target is not None else None,
                            samples_per_request=opening.samples_per_request, timeout=opening.timeout,
                            plain_url=opening.plain_url)
    engine.check_reachable()
    return engine
