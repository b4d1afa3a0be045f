"""The name of a pair, read and checked without torch: ``bundled``, ``smollm2[:DRAFT]``, ``TARGET,DRAFT``, ``tiny``.

``parse_pair_name`` turns a name into a ``PairName`` or raises ``UnknownName`` (with "did you mean"),
``InvalidFile`` (a draft or table file that is missing or not a safetensors file) or ``InvalidArgument``,
so ``specmath bench`` reports a mistaken name at once, before it imports torch and loads models;
``specmath.lm.pairs.load_named_pair`` then loads what the parsed name says. The forms are
``specmath.choices.PAIR_FORMS``; the SmolLM2 drafts are described in ``specmath.lm.pairs``. ``tiny`` is the
pair of two random Llama models made in code (``specmath.lm.tiny_pair``) that the engine audit runs in CI.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from specmath.choices import BENCH_PAIRS, PAIR_FORMS, SMOLLM2_DRAFTS
from specmath.validation import InvalidArgument, InvalidFile, UnknownName, check_file, check_integer, did_you_mean

__all__ = ["PairName", "parse_pair_name", "check_device"]

#: the SmolLM2 drafts without their arguments (skipK takes K, the last three an optional =PATH)
SMOLLM2_DRAFT_KINDS = ("int8", "lookup", "skip", "trained", "ngram", "lookup+ngram")

#: decoder layers of SmolLM2-135M: a skipK draft keeps K of them, 1 <= K <= 29
SMOLLM2_LAYERS = 30

#: a Hugging Face hub name: "name" or "organisation/name"
HUB_NAME = re.compile(r"[A-Za-z0-9][\w.-]*(/[\w.-]+)?")

#: the devices a bench runs on: "cpu", "cuda" or "cuda:N"
DEVICE = re.compile(r"cpu|cuda(:\d+)?")


@dataclass(frozen=True)
class PairName:
    """A parsed pair name: which loader, and what it takes."""

    text: str  # the name as given
    kind: str  # "bundled", "smollm2", "hf" (two Hugging Face causal LMs) or "tiny"
    draft: str | None = None  # smollm2: one of SMOLLM2_DRAFT_KINDS; None: int8 on a CPU, lookup on CUDA
    layers: int | None = None  # smollm2 skipK: K, the target's leading layers the draft keeps
    path: Path | None = None  # smollm2 trained=PATH, ngram=PATH, lookup+ngram=PATH: the file to read
    models: tuple[str, str] | None = None  # hf: (target, draft), each a local folder or a hub name

    def check_device(self, device: str) -> None:
        """``InvalidArgument`` when this pair cannot run on ``device`` (torch's int8 kernels are CPU only)."""
        if self.draft == "int8" and not str(device).startswith("cpu"):
            raise InvalidArgument(f"pair {self.text!r}: the int8 draft runs on the CPU only (torch dynamic quantisation), "
                                  f"not on {device}; use smollm2:lookup or --device cpu")


def check_device(device: str, name: str = "device") -> str:
    """``device`` when it is cpu, cuda or cuda:N (whether CUDA is present is asked of torch later)."""
    if not isinstance(device, str) or not DEVICE.fullmatch(device):
        raise InvalidArgument(f"{name} must be cpu, cuda or cuda:N, got {device!r}")
    return device


def parse_pair_name(name: str) -> PairName:
    """The pair ``name`` names (``choices.PAIR_FORMS``), its files checked; a mistake is named at once."""
    if not isinstance(name, str) or not name.strip():
        raise InvalidArgument(f"a pair name must be one of {PAIR_FORMS}; got {name!r}")
    if name in ("bundled", "tiny"):
        return PairName(name, name)
    head, colon, draft = name.partition(":")
    if head == "smollm2":
        return _smollm2(name, draft) if colon else PairName(name, "smollm2")
    if name.count(",") == 1:
        target, draft_model = (part.strip() for part in name.split(","))
        return PairName(name, "hf", models=(_model_name(target, "target"), _model_name(draft_model, "draft")))
    near = did_you_mean(head, BENCH_PAIRS)
    hint = f" (did you mean {near!r}?)" if near else ""
    raise UnknownName(f"unknown pair {name!r}{hint}; choose from: {PAIR_FORMS}")


def _smollm2(name: str, draft: str) -> PairName:
    kind, equals, path = draft.partition("=")
    if kind.startswith("skip") and kind[4:].isdigit() and not equals:
        layers = check_integer(int(kind[4:]), "K in smollm2:skipK (the layers the draft keeps)",
                               min_value=1, max_value=SMOLLM2_LAYERS - 1)
        return PairName(name, "smollm2", "skip", layers=layers)
    if kind in ("int8", "lookup") and not equals:
        return PairName(name, "smollm2", kind)
    if kind in ("trained", "ngram", "lookup+ngram"):
        return PairName(name, "smollm2", kind, path=_safetensors_file(path, f"{kind} file") if equals else None)
    near = did_you_mean(kind, [k if k != "skip" else "skipK" for k in SMOLLM2_DRAFT_KINDS])
    hint = f" (did you mean {near!r}?)" if near else ""
    raise UnknownName(f"unknown SmolLM2 draft {draft!r}{hint}; choose from: {', '.join(SMOLLM2_DRAFTS)} (K: layers)")


def _model_name(text: str, role: str) -> str:
    """A local model folder, or something shaped like a hub name (whether the hub has it is asked when loading)."""
    path = Path(text).expanduser()
    if path.exists():
        if not path.is_dir():
            raise InvalidFile(f"{role} model {text!r} is a file; give a model folder or a hub name")
        return text
    if text.startswith((".", "/", "~")) or not HUB_NAME.fullmatch(text):
        raise InvalidFile(f"{role} model {text!r}: no such folder, and not a hub name (organisation/name)")
    return text


def _safetensors_file(path: str, what: str) -> Path:
    """An existing file that starts as a safetensors file does: 8 bytes of header length, then that much JSON."""
    file = check_file(path, what)
    with file.open("rb") as f:
        length = int.from_bytes(f.read(8), "little")
        header = f.read(length) if length <= file.stat().st_size - 8 else b""
    try:
        if not isinstance(json.loads(header), dict):
            raise ValueError
    except ValueError:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise InvalidFile(f"{what} {str(file)!r} is not a safetensors file (no JSON header at its start)") from None
    return file
