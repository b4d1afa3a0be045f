"""Batch-1 matrix products written as reductions, so that a compiled pass streams the weights at memory speed.

Notation: x (1, K) one token's activations, W (N, K) a weight matrix, y = x W^T (1, N).

At batch 1 a decoding step is a chain of matrix-vector products, and its floor is reading W once (the
roofline, ``roofline``). A library matrix product is built for matrices: for one row its packing and blocking
cost more than the product, and on the 2-core CPUs measured here ``F.linear`` streamed a bfloat16 W at about
half the rate of the same product written as

    y_j = sum_k x_k W_jk        (``(x[..., None, :] * W).sum(-1)``),

which Inductor compiles into one vectorised loop over W's rows, the multiply fused into the sum
(``roofline.linear_bandwidth`` measures both over a model's own matrices; ``benchmarks/decode_speed.py`` records
them beside the copy loop, and ``docs/measurements/cpu_2026-12-06_decode_speed.md`` shows them). The sum runs in float32 for bfloat16 and float16 weights (what the library's kernels
accumulate in) and in the weights' own dtype otherwise, so a float64 pass stays float64; the summation order
differs from the library's, so logits agree to rounding, not to the bit (the tests state the tolerance).

``static_cache.static_pass``, compiled for the CPU, uses ``streamed_product`` for a pass over one token of one row
(plain decoding and a draft's steps at batch 1) unless its graph freezes the weights (bfloat16 / float16, or a
large model's float32, ``compiled_steps.freezes``: products over weights laid out once for them are faster
still), and the module's own call otherwise (eagerly, the streamed form would build x * W in memory): for
several rows the loop would read W once
per row, and a library product reads it once. Only plain ``torch.nn.Linear`` modules are rewritten; anything
else (a quantised or packed module) runs as it is.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["streamed_product", "streamed_matvec", "module_product", "streamed_attention", "library_attention"]

#: the dtypes whose products the library accumulates in float32
_LOW_PRECISION = (torch.bfloat16, torch.float16)


def module_product(module: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    """``module(x)``: the library's product (the default of a lean layer)."""
    return module(x)


def streamed_product(module: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    """``module(x)`` for a ``torch.nn.Linear``, as y_j = sum_k x_k W_jk (+ b_j) accumulated in float32 for
    bfloat16 / float16 weights; any other module as ``module(x)``."""
    if type(module) is not torch.nn.Linear:
        return module(x)
    return streamed_matvec(x, module.weight, module.bias)


def streamed_matvec(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """y_j = sum_k x_k W_jk (+ b_j) for x (..., K) and W (N, K), accumulated in float32 for bfloat16 / float16
    weights and in their own dtype otherwise; the result in x's dtype."""
    acc = torch.float32 if weight.dtype in _LOW_PRECISION else weight.dtype
    y = (x.to(acc).unsqueeze(-2) * weight.to(acc)).sum(-1)
    if bias is not None:
        y = y + bias.to(acc)
    return y.to(x.dtype)


def library_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None, scale: float,
                      enable_gqa: bool) -> torch.Tensor:
    """softmax(q k^T scale + mask) v by ``F.scaled_dot_product_attention`` (the default of a lean layer)."""
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale, enable_gqa=enable_gqa)


def streamed_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None, scale: float,
                       enable_gqa: bool) -> torch.Tensor:
    """The same attention for one query, computed in float32 for bfloat16 / float16 inputs. Why: the CPU's flash
    attention kernel for one bfloat16 query cost about 0.3 ms a layer on the 2-core CPUs measured here, four times
    its float32 call, more than a SmolLM2 layer's streamed products save; its inputs are exact in float32 and it
    accumulates in float32 either way, so only the rounding of its intermediate values differs."""
    if q.dtype not in _LOW_PRECISION:
        return library_attention(q, k, v, mask, scale, enable_gqa)
    out = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), attn_mask=mask, scale=scale,
                                         enable_gqa=enable_gqa)
    return out.to(q.dtype)
