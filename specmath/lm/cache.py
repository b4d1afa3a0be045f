"""Internal: A causal LM with a KV cache whose rows hold different numbers of tokens, and how to roll it back.

Speculative decoding feeds gamma + 1 tokens to the target, then keeps only the accepted ones; in a
batch every row accepts a different number. We keep one HF cache for the batch plus a slot mask
(B, S): slot s of row b holds a real token (1) or a hole (0).

* feeding a block (``feed`` from host lists, ``feed_block`` from a (B, n) tensor already on the
  device): row b's new tokens go right-padded into slots S..S+n-1; padding slots are holes.
  Position ids count real tokens only (row b's next position = its number of real slots), so RoPE
  sees each row as a contiguous sequence; the attention mask (B, S + n) hides the holes.
* rollback (``keep``): row b keeps its first keep[b] real tokens; later slots become holes, and
  the tail of slots that is a hole in every row is dropped by lowering the cache's length. With
  batch 1 this is exactly a crop (no holes ever), as in HF assisted generation; with batch > 1 a
  row that accepted fewer tokens than the others carries a few masked slots instead of re-aligning
  the cache. ``keep`` reads the device once (the last used slot and the first hole), except where
  no row has a hole and all keep the same number (batch 1 always): then it crops without a read.
* storage (``WriteOverCache``, transformers >= 5): each layer's keys and values live in a buffer
  that grows by doubling; a forward writes its new slots at the current length and a rollback only
  lowers the length, so rejected slots are written over by the next forward (gpt-fast's static
  cache, indexed by slot). HF's ``DynamicCache`` instead concatenates, copying the whole cache on
  every forward; it is the fallback for transformers 4.x.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence

import torch
from transformers import DynamicCache

__all__ = ["RowCache", "WriteOverCache", "new_cache", "padded_rows"]

try:  # the per-layer cache API of transformers >= 5
    from transformers.cache_utils import Cache, DynamicLayer
except ImportError:  # pragma: no cover - transformers 4.x
    DynamicLayer = None


if DynamicLayer is not None:

    class WriteOverLayer(DynamicLayer):
        """One layer's keys/values (B, H, capacity, D): append writes at ``length``, crop lowers ``length``."""

        def lazy_initialization(self, key_states: torch.Tensor, value_states: torch.Tensor) -> None:
            self.device = key_states.device
            self.length = 0
            self._keys = key_states.new_empty(*key_states.shape[:-2], 0, key_states.shape[-1])
            self._values = value_states.new_empty(*value_states.shape[:-2], 0, value_states.shape[-1])
            self.is_initialized = True

        def _reserve(self, needed: int) -> None:
            capacity = self._keys.shape[-2]
            if needed <= capacity:
                return
            # grow by doubling: one copy per doubling, amortised O(1) per token instead of O(length) per forward
            size = max(needed, 2 * capacity, 64)
            for name in ("_keys", "_values"):
                old = getattr(self, name)
                buf = old.new_empty(*old.shape[:-2], size, old.shape[-1])
                buf[..., : self.length, :] = old[..., : self.length, :]
                setattr(self, name, buf)

        def _expose(self) -> None:
            self.keys = self._keys[..., : self.length, :]
            self.values = self._values[..., : self.length, :]

        def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
            if not self.is_initialized:
                self.lazy_initialization(key_states, value_states)
            n = key_states.shape[-2]
            self._reserve(self.length + n)
            # write over whatever a rollback left in these slots
            self._keys[..., self.length : self.length + n, :] = key_states
            self._values[..., self.length : self.length + n, :] = value_states
            self.length += n
            self._expose()
            return self.keys, self.values

        def get_seq_length(self) -> int:
            return self.length if self.is_initialized else 0

        def crop(self, tokens_to_remove: int) -> None:
            if tokens_to_remove > 0:
                raise ValueError(f"crop takes minus the number of slots to remove, got {tokens_to_remove}")
            if tokens_to_remove and self.is_initialized:
                self.length -= -tokens_to_remove
                self._expose()

        def batch_repeat_interleave(self, repeats: int) -> None:
            if self.get_seq_length() > 0:
                self._keys = self._keys.repeat_interleave(repeats, dim=0)
                self._values = self._values.repeat_interleave(repeats, dim=0)
                self._expose()

        def batch_select_indices(self, indices: torch.Tensor) -> None:
            if self.get_seq_length() > 0:
                self._keys, self._values = self._keys[indices, ...], self._values[indices, ...]
                self._expose()

    class WriteOverCache(DynamicCache):
        """A ``DynamicCache`` whose layers are ``WriteOverLayer``: rollback by length, no copy per forward."""

        def __init__(self) -> None:
            Cache.__init__(self, layer_class_to_replicate=WriteOverLayer)

