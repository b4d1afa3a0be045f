"""A trained early-exit self-draft: the target's first layers, one trained layer, a truncated head.

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)).

On a CPU a draft pays only when it is nearly free (c = t_draft / t_target small) and often right
(alpha large). A 135M-parameter target such as SmolLM2 leaves little room: a separate small model
trained from scratch in minutes agrees with it rarely, and the target's own output layer
(49152 x 576, 113 MB of float32 read per token) costs as much as a dozen decoder layers. The draft
here (after Kangaroo, Liu et al. 2024, "double early exiting", and LayerSkip, Elhoushi et al. 2024):

* **shared layers**: the target's token embedding and its first ``shared_layers`` decoder layers,
  used as they are (no copy, nothing stored);
* **adapter**: one decoder layer of the target's shape plus a final RMSNorm, trained by distillation
  to map the shallow hidden state to the target's next-token law (the only weights in the file);
* **truncated head**: the target's own output rows for the ``kept`` token ids only (the most probable
  tokens of the training answers); every other id gets logit -inf, so q(x) = 0 outside ``kept``.

q stays a law over the target's full vocabulary, so speculative sampling needs no change: a token
outside ``kept`` is never drafted, and its probability p(x) reaches the output through the residual
max(p - q, 0) (Leviathan et al. 2023, Thm 1), so the truncation costs acceptance, never correctness.
The draft is a ``LlamaForCausalLM`` whose ``lm_head`` is a ``TruncatedHead``, so the decoder, the
timing code and Hugging Face ``generate(assistant_model=...)`` all run it unchanged.

The file is a safetensors file: ``adapter.*`` (one decoder layer), ``norm.weight`` and ``kept`` (int64
ids), with the shape in its metadata. Training: ``scripts/train_smollm2_draft.py``.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import torch

from specmath.lm.models import leading_layers

__all__ = ["TruncatedHead", "build_early_exit_draft", "load_early_exit_draft", "save_adapter", "adapter_model",
           "default_draft_file"]


def default_draft_file() -> Path:
    """Where the repository keeps the SmolLM2 draft trained by ``scripts/train_smollm2_draft.py``."""
    return Path(__file__).resolve().parent / "smollm2_draft" / "early_exit.safetensors"


class TruncatedHead(torch.nn.Module):
    """Logits for ``kept`` ids from the given output rows; -inf elsewhere: logits[..., kept] = h W^T."""

    def __init__(self, weight: torch.Tensor, kept: torch.Tensor, vocab_size: int) -> None:
        super().__init__()
        if weight.shape[0] != kept.numel():
            raise ValueError(f"head has {weight.shape[0]} rows for {kept.numel()} kept ids")
        if kept.numel() == 0 or int(kept.min()) < 0 or int(kept.max()) >= vocab_size:
            raise ValueError(f"kept ids must be non-empty and lie in [0, {vocab_size}), got {kept.numel()} ids "
                             f"in [{int(kept.min()) if kept.numel() else '-'}, {int(kept.max()) if kept.numel() else '-'}]")
        if torch.unique(kept).numel() != kept.numel():
            raise ValueError("kept ids repeat: each token may have one logit")
        self.weight = torch.nn.Parameter(weight, requires_grad=False)
        self.register_buffer("kept", kept.long(), persistent=False)
        self.out_features = vocab_size  # what models.model_vocab_size reads: q has the target's width
        self.packed = None

    def pack_weights(self) -> None:
        """Use a oneDNN-packed copy of the kept rows (``packed_linear``; a bfloat16 CPU draft)."""
        from specmath.lm.packed_linear import PackedLinear

        self.packed = PackedLinear(self.weight)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        # (..., len(kept)) logits of the kept ids
        small = torch.nn.functional.linear(hidden, self.weight) if self.packed is None else self.packed(hidden)
        full = small.new_full((*small.shape[:-1], self.out_features), float("-inf"))
        return full.index_copy_(-1, self.kept, small)


def _decoder_config(target: torch.nn.Module, n_layers: int):
    config = copy.deepcopy(target.config)
    config.num_hidden_layers = n_layers
    if getattr(config, "layer_types", None):
        config.layer_types = [config.layer_types[0]] * n_layers
    return config


def adapter_model(target: torch.nn.Module) -> torch.nn.Module:
    """A one-layer ``LlamaModel`` of the target's shape (for training on precomputed hidden states).

    Called with ``inputs_embeds`` = the target's hidden state after its shared layers, it applies the
    adapter layer and the final norm; its weights start as the target's last layer and final norm.
    """
    inner, _ = leading_layers(target, 1, "shared_layers", "the early-exit draft")
    config = _decoder_config(target, 1)
    config.vocab_size, config.pad_token_id = 1, None  # the adapter never embeds tokens: it reads hidden states
    model = type(inner)(config)
    model.layers[0].load_state_dict(inner.layers[-1].state_dict())
    model.norm.load_state_dict(inner.norm.state_dict())
    return model.float()


def save_adapter(path: str | Path, adapter: torch.nn.Module, kept: torch.Tensor, shared_layers: int, info: dict) -> None:
    """Write the adapter layer, its norm and the kept ids as one safetensors file (no pickle)."""
    from safetensors.torch import save_file

    tensors = {f"adapter.{k}": v.detach().float().contiguous() for k, v in adapter.layers[0].state_dict().items()}
    tensors["norm.weight"] = adapter.norm.weight.detach().float().contiguous()
    tensors["kept"] = kept.long().contiguous()
    meta = {"shared_layers": str(shared_layers), "info": json.dumps(info)}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(path), metadata=meta)


def build_early_exit_draft(target: torch.nn.Module, shared_layers: int, adapter_state: dict[str, torch.Tensor],
                           norm_weight: torch.Tensor, kept: torch.Tensor) -> torch.nn.Module:
    """The draft ``LlamaForCausalLM``: target layers [0, shared_layers), the adapter, norm, truncated head."""
    inner, layers = leading_layers(target, shared_layers, "shared_layers", "the early-exit draft")
    head = target.get_output_embeddings()
    vocab = int(head.weight.shape[0])
    ref = next(target.parameters())
    config = _decoder_config(target, shared_layers + 1)
    with torch.device("meta"):
        draft = type(target)(config)
    adapter = type(layers[0])(config, layer_idx=shared_layers)
    adapter.load_state_dict(adapter_state)
    norm = copy.deepcopy(inner.norm)
    norm.weight = torch.nn.Parameter(norm_weight.clone())
    draft.model.embed_tokens = inner.embed_tokens
    draft.model.layers = torch.nn.ModuleList([*layers[:shared_layers], adapter.to(ref.device, ref.dtype)])
    draft.model.norm = norm.to(ref.device, ref.dtype)
    if hasattr(inner, "rotary_emb"):
        draft.model.rotary_emb = inner.rotary_emb
    kept = kept.to(ref.device)
    draft.lm_head = TruncatedHead(head.weight.detach()[kept].clone(), kept, vocab)
    return draft.eval().requires_grad_(False)


def load_early_exit_draft(target: torch.nn.Module, path: str | Path | None = None) -> torch.nn.Module:
    """The trained draft for ``target`` from a safetensors file (default: the one in the repository)."""
    from safetensors import safe_open

    path = Path(path) if path is not None else default_draft_file()
    if not path.is_file():
        raise ValueError(f"draft weights missing: {path} (run scripts/train_smollm2_draft.py)")
    with safe_open(str(path), framework="pt") as f:
        meta = f.metadata() or {}
        tensors = {k: f.get_tensor(k) for k in f.keys()}
    if "shared_layers" not in meta or "kept" not in tensors or "norm.weight" not in tensors:
        raise ValueError(f"{path} is not an early-exit draft file (needs shared_layers metadata, kept and norm.weight)")
    width = target.config.hidden_size
    if tensors["norm.weight"].shape != (width,):
        raise ValueError(f"{path} was trained for hidden size {tensors['norm.weight'].shape[0]}, the target has {width}")
    adapter = {k.removeprefix("adapter."): v for k, v in tensors.items() if k.startswith("adapter.")}
    return build_early_exit_draft(target, int(meta["shared_layers"]), adapter, tensors["norm.weight"], tensors["kept"])
