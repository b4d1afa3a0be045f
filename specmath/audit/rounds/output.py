"""Internal: What a sampler under audit returns, read strictly: token ids, or an ``InvalidSamplerOutput`` naming the problem.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)); V = vocabulary size.

A round emits 1..gamma+1 tokens (the accepted drafts, then one resampled or bonus token), each an
id in 0..V-1. Output that is not that (None, a string, float ids, an id outside the vocabulary, no
token, too many) says nothing about the sampler's *law*: it is neither a loss nor a pass, but an
error in the sampler, reported as "invalid output" with what was returned and what is allowed.

* one round (``round_tokens``): a list, tuple, 1-D numpy array or 1-D torch tensor of integer ids
  (Python ints, numpy or torch integer dtypes; no bools, no floats, however integral). A row of
  exactly gamma + 1 entries may end in -1 padding (vLLM's placeholder), which is stripped.
* a batch (``batch_tokens``): an integer numpy array or torch tensor (or nested lists of ints) of
  shape [N, gamma + 1]; row n holds round n's emitted ids, then -1 (vLLM's ``PLACEHOLDER_TOKEN_ID``)
  after its last one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["InvalidSamplerOutput", "round_tokens", "batch_tokens", "PLACEHOLDER"]

#: the id that pads a batched round after its last emitted token (vLLM's PLACEHOLDER_TOKEN_ID)
PLACEHOLDER = -1


class InvalidSamplerOutput(ValueError):
    """The sampler returned something that is not the emitted token ids of a round: an error, not a loss."""


def _shown(value: Any) -> str:
    text = repr(value).replace("\n", " ")
    return (text[:97] + "...") if len(text) > 100 else text


def _what_is_allowed(gamma: int, vocab: int) -> str:
    return f"a round emits 1..{gamma + 1} integer token ids in 0..{vocab - 1}"


def _integer_dtype(dtype: Any) -> bool:
    kind = getattr(dtype, "kind", None)
    if kind is not None:  # numpy
        return kind in "iu"
    return not getattr(dtype, "is_floating_point", True) and not getattr(dtype, "is_complex", True) and str(dtype) != "torch.bool"


def _as_integer_array(output: Any, what: str) -> np.ndarray:
    """A numpy int64 copy of an integer array, tensor or sequence of ints; InvalidSamplerOutput otherwise."""
    if output is None or isinstance(output, (str, bytes, dict)) or not hasattr(output, "__len__"):
        shown = "None" if output is None else f"{type(output).__name__} {_shown(output)}"
        raise InvalidSamplerOutput(f"the sampler returned {shown}; it must return {what}")
    dtype = getattr(output, "dtype", None)
    if dtype is not None and hasattr(output, "shape"):
        if not _integer_dtype(dtype):
            raise InvalidSamplerOutput(f"the sampler returned an array of dtype {dtype} ({_shown(output)}): "
                                       f"it must return {what}, of an integer numpy or torch dtype")
        host = output.detach().cpu().numpy() if hasattr(output, "detach") else np.asarray(output)
        return host.astype(np.int64)
    rows = [list(r) if isinstance(r, (list, tuple)) else r for r in output]
    flat = [x for r in rows for x in (r if isinstance(r, list) else [r])]
    bad = next((x for x in flat if isinstance(x, bool) or not _is_integer_scalar(x)), None)
    if bad is not None:
        raise InvalidSamplerOutput(f"the sampler returned {_shown(output)}: {type(bad).__name__} {_shown(bad)} "
                                   f"is not an integer token id; it must return {what}")
    if not rows:
        return np.zeros(0, dtype=np.int64)
    try:
        return np.array(rows, dtype=np.int64)
    except ValueError:  # ragged rows
        raise InvalidSamplerOutput(f"the sampler returned {_shown(output)}: rows of different lengths, not {what}") from None


def _is_integer_scalar(x: Any) -> bool:
    if isinstance(x, (int, np.integer)):
        return True
    dtype = getattr(x, "dtype", None)
    return dtype is not None and getattr(x, "ndim", 1) == 0 and _integer_dtype(dtype)


def round_tokens(output: Any, gamma: int, vocab: int) -> tuple[int, ...]:
    """The emitted ids of one round as a tuple of ints; ``InvalidSamplerOutput`` naming the problem otherwise."""
    if type(output) in (list, tuple) and 1 <= len(output) <= gamma + 1 and all(
            type(t) is int and 0 <= t < vocab for t in output):
        return tuple(output)  # the common case, checked without numpy
    allowed = _what_is_allowed(gamma, vocab)
    ids = _as_integer_array(output, "a sequence of token ids")
    if ids.ndim != 1:
        raise InvalidSamplerOutput(f"the sampler returned an array of shape {ids.shape}: {allowed} (a 1-D sequence)")
    if len(ids) == gamma + 1:
        ids = _strip_padding(ids, gamma, vocab, "the round")
    if not 1 <= len(ids) <= gamma + 1:
        raise InvalidSamplerOutput(f"the sampler returned {len(ids)} token ids {_shown(ids.tolist())}: {allowed}")
    outside = ids[(ids < 0) | (ids >= vocab)]
    if outside.size:
        raise InvalidSamplerOutput(f"the sampler returned {_shown(ids.tolist())}: token id {int(outside[0])} is "
                                   f"outside the vocabulary 0..{vocab - 1}")
    return tuple(ids.tolist())


def _strip_padding(row: np.ndarray, gamma: int, vocab: int, where: str) -> np.ndarray:
    """A padded row of gamma + 1 entries without its trailing -1s (checked: -1 only after the last token)."""
    emitted = int(np.count_nonzero(row != PLACEHOLDER))
    if emitted and np.all(row[emitted:] == PLACEHOLDER) and np.all(row[:emitted] != PLACEHOLDER):
        return row[:emitted]
    if not emitted:
        raise InvalidSamplerOutput(f"{where} is {_shown(row.tolist())}: no token emitted; {_what_is_allowed(gamma, vocab)}")
    if np.any(row[:emitted] == PLACEHOLDER):
        raise InvalidSamplerOutput(f"{where} is {_shown(row.tolist())}: -1 (no token) may only follow the last emitted token")
    return row


def batch_tokens(output: Any, n: int, gamma: int, vocab: int, width: str = "gamma + 1") -> tuple[np.ndarray, np.ndarray]:
    """(lengths [n], ids [n, gamma + 1] int64 padded with -1) of a batched sampler's output, checked.

    ``width`` names gamma + 1 in the messages (a tree sampler's rows are "depth + 1" wide).
    """
    ids = _as_integer_array(output, f"an [N, {width}] array of token ids")
    if ids.shape != (n, gamma + 1):
        raise InvalidSamplerOutput(f"the sampler returned shape {ids.shape}, expected (N, {width}) = ({n}, {gamma + 1}): "
                                   "one row per round, -1 after each row's last emitted token")
    real = ids != PLACEHOLDER
    lengths = real.sum(axis=1)
    # a valid row is real tokens then padding: its first len entries are real
    leading = np.cumprod(real, axis=1).sum(axis=1)
    bad = np.flatnonzero((lengths == 0) | (leading != lengths) | np.any(real & ((ids < 0) | (ids >= vocab)), axis=1))
    if bad.size:
        r = int(bad[0])
        row = ids[r]
        if lengths[r] == 0:
            problem = "no token emitted"
        elif leading[r] != lengths[r]:
            problem = "-1 (no token) may only follow the last emitted token"
        else:
            wrong = row[real[r] & ((row < 0) | (row >= vocab))]
            problem = f"token id {int(wrong[0])} is outside the vocabulary 0..{vocab - 1}"
        raise InvalidSamplerOutput(f"row {r} of the batch is {_shown(row.tolist())}: {problem} "
                                   f"({bad.size} bad row(s) of {n}); {_what_is_allowed(gamma, vocab)}, then -1")
    return lengths, ids
