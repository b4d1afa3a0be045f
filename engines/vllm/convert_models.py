"""Write the folders vLLM loads: SmolLM2-135M-Instruct dequantised, and a draft made of its first layers.

Notation: p = target law (the full model), q = draft law (its first layers, then its own final norm and head).

    .venv-vllm/bin/python engines/vllm/convert_models.py GGUF OUT_DIR [--draft-layers 4]

* ``OUT_DIR/smollm2-135m-f32``: transformers dequantises the Q4_1 GGUF (the ``gguf`` package reads it) into a
  ``LlamaForCausalLM`` in float32, saved as safetensors with the tokenizer files beside it, so that vLLM and
  transformers load the very same weights (the audit's exact law is transformers' float32 forward of them).
* ``OUT_DIR/smollm2-135m-draft-L{k}-f32``: the same model cut to its first k decoder layers; it keeps the
  final norm and the (tied) head, so it scores the same vocabulary with the same tokenizer. vLLM's
  ``draft_model`` speculative method needs exactly that: a second causal LM of the same vocabulary.

Safetensors only (no pickle). A folder that already holds ``model.safetensors`` is left as it is.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, LlamaForCausalLM


def folder_size(path: Path) -> str:
    return f"{sum(f.stat().st_size for f in path.rglob('*') if f.is_file()) / 2**20:.0f} MiB"


def dequantise(gguf: Path) -> tuple[LlamaForCausalLM, object]:
    """(float32 LlamaForCausalLM, tokenizer) from the GGUF file, as transformers reads it."""
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    # a plain LlamaForCausalLM from a clean config: what the GGUF reader leaves in its config (its file name,
    # quantisation notes) is not for vLLM's config parser
    config = LlamaConfig(**{k: v for k, v in loaded.config.to_dict().items()
                            if k in LlamaConfig().to_dict() and not k.startswith("_")})
    config.architectures = ["LlamaForCausalLM"]
    config.dtype = "float32"
    model = LlamaForCausalLM(config).to(torch.float32).eval()
    missing, unexpected = model.load_state_dict(loaded.state_dict(), strict=False)
    # a tied head is one tensor under two names; anything else missing is a broken conversion
    if unexpected or [k for k in missing if k != "lm_head.weight"]:
        raise SystemExit(f"the GGUF's weights do not fit LlamaForCausalLM: missing {missing}, unexpected {unexpected}")
    model.tie_weights()
    return model, tokenizer


def first_layers(model: LlamaForCausalLM, k: int) -> LlamaForCausalLM:
    """A LlamaForCausalLM of the first k decoder layers of ``model``, its embedding, final norm and head."""
    config = LlamaConfig(**model.config.to_dict())
    config.num_hidden_layers = k
    draft = LlamaForCausalLM(config).to(torch.float32).eval()
    kept = {name: t for name, t in model.state_dict().items()
            if not name.startswith("model.layers.") or int(name.split(".")[2]) < k}
    draft.load_state_dict(kept, strict=True)
    draft.tie_weights()
    return draft


def save(model: LlamaForCausalLM, tokenizer, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    # the generation defaults transformers writes would be applied by vLLM as request defaults; none is wanted
    (out / "generation_config.json").write_text(json.dumps({"_from_model_config": True}) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gguf", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--draft-layers", type=int, default=4)
    args = parser.parse_args()
    target_dir = args.out / "smollm2-135m-f32"
    draft_dir = args.out / f"smollm2-135m-draft-L{args.draft_layers}-f32"
    todo = [d for d in (target_dir, draft_dir) if not (d / "model.safetensors").exists()]
    if not todo:
        print(f"models: already in {args.out}")
        return 0
    t = time.time()
    model, tokenizer = dequantise(args.gguf)
    print(f"dequantise {args.gguf.name}: {time.time() - t:.0f} s", flush=True)
    if target_dir in todo:
        t = time.time()
        save(model, tokenizer, target_dir)
        print(f"target {target_dir}: {folder_size(target_dir)}, {time.time() - t:.0f} s", flush=True)
    if draft_dir in todo:
        t = time.time()
        save(first_layers(model, args.draft_layers), tokenizer, draft_dir)
        print(f"draft {draft_dir} ({args.draft_layers} of {model.config.num_hidden_layers} layers): "
              f"{folder_size(draft_dir)}, {time.time() - t:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
