"""The exact warp of ``SamplingOptions`` (temperature, top-k, top-p), defined once for exact and float weights.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)). A warp w maps a law to a law; speculative decoding is lossless for
w(p) when the draft tokens come from w(q) and the accept/reject step compares w(p) with w(q)
(``specmath.speculative.warped``).

The semantics, applied to a row of weights in vocabulary order, in this order (the order of
Hugging Face's logits processors):

1. temperature T: w(x) ∝ p(x)^(1/T). T = 1 changes nothing; T = 0 is greedy: all mass on the
   argmax, the first listed token winning ties.
2. top-k: keep the k most likely tokens, ties broken by vocabulary order (exactly k survive),
   renormalise; the others get weight 0.
3. top-p (nucleus): sort most likely first (ties by vocabulary order) and keep the shortest prefix
   whose mass is >= top_p, renormalise.

Warped rows keep every vocabulary entry (removed tokens weigh 0), so p and q stay comparable.

The options are the one record ``specmath.sampling_options.SamplingOptions``; the exact warp implements
its temperature, top-k and top-p (``WARP_OPTIONS``) and refuses the others by name. The row functions below
are generic over the number type: ``Fraction`` weights give the exact warp (``warped(law, options)``, used
by toy LMs), float weights the float one (``specmath.speculative.reference_round.numpy_warp``). Two places
need the number type's help:

* the power p^(1/T): exact (p^k) when 1/T is an integer k; otherwise float(p) ** float(1/T) on
  both paths (the exact path converts that float with Fraction(float), so it is float-accurate);
* the top-p comparison: exact for Fractions; for floats a slack of 1e-12, because a cumulative
  float sum of probabilities whose exact sum is top_p can round to just below it.

The torch path (``specmath.lm.warps.warped_probs``) warps logits by the same record; tests/test_warps_agree.py
runs one table of cases through all three and checks they agree.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from fractions import Fraction
from typing import Any, TypeVar

from specmath.laws import Law, LawError, as_law
from specmath.sampling_options import WARP_OPTIONS, SamplingOptions
from specmath.validation import check_fraction, check_integer

__all__ = [
    "warped",
    "FLOAT_TOP_P_SLACK",
    "normalised",
    "temperature_row",
    "top_k_row",
    "top_p_row",
    "warp_row",
    "temperature",
    "top_k",
    "top_p",
]

Number = TypeVar("Number", Fraction, float)

#: slack of the float top-p comparison (see the module docstring)
FLOAT_TOP_P_SLACK = 1e-12


def normalised(row: Sequence[Number]) -> list[Number]:
    """w(x) / sum_y w(y); a row of zeros is an error."""
    total = sum(row[1:], row[0])
    if not total > 0:
        raise LawError(f"cannot normalise weights that sum to {total}")
    return [w / total for w in row]


def _most_likely_first(row: Sequence[Number]) -> list[int]:
    # a stable sort on -w: ties keep vocabulary order
    return sorted(range(len(row)), key=lambda i: -row[i])


def _power(w: Number, temperature: Fraction) -> Number:
    # w^(1/T): exact for an integer 1/T, else float(w) ** float(1/T) converted back to w's type
    inverse = 1 / temperature
    if inverse.denominator == 1:
        return w**inverse.numerator
    value = float(w) ** float(inverse)
    return Fraction(value) if isinstance(w, Fraction) else value


def temperature_row(row: Sequence[Number], temperature: Fraction) -> list[Number]:
    """w(x) ∝ p(x)^(1/T); T = 0: one-hot on the first argmax; T = 1: the row unchanged."""
    zero = row[0] * 0
    if temperature == 0:
        best = max(row)
        winner = next(i for i, w in enumerate(row) if w == best)
        return [zero + 1 if i == winner else zero for i in range(len(row))]
    if temperature == 1:
        return list(row)
    return normalised([_power(w, temperature) if w > 0 else zero for w in row])


def top_k_row(row: Sequence[Number], k: int) -> list[Number]:
    """Keep the k most likely entries (ties: vocabulary order), renormalise."""
    keep = set(_most_likely_first(row)[:k])
    zero = row[0] * 0
    return normalised([w if i in keep else zero for i, w in enumerate(row)])


def top_p_row(row: Sequence[Number], top_p: Fraction) -> list[Number]:
    """Keep the shortest most-likely-first prefix with mass >= top_p, renormalise."""
    zero = row[0] * 0
    # exact weights compare with top_p itself; float ones with top_p - slack
    threshold = top_p if isinstance(zero, Fraction) else float(top_p) - FLOAT_TOP_P_SLACK
    keep, mass = set(), zero
    for i in _most_likely_first(row):
        keep.add(i)
        mass += row[i]
        if mass >= threshold:
            break
    return normalised([w if i in keep else zero for i, w in enumerate(row)])


@functools.lru_cache(maxsize=256)
def _exact_parameters(options: SamplingOptions) -> tuple[Fraction, int | None, Fraction | None]:
    # (T, k, top_p) as the exact warp reads them, checked once per options record
    options.check_only(WARP_OPTIONS, "the exact warp")
    top_p = None if options.top_p is None else _check_top_p(options.top_p)
    return check_fraction(options.temperature, "temperature", min_value=0), options.top_k, top_p


def warp_row(row: Sequence[Number], options: SamplingOptions) -> list[Number]:
    """The warp of ``options`` on one row of weights: temperature, then top-k, then top-p."""
    temperature, k, top_p = _exact_parameters(options)
    out = temperature_row(row, temperature)
    if k is not None:
        out = top_k_row(out, k)
    if top_p is not None:
        out = top_p_row(out, top_p)
    return out


def _on_law(law: Law, row_function, *args) -> Law:
    # any Mapping outcome -> number is a law here (floats read as the decimals they print as)
    law = as_law(law)
    outcomes = list(law)
    return Law(dict(zip(outcomes, row_function([law[x] for x in outcomes], *args), strict=True)))


def temperature(law: Law, T: Any) -> Law:
    """w(x) ∝ law(x)^(1/T); T = 0 -> greedy (one-hot argmax, first token wins ties).

    Exact for 1/T a positive integer. Otherwise law(x)^(1/T) is computed in float and converted
    exactly with Fraction(float) (the result is still a valid law, but only float-accurate).
    """
    return _on_law(law, temperature_row, check_fraction(T, "temperature", min_value=0))


def _check_top_k(k: object) -> int:
    return check_integer(k, "top-k's k", min_value=1)


def _check_top_p(p: Any) -> Fraction:
    return check_fraction(p, "top-p", min_value=0, max_value=1, open_min=True)


def top_k(law: Law, k: int) -> Law:
    """Keep the k most likely tokens (ties: vocabulary order), renormalise; others get 0."""
    return _on_law(law, top_k_row, _check_top_k(k))


def top_p(law: Law, p: Any) -> Law:
    """Nucleus: the smallest most-likely-first prefix with mass >= p, renormalised."""
    return _on_law(law, top_p_row, _check_top_p(p))


def warped(law: Law, options: SamplingOptions) -> Law:
    """w(law), exactly: the law warped by ``options`` (temperature, then top-k, then top-p)."""
    return _on_law(law, warp_row, options)
