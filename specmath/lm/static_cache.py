"""A KV cache of fixed shape indexed by position, and the cached Llama pass over it: the capturable step.

Notation: p = target law, q = draft law, gamma = draft tokens per round, L = the cache's capacity in slots.

``StaticRowCache`` has ``cache.RowCache``'s interface (``feed``, ``feed_block``, ``prefill``, ``keep``,
``lengths``, ``forwards``), so plain decoding, speculative decoding and ``drafts.ModelDraft`` run on it
unchanged; ``DecodeOptions(compile=True)`` selects it (``cache_class_for``, ``drafts.draft_for``). Unlike the
``RowCache`` it never changes a tensor's shape between passes of the same width:

* storage: per layer, keys and values (B, KV heads, L, D), zero-filled once (an unwritten slot must be
  finite: attention weights it by exactly 0, and 0 * NaN would be NaN);
* a pass over n tokens of row b writes slots len_b .. len_b + n - 1 (``index_put`` at those positions)
  and attends over all L slots with the mask  key j visible to new token i  iff  j <= len_b + i,
  so the shapes depend on (B, n, L) only and one compiled graph serves every step of width n;
* rollback (``keep``) lowers len_b on the host: the rejected slots are simply written over by the next
  pass (gpt-fast's ``KVCache``, indexed by ``input_pos``). Rows of different lengths need no holes and
  no mask of holes: each row has its own len_b. No device read, ever.

L grows only when a pass would not fit, to the smallest power of two (at least ``MIN_SLOTS``) that holds it,
the buffers copied; a compiled step then meets a new shape and compiles it once. Why doubling: every pass
attends over all L slots, so slots beyond what a run needs cost time in every layer of every pass (for a
small model a good part of it), and doubling keeps L below twice the length the run reached while a run of n
tokens meets only about log2(n / MIN_SLOTS) + 1 capacities, each one more compiled graph per width.

The pass itself is ``lean_llama``'s: the same layers (stacked projections, RoPE at position len_b + i,
``scaled_dot_product_attention``), so its logits agree with ``LeanLlama``'s and Hugging Face's up to
summation order (float64: ~1e-15; the tests state the tolerance). ``compiled_steps.compiled`` wraps the pass of
each width in ``torch.compile``; ``StaticRowCache(compiled=False)`` runs the same pass eagerly, which
is how the tests exercise the capturable logic without compiling.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from functools import partial

import torch
import torch._inductor.config

from specmath.lm.cache import RowCache, padded_rows
from specmath.lm.compiled_steps import compiled, freezes
from specmath.lm.lean_llama import LeanLlama, lean_unsupported
from specmath.lm.roofline import weight_bytes
from specmath.lm.streamed_products import library_attention, module_product, streamed_attention, streamed_product

__all__ = ["StaticRowCache", "StaticKV", "static_pass", "lean_of", "cache_class_for", "MIN_SLOTS",
           "static_unsupported"]

#: the smallest capacity L; it doubles from here (each new L is one more compiled shape per width)
MIN_SLOTS = 128

_LEAN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # model -> its LeanLlama, built once


def static_unsupported(model: torch.nn.Module) -> str | None:
    """Why ``StaticRowCache`` cannot run ``model`` (it runs Llama-architecture models via ``LeanLlama``), or None."""
    return None if isinstance(model, LeanLlama) else lean_unsupported(model)


def lean_of(model: torch.nn.Module) -> LeanLlama:
    """``model`` as a ``LeanLlama`` (itself if it is one), built once per model and kept while the model lives."""
    if isinstance(model, LeanLlama):
        return model
    lean = _LEAN.get(model)
    if lean is None:
        reason = lean_unsupported(model)
        if reason is not None:
            raise ValueError(f"the compiled decoders run Llama-architecture models only: {reason}")
        lean = _LEAN[model] = LeanLlama(model)
    return lean


class StaticKV(torch.nn.Module):
    """Per layer keys and values (B, KV, L, D) as buffers (static addresses: what CUDA graphs replay over)."""

    def __init__(self, layers: int, batch: int, kv_heads: int, capacity: int, head_dim: int,
                 dtype: torch.dtype, device: torch.device) -> None:
        super().__init__()
        self.layers = layers
        for i in range(layers):
            self.register_buffer(f"k{i}", torch.zeros(batch, kv_heads, capacity, head_dim, dtype=dtype, device=device))
            self.register_buffer(f"v{i}", torch.zeros(batch, kv_heads, capacity, head_dim, dtype=dtype, device=device))

    @property
    def capacity(self) -> int:
        return self.k0.shape[2]

    def grown(self, capacity: int) -> StaticKV:
        """A copy with ``capacity`` slots, the first L slots of every row copied."""
        B, KV, L, D = self.k0.shape
        new = StaticKV(self.layers, B, KV, capacity, D, self.k0.dtype, self.k0.device)
        for name, buf in self.named_buffers():
            getattr(new, name)[:, :, :L] = buf
        return new


#: what a pass takes as its cache: the ``StaticKV`` module, or its buffers as the flat tuple (k0, v0, k1, v1, ...)
PassKV = StaticKV | tuple[torch.Tensor, ...]


def layer_kv(kv: PassKV, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Layer ``layer``'s keys and values (B, KV, L, D) in a pass's cache."""
    if isinstance(kv, tuple):
        return kv[2 * layer], kv[2 * layer + 1]
    return getattr(kv, f"k{layer}"), getattr(kv, f"v{layer}")


