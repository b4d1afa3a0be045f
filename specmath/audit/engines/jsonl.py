"""An engine in any language, as a subprocess speaking JSON lines (``--engine-cmd "CMD"``).

The protocol (``specmath.audit.engines.protocol``): one request per line on the engine's stdin, one reply
per line on its stdout; ``info`` first, then ``generate`` and ``logits``. The engine's stderr goes to a
file (its logs never mix with the replies); when it dies or breaks the protocol, the error names the
request and shows the end of that file. Logits travel as base64 of little-endian float32 (a 49152-token
row is 192 KiB instead of a megabyte of decimal text).

Two factories of ``specmath.audit.engines.registry``: ``command_engine`` starts a registry entry's ``command`` template
on its target (a GGUF file, with its draft, or a model folder: llama.cpp's loop, node-llama-cpp, an engine in
its own venv), ``given_command_engine`` the command the user gives (``--engine-cmd``).
"""

from __future__ import annotations

import base64
import json
import shlex
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from specmath.audit.engines.protocol import EngineClient, EngineProtocolError, Generation, check_tokens, engine_failure
from specmath.audit.engines.registry import EngineEntry, EngineOpening
from specmath.audit.engines.semantics import EngineSemantics
from specmath.validation import InvalidArgument, check_integer

__all__ = ["JsonLinesEngine", "command_engine", "given_command_engine"]


class JsonLinesEngine(EngineClient):
    """A subprocess started from ``command`` (a string, split as a shell would, or an argument list)."""

    own_process = True

    def __init__(self, command: str | list[str], *, name: str | None = None, cwd: str | Path | None = None,
                 env: dict | None = None):
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not argv:
            raise InvalidArgument("--engine-cmd is empty: give the command that starts the engine")
        self._stderr = tempfile.TemporaryFile(mode="w+b")
        try:
            self._process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                                             cwd=cwd, env=env, text=True, bufsize=1)
        except OSError as exc:
            self._stderr.close()
            raise InvalidArgument(f"cannot start the engine {argv[0]!r}: {exc.strerror or exc}") from exc
        try:
            info = self.request({"op": "info"})
        except EngineProtocolError as exc:  # it never started: the command is the mistake, not a loss
            self.close()
            raise InvalidArgument(f"the engine {argv[0]!r} did not answer {{\"op\": \"info\"}}: {exc}") from exc
        self.info = info
        self.name = name or str(info.get("engine", argv[0]))
        self.version = str(info["engine"]) if info.get("engine") else None
        self.semantics = EngineSemantics.from_json({"name": self.name, **info})
        self.vocab_size = int(info["vocab_size"]) if info.get("vocab_size") else None
        self.has_logits = bool(info.get("logits"))
        self.has_controls = bool(info.get("controls"))
        self.has_plain = bool(info.get("plain", True))
        self.same_tokens_as_plain = bool(info.get("same_tokens_as_plain"))
        if "calls_per_request" in info:  # the engine's own batch size (vLLM: many samples per request)
            per = info["calls_per_request"]
            self.calls_per_request = None if per is None else int(per)
        self.has_batch = bool(info.get("batch"))
        if info.get("prompt_block") is not None:  # the engine's KV block of prompt tokens (vLLM's prefix caching)
            try:
                self.prompt_block = check_integer(info["prompt_block"], "the engine's info prompt_block", min_value=1)
            except InvalidArgument:
                self.close()
                raise
        self.lookup = info.get("drafter") == "lookup"

    def request(self, message: dict) -> dict:
        """Send one request, read one reply; EngineProtocolError when the engine dies, garbles or refuses."""
        op = message.get("op")
        if self._process.poll() is not None:
            raise EngineProtocolError(f"the engine has exited (status {self._process.returncode}){self._log_tail()}")
        try:
            self._process.stdin.write(json.dumps(message) + "\n")
            self._process.stdin.flush()
            line = self._process.stdout.readline()
        except (BrokenPipeError, OSError) as exc:
            try:  # it exited before it read the request: say so, as when it exits before it answers
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                raise EngineProtocolError(f"the engine's pipe broke on {op!r}: {exc}{self._log_tail()}") from exc
            raise EngineProtocolError(f"the engine exited on {op!r} (status {self._process.returncode})"
                                      f"{self._log_tail()}") from exc
        if not line:
            self._process.wait(timeout=10)
            raise EngineProtocolError(f"the engine exited on {op!r} (status {self._process.returncode}){self._log_tail()}")
        try:
            reply = json.loads(line)
        except json.JSONDecodeError as exc:
            raise EngineProtocolError(f"the engine's reply to {op!r} is not JSON: {line[:120]!r}") from exc
        if not isinstance(reply, dict):
            raise EngineProtocolError(f"the engine's reply to {op!r} is not a JSON object: {line[:120]!r}")
        if "error" in reply:  # refused, dead, or failed: the protocol's error kinds
            raise engine_failure(reply, repr(op))
        return reply

    def _generate(self, prompt, n, seed, max_new_tokens, options, speculative, control) -> Generation:
        message = {"op": "generate", "prompt": prompt, "n": n, "seed": seed, "max_new_tokens": max_new_tokens,
                   "options": options.to_json(), "speculative": speculative}
        if control is not None:
            message["control"] = control
        return _generation(self.request(message))

    def batch(self, requests: list[dict]) -> list[Generation]:
        """Several generate requests (``prompt``, ``n``, ``seed``, ``max_new_tokens``, ``options`` as
        ``SamplingOptions``, optional ``speculative`` and ``control``) run together (``{"op": "batch"}``): one
        Generation each, the batch's report (counters of the whole batch) on every one."""
        if not self.has_batch:
            raise InvalidArgument(f"{self.name} takes no batch of requests")
        messages = []
        for r in requests:
            self.semantics.check_supports(r["options"])
            messages.append({"prompt": list(r["prompt"]), "n": r["n"], "seed": r["seed"],
                             "max_new_tokens": r["max_new_tokens"], "options": r["options"].to_json(),
                             "speculative": r.get("speculative", True), "control": r.get("control")})
        reply = self.request({"op": "batch", "requests": messages})
        replies = reply.get("replies")
        if not isinstance(replies, list) or len(replies) != len(requests):
            raise EngineProtocolError(f"the engine's batch reply has no 'replies' list of {len(requests)}")
        report = {k: v for k, v in reply.items() if k != "replies"}
        out = []
        for r, one in zip(requests, replies, strict=True):
            g = _generation({**one, **report})
            g.tokens = check_tokens(g.tokens, r["n"], r["max_new_tokens"], self.vocab_size)
            out.append(g)
        return out

    def _logits(self, contexts):
        reply = self.request({"op": "logits", "contexts": [list(c) for c in contexts]})
        rows = reply.get("logits_b64")
        if not isinstance(rows, list) or len(rows) != len(contexts):
            raise EngineProtocolError("the engine's logits reply has no 'logits_b64' row per context")
        return np.stack([np.frombuffer(base64.b64decode(row), dtype="<f4") for row in rows])

    def _log_tail(self, chars: int = 600) -> str:
        self._stderr.seek(0)
        # on one line: the error is reported as one line
        text = " | ".join(self._stderr.read().decode(errors="replace").split("\n")).strip(" |")
        return f"; its stderr ends: ...{text[-chars:]}" if text else ""

    def close(self) -> None:
        if self._process.poll() is None:
            try:
                self._process.stdin.close()
            except OSError:  # it exited before the last request was flushed (BrokenPipeError): nothing to tell it
                pass
            try:
                self._process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._stderr.close()


