"""The correct speculative round in float (numpy) arithmetic: the reference an engine's sampler is audited against.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

The signature is the one an engine's rejection sampler has, so an auditor can wrap any of them:

    sample_round(target_probs [gamma+1, V], draft_probs [gamma, V], draft_tokens [gamma], rng) -> list[int]

``target_probs[i]`` is p(. | prefix x_<i) (row gamma is the bonus position), ``draft_probs[i]`` is
q(. | prefix x_<i), all *raw* model probabilities. When a warp w is in force the contract is that
``draft_tokens`` were drawn from w(draft_probs[i]); the correct round then accepts/rejects against w(p) with
w(q). Tokens are vocabulary indices 0..V-1. Bad arrays raise ValueError naming the problem.

``reference_sample_round`` is the correct round. ``numpy_round`` is the same round written as named
blocks (draw the uniforms, the accept test, the residual, which target row each position and the bonus
read), each keyword defaulting to the correct block: the lossy variants of ``specmath.bugzoo`` swap
exactly one of them, mirroring the exact round programs of this package.

References: Leviathan et al., ICML 2023, Algorithm 1; Chen et al., 2023, Algorithm 2.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from specmath.sampling_options import SamplingOptions
from specmath.speculative.sampling_warp import warp_row
from specmath.validation import check_generator

__all__ = [
    "check_round_arrays",
    "numpy_warp",
    "strict_accept",
    "normalised_residual",
    "fresh_uniforms",
    "numpy_round",
    "reference_sample_round",
    "draw_index",
]


def check_round_arrays(target_probs, draft_probs, draft_tokens, *, batched: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate shapes, finiteness, normalisation (1e-6) and token indices of one round ([gamma+1, V],
    [gamma, V], [gamma]) or, ``batched``, of N rounds ([N, gamma+1, V], [N, gamma, V], [N, gamma]);
    return float64 arrays and int64 ids."""
    p = np.asarray(target_probs, dtype=np.float64)
    q = np.asarray(draft_probs, dtype=np.float64)
    x = np.asarray(draft_tokens)
    lead = "N, " if batched else ""
    if x.ndim != 1 + batched or (x.size and not np.issubdtype(x.dtype, np.integer)):
        raise ValueError(f"draft_tokens must be an [{lead}gamma] array of integer token ids, got shape {x.shape} dtype {x.dtype}")
    rounds, gamma = x.shape[:-1], x.shape[-1]
    if p.ndim != x.ndim + 1 or p.shape[:-1] != (*rounds, gamma + 1):
        shape = ", ".join(map(str, (*rounds, gamma + 1)))
        raise ValueError(f"target_probs must have shape [{lead}gamma + 1, V] = [{shape}, V], got {p.shape}")
    vocab = p.shape[-1]
    if q.shape != (*rounds, gamma, vocab):
        shape = ", ".join(map(str, (*rounds, gamma, vocab)))
        raise ValueError(f"draft_probs must have shape [{lead}gamma, V] = [{shape}], got {q.shape}")
    for name, a in (("target_probs", p), ("draft_probs", q)):
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} contains NaN or infinity")
        if np.any(a < 0):
            raise ValueError(f"{name} contains a negative probability")
        sums = a.sum(axis=-1)
        if a.size and np.max(np.abs(sums - 1)) > 1e-6:
            raise ValueError(f"{name} rows do not sum to 1 (worst row sums to {sums.flat[np.argmax(np.abs(sums - 1))]})")
    if np.any((x < 0) | (x >= vocab)):
        raise ValueError(f"draft_tokens has an id outside 0..{vocab - 1}: {x[(x < 0) | (x >= vocab)][:5].tolist()}")
    return p, q, x.astype(np.int64)


def numpy_warp(probs: np.ndarray, w: SamplingOptions | None) -> np.ndarray:
    """Row-wise float warp of ``SamplingOptions``: each row goes through ``specmath.speculative.sampling_warp.warp_row``,
    the definition the exact toy-LM warp uses (temperature, then top-k, then top-p)."""
    if w is None:
        return probs
    rows = np.asarray(probs, dtype=np.float64)
    return np.array([warp_row([float(v) for v in row], w) for row in rows], dtype=np.float64).reshape(rows.shape)


def strict_accept(u: float, p: float, q: float) -> bool:
    """Accept iff u < p/q (u in [0, 1)): probability min(1, p/q), never a p = 0 token."""
    return u * q < p


def normalised_residual(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """norm(max(0, p - q)); a zero residual is an error (a rejection cannot happen when p == q)."""
    r = np.maximum(p - q, 0.0)
    total = r.sum()
    if total <= 0:
        raise ValueError("the residual max(0, p - q) is zero: the round rejected a token although p <= q nowhere")
    return r / total


def fresh_uniforms(gamma: int, rng: np.random.Generator) -> np.ndarray:
    """One independent uniform on [0, 1) per drafted position."""
    return rng.random(gamma)


def draw_index(probs: np.ndarray, rng: np.random.Generator) -> int:
    """Inverse-CDF draw: the first i with cumsum(probs)[i] > u * sum(probs), u ~ U[0, 1); zero entries are never drawn."""
    cdf = np.cumsum(probs)
    return min(int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right")), len(probs) - 1)


def numpy_round(
    target_probs,
    draft_probs,
    draft_tokens,
    rng: np.random.Generator,
    *,
    warp_target: SamplingOptions | None = None,
    warp_draft: SamplingOptions | None = None,
    uniforms: Callable[[int, np.random.Generator], np.ndarray] = fresh_uniforms,
    accept: Callable[[float, float, float], bool] = strict_accept,
    residual: Callable[[np.ndarray, np.ndarray], np.ndarray] = normalised_residual,
    target_row: Callable[[int, int], int] = lambda i, gamma: i,
    bonus_row: Callable[[int], int] = lambda gamma: gamma,
    check_first: bool = True,
) -> list[int]:
    """One speculative round in float arithmetic; each keyword is a block a bug may swap."""
    check_generator(rng)
    p_all, q_all, tokens = check_round_arrays(target_probs, draft_probs, draft_tokens)
    p_all, q_all = numpy_warp(p_all, warp_target), numpy_warp(q_all, warp_draft)
    gamma = len(tokens)
    u = uniforms(gamma, rng)
    out: list[int] = []
    for i, x in enumerate(tokens.tolist()):
        p, q = p_all[target_row(i, gamma)], q_all[i]
        if q[x] <= 0:
            raise ValueError(f"draft token {x} at position {i} has draft probability 0: it cannot have been drawn")
        # accept x with probability min(1, p(x)/q(x)); the first position may be skipped by a bug
        if (i == 0 and not check_first) or accept(float(u[i]), float(p[x]), float(q[x])):
            out.append(x)
            continue
        # first rejection: resample from the residual and end the round
        out.append(draw_index(residual(p, q), rng))
        return out
    # all accepted: the bonus token comes from the target law after the last draft token
    out.append(draw_index(p_all[bonus_row(gamma)], rng))
    return out


def reference_sample_round(target_probs, draft_probs, draft_tokens, rng: np.random.Generator, warp: SamplingOptions | None = None) -> list[int]:
    """The correct round: accept/reject against w(p) with w(q) (w = identity by default), fresh uniforms, strict <."""
    return numpy_round(target_probs, draft_probs, draft_tokens, rng, warp_target=warp, warp_draft=warp)