def pass_kv(kv: StaticKV, frozen: str | None) -> PassKV:
    """The cache as a compiled pass takes it: the module (on a GPU its buffers are static addresses, which CUDA
    graphs replay over), or, for a frozen graph (``compiled_steps.freezes``), its buffers as a tuple, ordinary
    inputs: a frozen graph turns the module tensors it reads into constants, and a cache read as a module would be
    frozen too, one graph per cache, compiled anew for every run."""
    return tuple(kv.buffers()) if frozen else kv


class _Writer:
    """What a ``lean_llama`` layer calls as its cache: write the new keys/values at their positions, return all L."""

    def __init__(self, kv: PassKV, rows: torch.Tensor, positions: torch.Tensor) -> None:
        self.kv, self.rows, self.positions = kv, rows, positions

    def update(self, k: torch.Tensor, v: torch.Tensor, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
        keys, values = layer_kv(self.kv, layer)
        # keys[b, :, positions[b, i]] = k[b, :, i]: advanced indices (B, 1) and (B, n) around a slice put (B, n) first
        keys[self.rows, :, self.positions] = k.transpose(1, 2)
        values[self.rows, :, self.positions] = v.transpose(1, 2)
        return keys, values


def static_pass(lean: LeanLlama, kv: PassKV, ids: torch.Tensor, positions: torch.Tensor, logits: bool = True
                ) -> torch.Tensor | None:
    """Logits (B, n, V) of ``ids`` (B, n) at ``positions`` (B, n), written into ``kv``; ``logits=False`` (a prefill):
    the keys and values written, no output layer, None.

    Token i of row b sits at position m = positions[b, i] and sees slots j <= m. Every shape is fixed
    by (B, n, L): this is the function ``compiled_steps`` compiles, once per width n. Compiled for the CPU, a pass
    over one token of one row computes its products as streamed reductions (``streamed_products``), unless its
    graph freezes the weights (``compiled_steps.freezes``): those products are the ones ``FROZEN_PRODUCTS`` names.
    """
    B, n = ids.shape
    h = lean.embed_tokens(ids)
    # RoPE angles m theta_j in float32, as LlamaRotaryEmbedding computes them, then the model's dtype
    angles = positions[..., None].float() * lean.inv_freq
    angles = torch.cat([angles, angles], dim=-1)
    cos, sin = angles.cos().to(h.dtype)[:, None], angles.sin().to(h.dtype)[:, None]  # (B, 1, n, D)
    slots = torch.arange(layer_kv(kv, 0)[0].shape[2], device=ids.device)
    mask = (slots[None, None, :] <= positions[:, :, None])[:, None]  # (B, 1, n, L)
    writer = _Writer(kv, torch.arange(B, device=ids.device)[:, None], positions)
    # One token of one row makes every product a matrix-vector product. Inductor turns the streamed form into one
    # loop over W's rows (measured on the CPU only); eager, it would build x * W in memory, so eager passes and
    # passes over several rows or tokens keep the library's products, which read W once for all of them.
    one_row = B * n == 1 and ids.device.type == "cpu" and torch.compiler.is_compiling()
    # Frozen weights (low precision or large, ``compiled_steps.freezes``) go to products over weights laid out once
    # for them (oneDNN's or Inductor's, ``FROZEN_PRODUCTS``); that needs the product as the library's, not as the
    # streamed reduction.
    streamed = one_row and not torch._inductor.config.freezing
    product = streamed_product if streamed else module_product
    attention = streamed_attention if one_row else library_attention
    for layer in lean.layers:
        h = layer(h, cos, sin, mask, writer, product, attention)
    if not logits:
        return None
    return product(lean.lm_head, lean.norm(h))


class StaticRowCache:
    """``RowCache``'s interface over a ``StaticKV``: row b's next position is its length; rollback = a lower length."""

    def __init__(self, model: torch.nn.Module, batch: int, vocab_size: int | None = None, pad_id: int = 0, *,
                 compiled: bool = False) -> None:
        self.model = model
        self.lean = lean_of(model)
        self.device = next(self.lean.parameters()).device
        self.dtype = self.lean.embed_tokens.weight.dtype
        self.vocab_size = vocab_size
        self.pad_id = pad_id
        self.lengths = [0] * batch
        self.forwards = 0
        self.compiled = compiled
        # the products of its compiled passes where they freeze the weights (by dtype, and by W, the bytes one
        # pass reads), None where they do not
        self.frozen = freezes(self.device, self.dtype, weight_bytes(self.lean)) if compiled else None
        self.kv: StaticKV | None = None

    @property
    def batch(self) -> int:
        return len(self.lengths)

    def reserve(self, needed: int) -> None:
        """Room for ``needed`` slots in every row: the capacity grows to the smallest power of two, at least
        ``MIN_SLOTS``, that holds them."""
        if self.kv is not None and needed <= self.kv.capacity:
            return
        capacity = max(MIN_SLOTS, 1 << (needed - 1).bit_length())
        if self.kv is None:
            layer = self.lean.layers[0]
            self.kv = StaticKV(len(self.lean.layers), self.batch, layer.kv_heads, capacity, layer.head_dim,
                               self.dtype, self.device)
        else:
            self.kv = self.kv.grown(capacity)

    def positions(self, n: int) -> torch.Tensor:
        """(B, n) on the device: len_b + i, where the next n tokens of row b go."""
        start = torch.tensor(self.lengths, device=self.device)[:, None]
        return start + torch.arange(n, device=self.device)[None, :]

    @torch.inference_mode()
    def feed(self, rows: Sequence[Sequence[int]], logits: bool = True) -> torch.Tensor | None:
        """Append row b's tokens ``rows[b]`` (any lengths, some may be empty); return logits (B, n, V) (as ``RowCache.feed``)."""
        ids, counts = padded_rows(rows, self.batch, self.pad_id)
        return self.feed_block(ids.to(self.device), counts, logits)

    @torch.inference_mode()
    def feed_block(self, ids: torch.Tensor, counts: Sequence[int] | None = None, logits: bool = True) -> torch.Tensor | None:
        """Append ``ids`` (B, n) already on the device: row b's first counts[b] columns are tokens, the rest padding.

        A padding column is written past the row's new length, where the next pass writes over it.
        """
        B, n = ids.shape
        if B != self.batch or n == 0:
            raise ValueError(f"feed_block got ids of shape {tuple(ids.shape)} for a cache of batch {self.batch}")
        counts = [n] * B if counts is None else list(counts)
        self.reserve(max(self.lengths) + n)
        positions = self.positions(n)
        if self.compiled and logits:
            out = compiled(static_pass, self.device.type, self.frozen)(self.lean, pass_kv(self.kv, self.frozen), ids,
                                                                       positions)
        else:
            out = static_pass(self.lean, self.kv, ids, positions, logits=logits)
        self.forwards += 1
        self.lengths = [length + k for length, k in zip(self.lengths, counts, strict=True)]
        if not logits:
            return None
        if self.vocab_size is not None:
            out = out[..., : self.vocab_size]  # padded vocabularies: only the first vocab_size columns are tokens
        return out

    def prefill(self, rows: Sequence[Sequence[int]]) -> None:
        """Feed each row's context (an eager pass: prompt lengths vary, so compiling them would compile each)."""
        self.feed(rows, logits=False)

    def keep(self, keep: Sequence[int]) -> None:
        """Roll back: row b keeps its first keep[b] tokens; the slots after them are written over by the next pass."""
        if any(k > n or k < 0 for k, n in zip(keep, self.lengths, strict=True)):
            raise ValueError(f"cannot keep {list(keep)} tokens of rows holding {self.lengths}")
        self.lengths = list(keep)


def cache_class_for(options) -> type | partial:
    """The cache the decoders build for ``options`` (a ``DecodeOptions``): compiled static, or ``RowCache``."""
    return partial(StaticRowCache, compiled=True) if getattr(options, "compile", False) else RowCache