else:  # pragma: no cover
    WriteOverCache = None


def new_cache() -> DynamicCache:
    """An empty KV cache: ``WriteOverCache`` where transformers supports it, else ``DynamicCache``."""
    return WriteOverCache() if WriteOverCache is not None else DynamicCache()


def padded_rows(rows: Sequence[Sequence[int]], batch: int, pad_id: int) -> tuple[torch.Tensor, list[int]]:
    """Row b's tokens ``rows[b]`` (any lengths, some may be empty) as a (batch, n) host tensor padded with ``pad_id``
    after each row, n the longest row, and the counts; what every cache's ``feed`` hands to its ``feed_block``."""
    if len(rows) != batch:
        raise ValueError(f"feed got {len(rows)} rows for a cache of batch {batch}")
    counts = [len(r) for r in rows]
    n = max(counts)
    if n == 0:
        raise ValueError("feed got no tokens in any row")
    if min(counts) == n:
        return torch.tensor([list(r) for r in rows], dtype=torch.long), counts
    ids = torch.full((batch, n), pad_id, dtype=torch.long)
    for b, r in enumerate(rows):
        ids[b, : len(r)] = torch.as_tensor(list(r), dtype=torch.long)
    return ids, counts


class RowCache:
    """KV cache of ``model`` for a batch of sequences of different lengths."""

    def __init__(self, model: torch.nn.Module, batch: int, vocab_size: int | None = None, pad_id: int = 0) -> None:
        self.model = model
        self.device = next(model.parameters()).device
        self.cache = new_cache()
        self.slots = torch.zeros(batch, 0, dtype=torch.long, device=self.device)  # (B, S) 1 = real token
        self.lengths = [0] * batch  # real tokens per row (= next position id)
        self.vocab_size = vocab_size
        self.pad_id = pad_id
        self.forwards = 0
        self._holes = False  # once a row has a masked slot, every forward passes the 2D mask
        # transformers 5.x renamed the forward argument past_key_values -> cache
        self._cache_kw = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"

    @property
    def batch(self) -> int:
        return len(self.lengths)

    @torch.inference_mode()
    def feed(self, rows: Sequence[Sequence[int]], logits: bool = True) -> torch.Tensor | None:
        """Append row b's tokens ``rows[b]`` (any lengths, some may be empty); return logits (B, n, V).

        Logits of padding slots are meaningless; row b's logits for its i-th new token are at [b, i].
        ``logits=False`` (prefill) skips the LM head over the new tokens and returns None.
        """
        ids, counts = padded_rows(rows, self.batch, self.pad_id)
        return self.feed_block(ids.to(self.device), counts, logits)

    @torch.inference_mode()
    def feed_block(self, ids: torch.Tensor, counts: Sequence[int] | None = None, logits: bool = True) -> torch.Tensor | None:
        """Append ``ids`` (B, n) already on the device: row b's first counts[b] columns are tokens, the rest padding.

        ``counts=None``: every row feeds all n tokens. The speculative decoder feeds its drafted
        block this way, without copying tokens through host lists.
        """
        B, n = ids.shape
        if B != self.batch or n == 0:
            raise ValueError(f"feed_block got ids of shape {tuple(ids.shape)} for a cache of batch {self.batch}")
        full = counts is None or min(counts) == n
        counts = [n] * B if counts is None else list(counts)
        if full:
            valid = torch.ones(B, n, dtype=torch.long, device=self.device)
        else:
            c = torch.tensor(counts, device=self.device)
            valid = (torch.arange(n, device=self.device)[None, :] < c[:, None]).long()
        if full and not self._holes:
            # no hole anywhere: every row holds S real tokens, so the new ones sit at positions S..S+n-1
            S = self.slots.shape[1]
            positions = torch.arange(S, S + n, device=self.device)[None, :].expand(B, n)
        else:
            start = torch.tensor(self.lengths, device=self.device)[:, None]
            # position of a new real token = real tokens before it in its row
            positions = (start + torch.cumsum(valid, dim=1) - 1).clamp(min=0)
        mask = torch.cat([self.slots, valid], dim=1)  # (B, S + n)
        # no hole anywhere: pass no mask (the plain causal one, which HF builds faster than from a 2D mask)
        attention_mask = None if full and not self._holes else mask
        self._holes = self._holes or not full
        # a prefill keeps the last position's logits only, named by index: Hugging Face's forward then gathers that row
        # into a tensor of its own, where logits_to_keep=1 slices it out of h with h's strides, and torch's CPU product
        # copies a bfloat16 output layer's weight for such a slice (``lean_llama.last_logits``)
        extra = {} if logits else {"logits_to_keep": torch.tensor([n - 1], device=self.device)}
        out = self.model(input_ids=ids, attention_mask=attention_mask, position_ids=positions, use_cache=True,
                         **{self._cache_kw: self.cache}, **extra)
        self.forwards += 1
        self.slots = mask
        self.lengths = [length + k for length, k in zip(self.lengths, counts, strict=True)]
        if not logits:
            return None
        out_logits = out.logits  # (B, n, V_model)
        if self.vocab_size is not None:
            # padded vocabularies: only the first vocab_size columns are tokens (see models.shared_vocab_size)
            out_logits = out_logits[..., : self.vocab_size]
        return out_logits

    def prefill(self, rows: Sequence[Sequence[int]]) -> None:
        """Feed each row's context; identical rows share one forward whose KV is copied to every row."""
        if self.batch > 1 and self.slots.shape[1] == 0 and all(list(r) == list(rows[0]) for r in rows):
            batch, self.lengths = self.batch, [0]
            self.slots = self.slots[:1]
            self.feed([rows[0]], logits=False)
            self.cache.batch_repeat_interleave(batch)
            self.slots = self.slots.expand(batch, -1).clone()  # no holes: every row holds the same tokens
            self.lengths = self.lengths * batch
        else:
            self.feed(rows, logits=False)

    def keep(self, keep: Sequence[int]) -> None:
        """Roll back: row b keeps its first keep[b] real tokens, the rest become holes; crop the common tail."""
        if any(k > n or k < 0 for k, n in zip(keep, self.lengths, strict=True)):
            raise ValueError(f"cannot keep {list(keep)} tokens of rows holding {self.lengths}")
        if not self._holes and len(set(keep)) == 1:
            # no hole anywhere (always so at batch 1) and every row keeps k tokens: a crop to k slots,
            # decided on the host without reading the device
            k, S = keep[0], self.slots.shape[1]
            if k < S:
                _crop(self.cache, k, S)
                self.slots = self.slots[:, :k]
            self.lengths = list(keep)
            return
        rank = torch.cumsum(self.slots, dim=1)  # (B, S): real tokens up to and including slot s
        k = torch.tensor(list(keep), device=self.device)[:, None]
        self.slots = self.slots * (rank <= k)
        # one host transfer: the end of the last slot any row still uses, and the first slot that is a hole
        S = self.slots.shape[1]
        index = torch.arange(1, S + 1, device=self.device)
        last_used = (self.slots.any(0) * index).max() if S else index.sum()
        first_hole = torch.where((self.slots == 0).any(0), index - 1, S).min() if S else index.sum()
        last, first_hole = torch.stack([last_used, first_hole]).tolist()
        if last < S:
            _crop(self.cache, last, S)
            self.slots = self.slots[:, :last]
        self._holes = first_hole < last
        self.lengths = list(keep)


_CROP_REMOVES: dict[type, bool] = {}  # cache class -> crop takes minus the slots to remove (5.x), not the slots to keep


def _crop(cache: DynamicCache, new_length: int, old_length: int) -> None:
    """DynamicCache.crop keeps ``new_length`` slots (transformers 4.x) / removes -n slots (5.x)."""
    removes = _CROP_REMOVES.get(type(cache))
    if removes is None:  # inspect once per class: a signature costs more than the crop itself
        removes = _CROP_REMOVES[type(cache)] = "tokens_to_remove" in inspect.signature(cache.crop).parameters
    cache.crop(new_length - old_length if removes else new_length)
