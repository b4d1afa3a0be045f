"""The bandwidth floor of batch-1 decoding: how fast this machine moves a model's weights, measured here.

Notation: W = the bytes of weights one token's pass reads, B = the memory bandwidth in bytes/s.

A batch-1 pass reads every weight once (the embedding table aside: one row of it; a table tied to the
output layer is read there, once), so no pass can take less than W / B seconds, and plain decoding
cannot beat  floor = B / W  tokens/s. ``memory_bandwidth`` measures B with a short copy loop (a buffer
far larger than the CPU caches, read and written: 2 x its bytes a copy; the median of a few copies, so
a neighbour's burst moves it less); ``weight_bytes`` counts W; the *roofline fraction* of a measured
plain decoding rate r is  r / floor. A model that fits in the caches (the bundled pair, about 7 MB)
reads its weights from cache, not memory: its fraction can exceed 1 and says only that memory is not
what bounds it.

``linear_bandwidth`` asks what the kernels allow: the bytes/s of batch-1 ``F.linear`` over a model's own
weight matrices, each once, as a pass meets them. A pass of nothing but its matrix products takes
W_linear / that rate, so  linear rate / B  bounds the roofline fraction any decoder built on these
kernels can reach, whatever it does about dispatch. ``linear_bandwidth(..., streamed=True)`` asks the same of
the streamed reductions a compiled one-token pass runs on the CPU over a small model's float32 / float64 weights
(``streamed_products``; over bfloat16 / float16 weights and large float32 ones it runs products over frozen
weights laid out once for them, ``compiled_steps.freezes``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from statistics import median

import torch

from specmath.lm.compiled_steps import compiled
from specmath.lm.streamed_products import streamed_matvec
from specmath.validation import check_integer

__all__ = ["memory_bandwidth", "weight_bytes", "linear_weights", "linear_bandwidth", "Roofline"]

#: the copy loop's buffer: far larger than any CPU's last-level cache
COPY_BYTES = 256 * 2**20


def memory_bandwidth(device: torch.device | str = "cpu", repeats: int = 5, nbytes: int = COPY_BYTES) -> float:
    """Bytes/s of ``dst.copy_(src)`` over ``nbytes`` (read + write = 2 nbytes a copy), the median of ``repeats`` copies."""
    check_integer(repeats, "repeats", min_value=1)
    src = torch.ones(nbytes // 4, dtype=torch.float32, device=device)
    dst = torch.empty_like(src)
    dst.copy_(src)  # first touch: the pages are mapped before the clock runs
    cuda = torch.device(device).type == "cuda"
    times = []
    for _ in range(repeats):
        if cuda:
            torch.cuda.synchronize()
        start = time.perf_counter()
        dst.copy_(src)
        if cuda:
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return 2 * nbytes / median(times)


def weight_bytes(model: torch.nn.Module) -> int:
    """W: bytes of the parameters and buffers one batch-1 pass reads, each storage once, an untied embedding table not."""
    embed = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else getattr(model, "embed_tokens", None)
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    skip = set()
    if embed is not None and getattr(embed, "weight", None) is not None:
        tied = head is not None and getattr(head, "weight", None) is not None and head.weight.data_ptr() == embed.weight.data_ptr()
        if not tied:
            skip.add(embed.weight.untyped_storage().data_ptr())  # one row of it per token
    seen, total = set(), 0
    for t in [*model.parameters(), *model.buffers()]:
        storage = t.untyped_storage()
        key = storage.data_ptr()
        if key in seen or key in skip or not t.is_floating_point() and t.dtype not in (torch.qint8, torch.quint8):
            continue
        seen.add(key)
        total += storage.nbytes()
    return total


def linear_weights(model: torch.nn.Module) -> list[torch.Tensor]:
    """The 2-D weights of ``model``'s linear layers (the output head included), each storage once: what a pass multiplies by."""
    seen, out = set(), []
    for module in model.modules():
        weight = getattr(module, "weight", None)
        if isinstance(module, torch.nn.Linear) and isinstance(weight, torch.Tensor) and weight.dim() == 2:
            key = weight.untyped_storage().data_ptr()
            if key not in seen:
                seen.add(key)
                out.append(weight.detach())
    return out


@torch.inference_mode()
def linear_bandwidth(weights: list[torch.Tensor], repeats: int = 5, *, streamed: bool = False) -> float:
    """Bytes/s of batch-1 ``F.linear(x, W)`` for W in ``weights``, one after the other (weight bytes over the
    median time of ``repeats`` sweeps): the matrix products of one pass and nothing else. ``streamed``: the same
    products as a compiled one-token pass on the CPU computes them (``streamed_products.streamed_matvec`` under
    ``torch.compile``, one graph per matrix shape, compiled in the untimed first sweep; each matrix is then a
    compiled call of its own, whose fixed cost, tens of microseconds, is what a sweep of small matrices such as the
    bundled pair's measures, where a pass pays it once for all its products)."""
    check_integer(repeats, "repeats", min_value=1)
    if not weights:
        raise ValueError("linear_bandwidth needs at least one weight matrix")
    inputs = [torch.ones(1, w.shape[1], dtype=w.dtype, device=w.device) for w in weights]
    cuda = weights[0].device.type == "cuda"
    if streamed and weights[0].device.type != "cpu":
        raise ValueError(f"streamed products are compiled for the CPU, got weights on {weights[0].device}")
    product = compiled(streamed_matvec, "cpu") if streamed else torch.nn.functional.linear

    def sweep() -> float:
        if cuda:
            torch.cuda.synchronize()
        start = time.perf_counter()
        for x, w in zip(inputs, weights):
            product(x, w)
        if cuda:
            torch.cuda.synchronize()
        return time.perf_counter() - start

    sweep()  # first touch: kernels chosen, pages mapped
    nbytes = sum(w.numel() * w.element_size() for w in weights)
    return nbytes / median(sweep() for _ in range(repeats))


@dataclass(frozen=True)
class Roofline:
    """The floor of plain decoding on this machine, and where a measured rate stands against it."""

    weight_bytes: int  # W
    bandwidth: float  # B, bytes/s, measured by ``memory_bandwidth``
    plain_tokens_per_s: float  # r, measured

    @property
    def floor_tokens_per_s(self) -> float:
        """B / W: the most tokens/s a pass that reads every weight once can give."""
        return self.bandwidth / self.weight_bytes

    @property
    def fraction(self) -> float:
        """r / (B / W): plain decoding's rate as a fraction of the bandwidth floor."""
        return self.plain_tokens_per_s / self.floor_tokens_per_s

    def to_json(self) -> dict:
        return {"weight_bytes": self.weight_bytes, "bandwidth_GB_per_s": self.bandwidth / 1e9,
                "floor_tokens_per_s": self.floor_tokens_per_s, "plain_tokens_per_s": self.plain_tokens_per_s,
                "fraction": self.fraction}
