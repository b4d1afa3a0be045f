"""A Llama folder whose attention heads are too narrow for vLLM's CPU attention, rewritten with wider heads, same function.

Notation: d = the head dimension, d' = the padded one, theta = the rotary base.

vLLM 0.32's CPU attention takes head dimensions 32, 64, 80, ... only ("Unsupported CPU attention configuration:
head_dim=16"); the bundled character-level target has d = 16. Padding each head with zeros to d' keeps the
function: Llama's rotary embedding pairs dimension i with i + d/2 and turns that pair by position * theta^(-2i/d),
so dimension i < d/2 goes to i and i + d/2 to i + d'/2 (the new dimensions stay 0 in q, k and v, and o_proj
reads nothing from them), with theta' = theta^(d'/d) so that theta'^(-2i/d') = theta^(-2i/d); the scores
q.k / sqrt(d) are kept by scaling q by sqrt(d'/d). The weights are written as float32 safetensors (nothing
unpickled), the config and tokenizer files copied; the audit computes its exact law from transformers' forward
of the padded folder itself, so the padding never enters a verdict.

    .venv-vllm/bin/python engines/vllm/pad_heads.py SOURCE_FOLDER OUT_FOLDER [--head-dim 32]
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file


def pad_rows(w: torch.Tensor, heads: int, d: int, d2: int) -> torch.Tensor:
    """[heads * d, ...] -> [heads * d2, ...]: dimension i < d/2 of each head at i, i >= d/2 at i - d/2 + d2/2."""
    w = w.reshape(heads, d, *w.shape[1:])
    out = w.new_zeros(heads, d2, *w.shape[2:])
    out[:, : d // 2] = w[:, : d // 2]
    out[:, d2 // 2 : d2 // 2 + d // 2] = w[:, d // 2 :]
    return out.reshape(heads * d2, *w.shape[2:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--head-dim", type=int, default=32)
    args = parser.parse_args()
    config = json.loads((args.source / "config.json").read_text())
    d, d2 = int(config["head_dim"]), args.head_dim
    heads, kv_heads = int(config["num_attention_heads"]), int(config["num_key_value_heads"])
    weights = {k: v.float() for k, v in load_file(str(args.source / "model.safetensors")).items()}
    for name in list(weights):
        w = weights[name]
        if name.endswith("q_proj.weight"):
            weights[name] = pad_rows(w, heads, d, d2) * math.sqrt(d2 / d)
        elif name.endswith(("k_proj.weight", "v_proj.weight")):
            weights[name] = pad_rows(w, kv_heads, d, d2)
        elif name.endswith("o_proj.weight"):
            weights[name] = pad_rows(w.t(), heads, d, d2).t().contiguous()
    rope = config.get("rope_parameters") or {"rope_theta": config.get("rope_theta", 10000.0), "rope_type": "default"}
    config.update(head_dim=d2, dtype="float32",
                  rope_parameters={**rope, "rope_theta": float(rope["rope_theta"]) ** (d2 / d)})
    config.pop("rope_theta", None)
    args.out.mkdir(parents=True, exist_ok=True)
    save_file(weights, str(args.out / "model.safetensors"), metadata={"format": "pt"})
    (args.out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    for f in args.source.iterdir():
        if f.name.startswith(("tokenizer", "generation_config", "special_tokens")):
            shutil.copy(f, args.out / f.name)
    print(f"{args.out}: head_dim {d} -> {d2}, rope_theta -> {config['rope_parameters']['rope_theta']:g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
