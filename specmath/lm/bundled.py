"""The bundled draft/target pair: two character-level Llama models trained in this repository.

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)).

``load_bundled_pair()`` returns (target, draft, tokenizer), loaded offline from the safetensors files in
``specmath/lm/bundled/{target,draft}/`` (no pickle: ``use_safetensors=True``), or, where specmath was installed
from its wheel, from the ``specmath-models`` distribution (``specmath.lm.weight_files``). The target is a 32-layer
``LlamaForCausalLM``, the draft a 1-layer one distilled from it, so that one draft forward costs a small
fraction c of a target forward while the draft agrees with the target often (alpha); the speedup model
of Leviathan et al. (2023), (1 - alpha^(gamma+1)) / ((1 - alpha)(gamma c + 1)), then predicts > 2x.
Both share one 100-symbol character vocabulary (4 specials, '\\n', the 95 printable ASCII characters),
small enough that next-token histograms are readable. Corpus, sizes, the training command and the
measured c and alpha: ``specmath/lm/bundled/README.md``; the script: ``scripts/train_bundled_pair.py``.

References: Leviathan, Kalman, Matias 2023 (arXiv:2211.17192); Zhou et al. 2024, DistillSpec
(arXiv:2310.08461).
"""

from __future__ import annotations

from pathlib import Path

import torch

from specmath.lm.weight_files import find_weights

__all__ = ["bundled_dir", "load_bundled_pair", "WEIGHT_FILES"]

WEIGHT_FILES = ("target/model.safetensors", "draft/model.safetensors")


def bundled_dir() -> Path:
    """The folder holding ``target/``, ``draft/`` (each a Hugging Face model folder with its tokenizer).

    ``specmath/lm/bundled/`` in a clone, else the installed ``specmath-models``' copy; ValueError where neither is.
    """
    return find_weights("bundled", "the bundled pair's weights")


def load_bundled_pair(dtype: torch.dtype = torch.float32, device: str | torch.device = "cpu"):
    """(target, draft, tokenizer): the bundled pair in eval mode, gradients off, on ``device`` in ``dtype``.

    The weights are stored in float16 and converted to ``dtype`` on load; p and q share the tokenizer's
    vocabulary exactly (the same 100 ids), which is checked.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise ValueError(f"dtype must be a floating torch.dtype, got {dtype!r}")
    root = bundled_dir()
    for rel in WEIGHT_FILES:
        if not (root / rel).is_file():
            raise ValueError(f"bundled weights missing: {root / rel} (run scripts/train_bundled_pair.py)")
    models = []
    for name in ("target", "draft"):
        model = AutoModelForCausalLM.from_pretrained(root / name, dtype=dtype, use_safetensors=True)
        models.append(model.to(device).eval().requires_grad_(False))
    target, draft = models
    tokenizer = AutoTokenizer.from_pretrained(root / "target")
    sizes = {"tokenizer": len(tokenizer), "target": target.config.vocab_size, "draft": draft.config.vocab_size}
    if len(set(sizes.values())) != 1:
        raise ValueError(f"bundled pair vocabularies differ: {sizes}")
    return target, draft, tokenizer
