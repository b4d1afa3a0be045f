"""Generators positioned so that a chosen draw is exactly zero: the edge a strict test must survive.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

A correct round accepts x with probability min(1, p(x)/q(x)), i.e. iff u < p(x)/q(x) for u uniform
on [0, 1). A test written ``u <= p/q`` differs only when u equals p/q exactly; with p(x) = 0 that is
u = 0, which a float32 uniform (k / 2^24) hits with probability 2^-24 per draw: far too rare for any
histogram, and exactly the bug of sglang issue #35771 (and of transformers' ``r_i <= ratio``).
So the auditor *places* a zero:

* numpy (PCG64, XSL-RR 128/64): the k-th 64-bit output is rotr(hi ^ lo, hi >> 58) of the state after
  k + 1 steps s -> s M + inc (mod 2^128). A state with hi == lo outputs 0; stepping back k + 1 times
  with M^-1 gives a generator whose k-th output is 0, so its k-th ``random()`` is 0.0 and its
  32-bit draws 2k, 2k + 1 (``integers(0, 2^24)``, a float32-grid uniform) are 0.
* torch (CPU mt19937): a float32 ``torch.rand`` element is (r & (2^24 - 1)) 2^-24 of one 32-bit
  output r; the stream of seed 0 has its first such zero at draw ``TORCH_ZERO_OFFSET`` (found by
  scanning, checked in the tests). Skipping to it puts a zero at any draw index k.

Reference: O'Neill, "PCG: A Family of Simple Fast Space-Efficient Statistically Good Algorithms for
Random Number Generation", 2014 (the XSL-RR output and the 128-bit LCG step).
"""

from __future__ import annotations

import numpy as np

__all__ = ["numpy_zero_generator", "torch_zero_generator", "zero_generator", "TORCH_ZERO_SEED", "TORCH_ZERO_OFFSET"]

#: PCG's default 128-bit multiplier and its inverse modulo 2^128
PCG_MULTIPLIER = 0x2360ED051FC65DA44385DF649FCCF645
PCG_INVERSE = pow(PCG_MULTIPLIER, -1, 1 << 128)
MASK_128 = (1 << 128) - 1
#: seed 0's float32 stream: torch.rand draw number TORCH_ZERO_OFFSET (0-based) is exactly 0.0
TORCH_ZERO_SEED = 0
TORCH_ZERO_OFFSET = 41_102_971
_TORCH_SKIP_BASE = 64  # cached state sits this many draws before the zero
_torch_state_cache: dict[str, object] = {}


def numpy_zero_generator(k: int, word: int = 0x9E3779B97F4A7C15, increment: int = 0xDA3E39CB94B95BDB) -> np.random.Generator:
    """A PCG64 Generator whose k-th 64-bit output (0-based) is 0: random() number k returns 0.0."""
    if k < 0:
        raise ValueError(f"draw index k must be >= 0, got {k}")
    inc = (increment << 1 | 1) & MASK_128  # PCG increments are odd
    # hi == lo makes hi ^ lo = 0, so the output rotr(0, r) = 0 whatever the rotation
    state = (word << 64) | word
    for _ in range(k + 1):
        # undo one step s' = s M + inc:  s = (s' - inc) M^-1  (mod 2^128)
        state = ((state - inc) * PCG_INVERSE) & MASK_128
    bit_generator = np.random.PCG64()
    raw = bit_generator.state
    raw["state"] = {"state": state, "inc": inc}
    raw["has_uint32"], raw["uinteger"] = 0, 0
    bit_generator.state = raw
    return np.random.Generator(bit_generator)


def torch_zero_generator(k: int):
    """A torch CPU generator whose float32 ``torch.rand`` draw number k (0-based) is exactly 0.0."""
    import torch

    if not 0 <= k <= _TORCH_SKIP_BASE:
        raise ValueError(f"draw index k must lie in 0..{_TORCH_SKIP_BASE}, got {k}")
    if "state" not in _torch_state_cache:
        g = torch.Generator().manual_seed(TORCH_ZERO_SEED)
        remaining = TORCH_ZERO_OFFSET - _TORCH_SKIP_BASE
        while remaining > 0:  # skip in chunks to bound memory
            step = min(remaining, 1 << 22)
            torch.rand(step, generator=g)
            remaining -= step
        _torch_state_cache["state"] = g.get_state()
    g = torch.Generator()
    g.set_state(_torch_state_cache["state"])
    if _TORCH_SKIP_BASE - k:
        torch.rand(_TORCH_SKIP_BASE - k, generator=g)
    return g


def zero_generator(kind: str, k: int):
    """A generator of ``kind`` ("numpy" or "torch") whose draw number k is exactly zero."""
    if kind == "numpy":
        return numpy_zero_generator(k)
    if kind == "torch":
        return torch_zero_generator(k)
    raise ValueError(f"generator kind must be 'numpy' or 'torch', got {kind!r}")
