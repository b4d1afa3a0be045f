"""Internal: Many small device tensors read by the host in ONE transfer, and given back by name.

A decoding step ends with the host needing a handful of small results (accepted counts, tokens,
counters, a validity flag). Each ``.tolist()`` of a CUDA tensor is a device-to-host copy that waits
for the device, so reading them one by one costs one round trip each. ``read_together`` flattens the
named tensors, casts them to float64 (exact for token ids and counts: integers below 2^53), copies the
concatenation once, and splits the list again by name, each value shaped and typed like its tensor:

    step = read_together(Step, tokens=x, logits_ok=logits_ok(logits))   # Step: a dataclass with those fields
    step.tokens       # list[int], from the (B,) int64 tensor x
    step.logits_ok    # bool, from a 0-d bool tensor

A compiled step computes ``flat_of`` inside its graph and the host calls ``read_flat`` on it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import fields
from typing import TypeVar

import torch

__all__ = ["read_together", "flat_of", "read_flat"]

R = TypeVar("R")


def read_together(record: type[R], **tensors: torch.Tensor) -> R:
    """``record(name=value, ...)`` with every tensor copied to the host in one transfer.

    A 0-d tensor becomes a Python scalar, a (n,) tensor a list, a (B, n) tensor a list of B lists;
    bool tensors give bools, integer tensors ints, floating tensors floats. ``record`` is a dataclass
    whose fields are exactly the names given.
    """
    return read_flat(record, flat_of(tensors.values()), **tensors)


def flat_of(tensors: Iterable[torch.Tensor]) -> torch.Tensor:
    """The tensors flattened and cast to float64, concatenated: what ``read_flat`` reads (a graph can compute it)."""
    return torch.cat([t.reshape(-1).to(torch.float64) for t in tensors])


def read_flat(record: type[R], flat: torch.Tensor, **like: torch.Tensor) -> R:
    """``record(name=value, ...)`` from ``flat`` = ``flat_of(like.values())``, read in one transfer; ``like``
    gives each value's name, shape and type (its data is not read)."""
    expected = [f.name for f in fields(record)]
    if sorted(expected) != sorted(like):
        raise TypeError(f"{record.__name__} needs {expected}, got {list(like)}")
    values, start, host = {}, 0, flat.tolist()  # the one transfer
    for name, t in like.items():
        values[name] = _shaped(host[start : start + t.numel()], t)
        start += t.numel()
    return record(**values)


def _shaped(chunk: list[float], like: torch.Tensor) -> object:
    """The values of ``like`` (read as floats) with its type and shape: scalar, list, or list of lists."""
    kind = bool if like.dtype == torch.bool else float if like.is_floating_point() else int
    values = [kind(v) for v in chunk]
    if like.dim() == 0:
        return values[0]
    if like.dim() == 1:
        return values
    if like.dim() == 2:
        width = like.shape[1]
        return [values[i * width : (i + 1) * width] for i in range(like.shape[0])]
    raise ValueError(f"read_together reads tensors of up to 2 dimensions, got shape {tuple(like.shape)}")
