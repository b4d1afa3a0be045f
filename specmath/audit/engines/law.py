"""The exact law an engine must sample from, computed from raw logits independently of the engine's code.

Notation: p = target law, z = the target's raw next-token logits, w = the engine's sampling chain
(``SamplingOptions`` applied as ``EngineSemantics`` says), c = the prompt.

* ``sampling_law``: one position, w(z) in float64, stage by stage in the engine's order:
  logit bias z(x) += b(x); penalties (``specmath.audit.engines.penalties``, from the emitted prefix);
  temperature z / T; top-k (keep z >= the k-th largest: ties at the boundary are kept, where an engine
  that sorts keeps exactly k: a real model's float logits do not tie there); top-p (softmax at that
  point; keep the most likely tokens while the mass strictly before them is < top_p); min-p (keep
  softmax >= min_p * its maximum); then the softmax.
* ``first_token_law``: x1 ~ w(z(. | c)).
* ``two_token_law``: (x1, x2) ~ w(z(. | c))(x1) w(z(. | c x1), history c x1)(x2): the second position's
  law is computed for every first token x1 of expected count N w(p)(x1) >= ``MIN_EXPECTED``, from its own
  prefix (penalties count x1). Cells of expected count below it are pooled into (x1, OTHER), rarer x1
  into one (OTHER,) cell, so every cell of the G-test expects at least 5 (its chi-square approximation).
  Outcomes of probability below ``NEGLIGIBLE`` (a banned token: logit bias -100, presence penalty 100)
  are left out of every cell: one observed is an impossible outcome, a certain failure, which a correct
  engine produces with probability below N * V^2 * NEGLIGIBLE < 1e-7 here, far below the audit's 1e-6.

``Logits`` is any function from contexts to their raw next-token logits: the torch target of a pair,
or the engine's own non-speculative forward (so a quantised engine is held to its own model, and its
quantisation is measured apart: ``specmath.audit.engines.runner``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from specmath.audit.engines.penalties import penalised_logits
from specmath.audit.engines.semantics import EngineSemantics
from specmath.sampling_options import SamplingOptions

__all__ = ["Logits", "sampling_law", "first_token_law", "two_token_law", "two_token_rows", "MIN_EXPECTED", "OTHER",
           "NEGLIGIBLE", "tv_distance"]

#: contexts -> (len(contexts), V) raw logits at each context's last position
Logits = Callable[[list[list[int]]], np.ndarray]

#: smallest expected count of a cell of the two-token test
MIN_EXPECTED = 5.0
OTHER = "other"
#: an outcome less likely than this is treated as impossible (see above)
NEGLIGIBLE = 1e-20


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max())
    return e / e.sum()


def sampling_law(logits: np.ndarray, options: SamplingOptions, semantics: EngineSemantics,
                 prompt: Sequence[int] = (), generated: Sequence[int] = ()) -> np.ndarray:
    """(V,) raw logits -> (V,) float64 law w(z) at the position after ``prompt`` + ``generated``."""
    z = np.array(logits, dtype=np.float64)
    for stage in semantics.order:
        if stage == "logit_bias":
            for token, bias in options.logit_bias:
                z[token] += bias
        elif stage == "penalties" and options.penalised:
            z = penalised_logits(z, prompt, generated, options, semantics)
        elif stage == "temperature":
            z = z / options.temperature
        elif stage == "top_k" and options.top_k is not None and options.top_k < z.size:
            kth = np.sort(z)[-options.top_k]
            z = np.where(z >= kth, z, -np.inf)
        elif stage == "top_p" and options.top_p is not None and options.top_p < 1:
            law = _softmax(z)
            order = np.argsort(-law, kind="stable")
            before = np.cumsum(law[order]) - law[order]  # the mass strictly more likely than each token
            keep = np.zeros(z.size, dtype=bool)
            keep[order[before < options.top_p]] = True
            z = np.where(keep, z, -np.inf)
        elif stage == "min_p" and options.min_p is not None and options.min_p > 0:
            law = _softmax(z)
            z = np.where(law >= options.min_p * law.max(), z, -np.inf)
    return _softmax(z)


def first_token_law(logits: Logits, prompt: Sequence[int], options: SamplingOptions,
                    semantics: EngineSemantics) -> np.ndarray:
    """w(z(. | prompt)) as a float64 vector."""
    return sampling_law(logits([list(prompt)])[0], options, semantics, prompt)


def two_token_law(logits: Logits, prompt: Sequence[int], options: SamplingOptions, semantics: EngineSemantics, n: int,
                  *, p1: np.ndarray | None = None) -> tuple[dict, set]:
    """({cell: probability}, frequent x1): cells (x1, x2), (x1, OTHER), (OTHER,) as described above."""
    cells, rows = two_token_rows(logits, prompt, options, semantics, n, p1=p1)
    return cells, set(rows)


def two_token_rows(logits: Logits, prompt: Sequence[int], options: SamplingOptions, semantics: EngineSemantics, n: int,
                   *, p1: np.ndarray | None = None) -> tuple[dict, dict]:
    """({cell: probability}, {frequent x1: the (V,) joint law P(x1, .)}): the cells and what they pool."""
    p1 = first_token_law(logits, prompt, options, semantics) if p1 is None else p1
    frequent = [int(x) for x in np.flatnonzero(n * p1 >= MIN_EXPECTED)]
    cells: dict = {}
    joints: dict = {}
    for x1, row in zip(frequent, logits([[*prompt, x1] for x1 in frequent]) if frequent else [], strict=True):
        joint = p1[x1] * sampling_law(row, options, semantics, prompt, [x1])  # P(x1, x2)
        joints[x1] = joint
        big = n * joint >= MIN_EXPECTED
        for x2 in np.flatnonzero(big):
            cells[(x1, int(x2))] = float(joint[x2])
        rest = float(joint[~big & (joint >= NEGLIGIBLE)].sum())
        if rest > 0:
            cells[(x1, OTHER)] = rest
    rare = np.ones(p1.size, dtype=bool)
    rare[frequent] = False
    rare_mass = float(p1[rare & (p1 >= NEGLIGIBLE)].sum())
    if rare_mass > 0:
        cells[(OTHER,)] = rare_mass
    return cells, joints


def tv_distance(a: dict | np.ndarray, b: dict | np.ndarray) -> float:
    """Total variation 1/2 sum_x |a(x) - b(x)| of two laws (vectors, or dicts of cells)."""
    if isinstance(a, dict):
        return 0.5 * sum(abs(a.get(k, 0.0) - b.get(k, 0.0)) for k in set(a) | set(b))
    return float(0.5 * np.abs(np.asarray(a) - np.asarray(b)).sum())
