"""Internal: Generators positioned so that a chosen draw is exactly 0, or the largest uniform below 1.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

A correct round accepts x with probability min(1, p(x)/q(x)), i.e. iff u < p(x)/q(x) for u uniform
on [0, 1). Two edges of u decide what a sampler does in cases a histogram never reaches:

* u = 0: ``u <= p/q`` (instead of <) accepts a token of target probability p(x) = 0. A float32
  uniform (k / 2^24) is 0 with probability 2^-24 per draw: far too rare for any histogram; it is
  transformers 5.24.0's ``r_i <= probability_ratio`` (claim transformers-accept-at-u-zero), and the
  defect SGLang's target-only kernel had until PR #35798 (claim sglang-coin-at-zero).
* u = 1 - 2^-24 (the largest float32 uniform): rejects a token whose float ratio is just below 1,
  which is how a rejection happens when p and q agree up to rounding, and the residual
  max(0, p - q) may then be all zero in float (0/0 = NaN if the sampler divides by its sum).

So the auditor *places* the edge value at draw k:

* numpy (PCG64, XSL-RR 128/64): the k-th 64-bit output is rotr(hi ^ lo, hi >> 58) of the state after
  k + 1 steps s -> s M + inc (mod 2^128). A state with lo = hi ^ T outputs T for T = 0 or 2^64 - 1
  (rotation leaves both alone); stepping back k + 1 times with M^-1 gives a generator whose k-th
  output is T: ``random()`` number k is 0.0 or 1 - 2^-53, and its 32-bit draws 2k, 2k + 1
  (``integers(0, 2^24)``, a float32-grid uniform) are 0 or 2^24 - 1.
* torch (CPU mt19937): a float32 ``torch.rand`` element is (r & (2^24 - 1)) 2^-24 of one 32-bit
  output r. The stream of seed 0 has a 0.0 at draw 41,102,971 and a 1 - 2^-24 at draw 71,006,344
  (found by scanning, checked in the tests); skipping to them puts the edge at any draw index k.
  Skipping takes about a second, so the generator states 64 draws before each edge are stored in
  ``torch_edge_states.json`` (written by ``torch_edge_states``, compared with a fresh skip in the
  tests); a stored state is used only after its edge draw is checked, else the skip runs.

Reference: O'Neill, "PCG: A Family of Simple Fast Space-Efficient Statistically Good Algorithms for
Random Number Generation", 2014 (the XSL-RR output and the 128-bit LCG step).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np

from specmath.validation import check_choice, check_generator_kind, check_integer

__all__ = ["EDGES", "numpy_edge_generator", "torch_edge_generator", "edge_generator", "TORCH_EDGE_OFFSETS",
           "torch_edge_states", "EDGE_VALUES"]

#: the edge values a probe can place: "zero" (u = 0) and "max" (the largest uniform below 1)
EDGES = ("zero", "max")
#: PCG's default 128-bit multiplier and its inverse modulo 2^128
PCG_MULTIPLIER = 0x2360ED051FC65DA44385DF649FCCF645
PCG_INVERSE = pow(PCG_MULTIPLIER, -1, 1 << 128)
MASK_128, MASK_64 = (1 << 128) - 1, (1 << 64) - 1
#: seed 0's float32 stream: torch.rand draw number OFFSET (0-based) is 0.0 ("zero") or 1 - 2^-24 ("max")
TORCH_EDGE_SEED = 0
TORCH_EDGE_OFFSETS = {"zero": 41_102_971, "max": 71_006_344}
_TORCH_SKIP_BASE = 64  # cached state sits this many draws before the edge
_torch_state_cache: dict[str, object] = {}
#: the stored generator states (base64 of ``torch.Generator.get_state()``), ``_TORCH_SKIP_BASE`` draws before each edge
TORCH_EDGE_STATES_FILE = Path(__file__).with_name("torch_edge_states.json")
#: the uniform an edge probe places, per generator kind, as a reader would write it
EDGE_VALUES = {("numpy", "zero"): "0.0", ("numpy", "max"): "1 - 2^-53", ("torch", "zero"): "0.0", ("torch", "max"): "1 - 2^-24"}


def _check(edge: str, k: int, most: int | None = None) -> int:
    check_choice(edge, "edge", EDGES)
    return check_integer(k, "draw index k", min_value=0, max_value=most)


def numpy_edge_generator(k: int, edge: str = "zero", word: int = 0x9E3779B97F4A7C15,
                         increment: int = 0xDA3E39CB94B95BDB) -> np.random.Generator:
    """A PCG64 Generator whose k-th 64-bit output (0-based) is 0 ("zero") or 2^64 - 1 ("max")."""
    k = _check(edge, k)
    inc = (increment << 1 | 1) & MASK_128  # PCG increments are odd
    target = 0 if edge == "zero" else MASK_64
    # hi ^ lo = target, and rotr(target, r) = target for target = 0 or all ones
    state = (word << 64) | (word ^ target)
    for _ in range(k + 1):
        # undo one step s' = s M + inc:  s = (s' - inc) M^-1  (mod 2^128)
        state = ((state - inc) * PCG_INVERSE) & MASK_128
    bit_generator = np.random.PCG64()
    raw = bit_generator.state
    raw["state"] = {"state": state, "inc": inc}
    raw["has_uint32"], raw["uinteger"] = 0, 0
    bit_generator.state = raw
    return np.random.Generator(bit_generator)


def _skipped_state(edge: str):
    """The seed-0 generator state ``_TORCH_SKIP_BASE`` draws before the edge, by drawing every float up to it."""
    import torch

    g = torch.Generator().manual_seed(TORCH_EDGE_SEED)
    remaining = TORCH_EDGE_OFFSETS[edge] - _TORCH_SKIP_BASE
    while remaining > 0:  # skip in chunks to bound memory
        step = min(remaining, 1 << 22)
        torch.rand(step, generator=g)
        remaining -= step
    return g.get_state()


def _places_the_edge(state, edge: str) -> bool:
    import torch

    g = torch.Generator()
    g.set_state(state)
    return torch.rand(_TORCH_SKIP_BASE + 1, generator=g)[_TORCH_SKIP_BASE].item() == (0.0 if edge == "zero" else 1 - 2.0**-24)


def _stored_state(edge: str):
    """The stored state, when the file is there, holds it, and it places the edge (else None)."""
    import torch

    try:
        encoded = json.loads(TORCH_EDGE_STATES_FILE.read_text())[edge]
        state = torch.frombuffer(bytearray(base64.b64decode(encoded)), dtype=torch.uint8)
        return state if _places_the_edge(state, edge) else None
    except (OSError, ValueError, KeyError, RuntimeError):
        return None


def torch_edge_states() -> dict[str, str]:
    """The states to store: edge -> base64 of the seed-0 generator state 64 draws before it (computed by skipping)."""
    return {edge: base64.b64encode(bytes(_skipped_state(edge).tolist())).decode("ascii") for edge in EDGES}


def torch_edge_generator(k: int, edge: str = "zero"):
    """A torch CPU generator whose float32 ``torch.rand`` draw number k (0-based) is 0.0 or 1 - 2^-24."""
    import torch

    k = _check(edge, k, _TORCH_SKIP_BASE)
    if edge not in _torch_state_cache:
        state = _stored_state(edge)
        _torch_state_cache[edge] = _skipped_state(edge) if state is None else state
    g = torch.Generator()
    g.set_state(_torch_state_cache[edge])
    if _TORCH_SKIP_BASE - k:
        torch.rand(_TORCH_SKIP_BASE - k, generator=g)
    return g


def edge_generator(kind: str, k: int, edge: str = "zero"):
    """A generator of ``kind`` ("numpy" or "torch") whose draw number k is the ``edge`` value."""
    if check_generator_kind(kind) == "numpy":
        return numpy_edge_generator(k, edge)
    return torch_edge_generator(k, edge)