def _generation(reply: dict) -> Generation:
    if "tokens" not in reply:
        raise EngineProtocolError("the engine's generate reply has no 'tokens'")
    report = {k: v for k, v in reply.items() if k not in ("tokens", "drafted", "accepted")}
    return Generation(reply["tokens"], reply.get("drafted"), reply.get("accepted"), report or None)


def _target_path(entry: EngineEntry, target) -> Path:
    """The file or folder an entry's command runs on (InvalidArgument when the target has none)."""
    if entry.target == "gguf":
        if target.gguf is None:
            raise InvalidArgument(f"{entry.name} runs GGUF files: give --target smollm2 or --target FILE.gguf")
        return target.gguf
    if entry.target == "folder":
        if target.folder is None:
            named = entry.folder_for(target.name)
            if named is None:
                raise InvalidArgument(f"{entry.name} runs a Hugging Face model folder: give --target FOLDER")
            return named[0]
        return target.folder
    raise InvalidArgument(f"{entry.name}: a command template runs a GGUF file or a model folder, not a {entry.target}")


def command_engine(entry: EngineEntry, opening: EngineOpening) -> JsonLinesEngine:
    """The running engine of a registry entry's ``command`` (InvalidArgument when it is not built, or its target
    or draft file is missing)."""
    path = _target_path(entry, opening.target)
    reason = entry.unavailable()
    if reason:
        raise InvalidArgument(f"{entry.name}: {reason}")
    gguf = entry.target == "gguf"
    draft = opening.draft  # a draft model's GGUF, or its folder (a folder engine's)
    named = entry.folder_for(opening.target.name) if entry.target == "folder" else None
    if draft is None and named is not None and opening.target.folder is None:
        draft = named[1]  # a named target's own draft folder
    for item in (path, draft):
        if item is not None and not (Path(item).is_file() if gguf else Path(item).is_dir()):
            raise InvalidArgument(f"{entry.name}: no {'GGUF file' if gguf else 'model folder'} at {item}")
    return JsonLinesEngine(entry.command_line(path, draft), name=entry.name)


def given_command_engine(entry: EngineEntry, opening: EngineOpening) -> JsonLinesEngine:
    """The registry's ``command`` engine: the subprocess ``--engine-cmd`` names, its semantics from its ``info``."""
    return JsonLinesEngine(opening.spec)
