"""A GGUF model dequantised once and kept as safetensors, so that a later load takes seconds, not half a minute.

transformers reads a GGUF file through the ``gguf`` package, and for SmolLM2-135M-Instruct (Q4_1) that costs
about 30 CPU-seconds on one core, of which dequantising the weights is 2.5: it parses the file's metadata twice
(once for the config, once for the weights; the 49152-token vocabulary and its merges field by field) and
rebuilds the tensor-name map of the architecture for every one of the 272 tensors (transformers 5.x,
``get_gguf_hf_weights_map``). The float32 model it returns is written once, beside its config and tokenizer
files, into ``<cache>/<entry>/``; every later load reads that folder (safetensors, no pickle) in 1-2 s.

* cache folder: ``$SPECMATH_CACHE_DIR`` where set (``off``: no cache), else ``$XDG_CACHE_HOME/specmath``,
  else ``~/.cache/specmath``. An entry of SmolLM2-135M is 538 MB (float32; the tied head stored once).
* entry: named by the GGUF file's name, size and modification time, the transformers version and ``FORMAT``
  (this layout's version): another file, a changed file or another transformers gets an entry of its own, so
  a stale entry is never read.
* writes go to a temporary folder beside the entry, renamed into place when complete: a process never reads
  a half-written entry, and of two processes writing the same entry at once the second rename fails and its
  copy is removed.
* a process that finds no entry takes a lock on it (``.<entry>.lock`` beside it, ``flock``; released when the
  process ends, however it ends) before it reads the GGUF, and looks again once it holds it: of several
  processes loading the same model at once (pytest's workers, parallel audits) one reads the GGUF and the
  others wait for its entry instead of spending the same 30 CPU-seconds each.
* a cache that cannot be written (a read-only home, a full disk) is no error: the model loaded from the GGUF
  is returned as before, and the next load tries again.

The weights are the bytes transformers dequantised (safetensors stores them as they are), so a model loaded
from the cache computes exactly what the one loaded from the GGUF computes (tests/lm/test_lm_smollm2.py). Only
their metadata differ: the load that writes the entry returns the model as transformers read it (its config
naming the GGUF file and its quantisation), every later one the plain copy (config without them).
"""

from __future__ import annotations

import contextlib
import copy
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import torch

__all__ = ["CACHE_ENV", "FORMAT", "cache_root", "entry_for", "load_dequantised"]

#: the environment variable naming the cache folder (``off``: no cache)
CACHE_ENV = "SPECMATH_CACHE_DIR"
#: the layout of an entry: config.json, model.safetensors and the tokenizer's files (save_pretrained)
FORMAT = 1


def cache_root() -> Path | None:
    """The cache folder: ``$SPECMATH_CACHE_DIR``, ``$XDG_CACHE_HOME/specmath`` or ``~/.cache/specmath``; None if off."""
    value = os.environ.get(CACHE_ENV)
    if value is not None:
        return None if value.strip().lower() in ("", "off") else Path(value).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "specmath"


def entry_for(gguf: Path, root: Path) -> Path:
    """The entry of ``gguf``: its name, size and modification time, transformers' version and ``FORMAT``."""
    import transformers

    stat = gguf.stat()
    return root / f"{gguf.stem}-{stat.st_size}-{stat.st_mtime_ns}-transformers{transformers.__version__}-f{FORMAT}"


def _from_gguf(gguf: Path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    return model, tokenizer


def _from_entry(entry: Path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(entry))
    model = AutoModelForCausalLM.from_pretrained(str(entry), dtype=torch.float32, use_safetensors=True)
    return model, tokenizer


def _write(entry: Path, model, tokenizer) -> None:
    """The entry: the model's config without the quantisation note transformers' GGUF reader leaves in it (with
    it, ``save_pretrained`` refuses the model and ``from_pretrained`` would look for a GGUF file), its weights
    (``safetensors.torch.save_model``: a tied head is one tensor under two names, stored once), its generation
    defaults and the tokenizer's files."""
    from safetensors.torch import save_model

    config = copy.deepcopy(model.config)
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.architectures = [type(model).__name__]
    entry.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{entry.name}.", dir=entry.parent))
    try:
        config.save_pretrained(str(partial))
        model.generation_config.save_pretrained(str(partial))
        save_model(model, str(partial / "model.safetensors"), metadata={"format": "pt"})
        tokenizer.save_pretrained(str(partial))
        os.replace(partial, entry)  # atomic; fails if another process put the entry there first
    finally:
        shutil.rmtree(partial, ignore_errors=True)


@contextlib.contextmanager
def _writer_lock(entry: Path) -> Iterator[None]:
    """Held while one process reads the GGUF and writes ``entry``; no lock where the folder cannot be written or
    the platform has no ``fcntl`` (then two processes may both read the GGUF, as without a lock: no error)."""
    try:
        import fcntl

        entry.parent.mkdir(parents=True, exist_ok=True)
        handle = open(entry.parent / f".{entry.name}.lock", "a")
    except (ImportError, OSError):
        yield
        return
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)
        except OSError:  # a file system without locks: proceed unlocked
            pass
        yield  # closing the file releases the lock


def load_dequantised(gguf: Path, cache: Path | None):
    """(model in float32, tokenizer) of the GGUF file ``gguf``: from its entry in ``cache``, else from the file
    (and then into ``cache``); ``cache`` None: from the file, nothing written (``cache_root()`` is the default)."""
    if cache is None:
        return _from_gguf(gguf)
    entry = entry_for(gguf, cache)
    if (entry / "config.json").is_file():
        return _from_entry(entry)
    with _writer_lock(entry):
        if (entry / "config.json").is_file():  # written by the process that held the lock before us
            return _from_entry(entry)
        model, tokenizer = _from_gguf(gguf)
        try:
            _write(entry, model, tokenizer)
        except OSError:  # not writable, full, or written meanwhile by another process: load from the GGUF next time
            pass
    return model, tokenizer
