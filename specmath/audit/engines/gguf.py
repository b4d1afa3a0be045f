"""The GGUF engines built by ``make engines``: llama.cpp's speculative loop and node-llama-cpp's predictors.

Notation: p = target law, q = draft law, gamma = draft tokens per round (4 for every engine here).

Each engine is a subprocess speaking the JSON-lines protocol (``specmath.audit.engines.jsonl``), started on
a target GGUF file (and a draft GGUF for the draft-model engines; by default the target itself, so q is
p's own greedy or sampled draft):

* ``llama-cpp-draft``: ``engines/build/specmath-llama-engine`` (``engines/llama_cpp``): llama.cpp's
  ``common_speculative`` with ``--spec-type draft-simple`` and ``common_sampler_sample_and_accept_n``;
* ``llama-cpp-ngram``: the same with ``--spec-type ngram-simple`` (n-gram 2, 4 drafted tokens);
* ``node-llama-cpp-lookup``: ``engines/node/specmath_node_engine.mjs``, ``InputLookupTokenPredictor``;
* ``node-llama-cpp-draft``: the same with ``DraftSequenceTokenPredictor`` (its defaults but 4 tokens).

All run on one CPU thread. The llama.cpp engine takes lossy controls (``specmath.audit.controls``); the
node engines cannot be made lossy from outside, so their control runs in the llama.cpp driver of the same
kind (draft model or n-gram), told to count penalties as node-llama-cpp does.

``SPECMATH_ENGINES_DIR`` names another ``engines`` folder (default: the one beside the package).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from specmath.audit.engines.jsonl import JsonLinesEngine
from specmath.validation import InvalidArgument, check_choice

__all__ = ["GGUF_ENGINES", "GgufEngine", "engines_dir", "gguf_engine_named"]


def engines_dir() -> Path:
    """The ``engines`` folder: ``$SPECMATH_ENGINES_DIR``, or the one beside the specmath package."""
    return Path(os.environ.get("SPECMATH_ENGINES_DIR") or Path(__file__).resolve().parents[3] / "engines")


@dataclass(frozen=True)
class GgufEngine:
    """A built engine: how to start it on a GGUF target (and draft), what its control runs in."""

    name: str
    description: str
    runtime: str  # "llama" (the C++ driver) or "node"
    arguments: tuple[str, ...]
    draft_model: bool  # drafts with a model (else by lookup in the text so far)
    control_engine: str  # the engine whose controls serve this one

    def unavailable(self) -> str | None:
        """Why it cannot start here (not built, no node), or None."""
        root = engines_dir()
        if self.runtime == "llama":
            if not (root / "build" / "specmath-llama-engine").exists():
                return f"the llama.cpp driver is not built: run `make engines` ({root}/build.sh)"
        else:
            if shutil.which("node") is None:
                return "node is not installed (node >= 20 runs node-llama-cpp)"
            if not (root / "node" / "node_modules" / "node-llama-cpp").exists():
                return f"node-llama-cpp is not installed: run `make engines` ({root}/build.sh)"
        return None

    def command(self, gguf: str | Path, draft: str | Path | None = None, threads: int = 1) -> list[str]:
        """The command line that starts the engine on ``gguf`` (``draft``: the draft model's GGUF)."""
        root = engines_dir()
        draft = str(draft or gguf)
        arguments = [draft if a == "{draft}" else a for a in self.arguments]
        if self.runtime == "llama":
            return [str(root / "build" / "specmath-llama-engine"), "-m", str(gguf), *arguments, "-t", str(threads),
                    "-c", "1024", "-b", "512", "--log-disable"]
        return ["node", str(root / "node" / "specmath_node_engine.mjs"), "--model", str(gguf), *arguments,
                "--threads", str(threads)]

    def start(self, gguf: str | Path, draft: str | Path | None = None) -> JsonLinesEngine:
        """The running engine (InvalidArgument when it is not built or the GGUF is missing)."""
        reason = self.unavailable()
        if reason:
            raise InvalidArgument(f"{self.name}: {reason}")
        for path in (gguf, draft):
            if path is not None and not Path(path).is_file():
                raise InvalidArgument(f"{self.name}: no GGUF file at {path}")
        return JsonLinesEngine(self.command(gguf, draft), name=self.name)


GGUF_ENGINES = {e.name: e for e in (
    GgufEngine("llama-cpp-draft", "llama.cpp common_speculative draft-simple (draft model, 4 tokens), sample-match",
               "llama", ("--spec-type", "draft-simple", "-md", "{draft}", "--spec-draft-n-max", "4",
                         "--spec-draft-n-min", "0"), True, "llama-cpp-draft"),
    GgufEngine("llama-cpp-ngram", "llama.cpp common_speculative ngram-simple (n-gram 2, 4 tokens), sample-match",
               "llama", ("--spec-type", "ngram-simple", "--spec-ngram-simple-size-n", "2",
                         "--spec-ngram-simple-size-m", "4"), False, "llama-cpp-ngram"),
    GgufEngine("node-llama-cpp-lookup", "node-llama-cpp 3.22.1 InputLookupTokenPredictor (4 tokens)",
               "node", ("--predictor", "lookup", "--gamma", "4"), False, "llama-cpp-ngram"),
    GgufEngine("node-llama-cpp-draft", "node-llama-cpp 3.22.1 DraftSequenceTokenPredictor (draft model, 4 tokens)",
               "node", ("--predictor", "draft", "--draft", "{draft}", "--gamma", "4"), True, "llama-cpp-draft"),
)}


def gguf_engine_named(name: str) -> GgufEngine:
    """The built-in GGUF engine called ``name``; UnknownName otherwise."""
    return GGUF_ENGINES[check_choice(name, "GGUF engine", GGUF_ENGINES)]
