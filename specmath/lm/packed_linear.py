"""Linear layers with their weights packed once for oneDNN: verification nearly free on a CPU.

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)).

Speculative decoding pays when a target pass over gamma + 1 tokens costs about one pass over one
token, k(gamma) = t(gamma + 1) / t(1) ~ 1 (Leviathan et al. 2023 assume it). On this project's CPU
(2 cores with AVX-512 and AMX) stock ``torch.nn.functional.linear`` breaks the premise: a float32
GEMM with 2-9 rows runs far below the rate of one row, and SmolLM2's k(4) is about 1.5. In bfloat16,
oneDNN runs the product on the AMX tiles, whose cost hardly depends on the number of rows up to 16;
``torch.nn.functional.linear`` then still reorders the weight into oneDNN's blocked layout on every
call. ``pack_linears`` does that reorder once (``torch.ops.mkldnn._reorder_linear_weight``, the op
PyTorch's own CPU compiler, Inductor, uses for frozen weights) and calls
``torch.ops.mkldnn._linear_pointwise`` on the packed weight: y = x W^T + b, the same product, so a
packed model defines its own p (bfloat16 rounding may differ from the unpacked model's in the last
bits, as any change of summation order does); plain and speculative decoding then run the same
packed model, which is what makes their comparison fair.

``pack_linears(model)`` replaces every ``torch.nn.Linear`` of a bfloat16 CPU model in place and
returns how many it replaced; ``packing_available()`` says whether this torch and CPU support it.
"""

from __future__ import annotations

import torch

__all__ = ["PackedLinear", "pack_linears", "packing_available"]


def packing_available() -> bool:
    """True where torch has oneDNN with bfloat16 support on this CPU (AVX-512 BF16 or AMX)."""
    mkldnn = torch.backends.mkldnn
    return bool(mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported())


class PackedLinear(torch.nn.Module):
    """y = x W^T + b with W reordered once into oneDNN's layout (bfloat16, CPU, inference only)."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None = None) -> None:
        super().__init__()
        weight = weight.detach()
        if weight.dtype != torch.bfloat16 or weight.device.type != "cpu" or weight.dim() != 2:
            raise ValueError(f"PackedLinear packs a 2-d bfloat16 weight on the CPU, got {tuple(weight.shape)} "
                             f"{weight.dtype} on {weight.device}")
        self.out_features, self.in_features = weight.shape
        # the packing batch size is only a hint for oneDNN's layout choice; 1 = decoding
        self.register_buffer("packed", torch.ops.mkldnn._reorder_linear_weight(weight, 1), persistent=False)
        self.register_buffer("bias", None if bias is None else bias.detach(), persistent=False)

    @classmethod
    def from_linear(cls, linear: torch.nn.Linear) -> PackedLinear:
        return cls(linear.weight, linear.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dtype != torch.bfloat16:
            raise TypeError(f"PackedLinear computes in bfloat16, got input of dtype {x.dtype}")
        return torch.ops.mkldnn._linear_pointwise(x, self.packed, self.bias, "none", [], "")

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


def pack_linears(*models: torch.nn.Module) -> int:
    """Replace each ``torch.nn.Linear`` under ``models`` by a ``PackedLinear``; return how many.

    Pass a target and its drafts in one call: a module shared by several parents (a self-draft
    reusing the target's layers or output layer) is packed once and the replacement shared the same
    way. A module with a ``pack_weights()`` method (``early_exit_draft.TruncatedHead``) packs itself.
    Raises ValueError where packing is not available or a model is not a bfloat16 CPU model, so a
    caller never gets a silently slower or different model.
    """
    if not packing_available():
        raise ValueError("weight packing needs torch with oneDNN and a CPU with bfloat16 support (AVX-512 BF16 or AMX)")
    # id -> (the module, what replaces it); holding the module keeps its id from being reused by a
    # new object while we walk (a freed Linear's id handed to another module would swap the wrong one)
    done: dict[int, tuple[torch.nn.Module, torch.nn.Module]] = {}
    for model in models:
        for parent in list(model.modules()):
            for name, child in list(parent.named_children()):
                if id(child) in done:
                    setattr(parent, name, done[id(child)][1])
                elif isinstance(child, torch.nn.Linear):
                    done[id(child)] = (child, PackedLinear.from_linear(child))
                    setattr(parent, name, done[id(child)][1])
                elif hasattr(child, "pack_weights"):
                    child.pack_weights()
                    done[id(child)] = (child, child)
    return len(done)
