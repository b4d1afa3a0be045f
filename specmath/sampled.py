"""The sampled interpreter: run a sampling program with an explicit, seeded random generator.

The same generator function that ``specmath.exact`` enumerates is executed here once per sample,
each request answered from a ``numpy.random.Generator`` (never the global random state):

* ``die``/``draw``: one uniform u in [0, 1) located in the cumulative float weights;
* ``coin(p)``: True iff u < p (u a double, p compared exactly as a Fraction).

Floats appear only here, on the sampled side. RESTART and Recur loop until an outcome is returned;
``max_attempts`` turns a program that never returns into an error instead of a hang.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from specmath.exact import NotExactError
from specmath.laws import Law
from specmath.program import RESTART, Coin, Draw, Recur, Tick
from specmath.validation import check_generator

__all__ = ["sample", "sample_with_costs", "sample_many", "empirical_counts"]

_CUMULATIVE: dict[int, tuple[Law, list, np.ndarray]] = {}


def _cumulative(law: Law) -> tuple[list, np.ndarray]:
    cached = _CUMULATIVE.get(id(law))
    if cached is not None and cached[0] is law:
        return cached[1], cached[2]
    outcomes = [x for x, w in law.items() if w > 0]
    cum = np.cumsum([float(law[x]) for x in outcomes])
    if len(_CUMULATIVE) > 4096:
        _CUMULATIVE.clear()
    _CUMULATIVE[id(law)] = (law, outcomes, cum)
    return outcomes, cum


def _answer(request: Draw | Coin, rng: np.random.Generator) -> Any:
    if isinstance(request, Coin):
        return bool(rng.random() < request.p)
    outcomes, cum = _cumulative(request.law)
    i = int(np.searchsorted(cum, rng.random() * cum[-1], side="right"))
    return outcomes[min(i, len(outcomes) - 1)]  # guard against float round-off at the top end


def sample_with_costs(
    program: Callable, *args: Any, rng: np.random.Generator, max_attempts: int = 1_000_000, **kwargs: Any
) -> tuple[Any, Counter]:
    """One outcome of ``program(*args, **kwargs)`` and the costs it spent (requests per label)."""
    check_generator(rng)
    costs: Counter = Counter()
    fn, call_args, call_kwargs = program, args, kwargs
    for _ in range(max_attempts):
        gen = fn(*call_args, **call_kwargs)
        try:
            request = gen.send(None)
            while True:
                if isinstance(request, Tick):
                    costs[request.label] += request.amount
                    request = gen.send(None)
                    continue
                costs[request.label] += 1
                request = gen.send(_answer(request, rng))
        except StopIteration as stop:
            end = stop.value
        if end is RESTART:
            continue
        if isinstance(end, Recur):
            fn, call_args, call_kwargs = end.fn, end.args, {}
            continue
        return end, costs
    raise NotExactError(f"no outcome after {max_attempts} attempts: the program may never return")


def sample(program: Callable, *args: Any, rng: np.random.Generator, **kwargs: Any) -> Any:
    """One outcome of ``program(*args, **kwargs)``, with randomness from ``rng``."""
    return sample_with_costs(program, *args, rng=rng, **kwargs)[0]


def sample_many(program: Callable, n: int, *args: Any, rng: np.random.Generator, **kwargs: Any) -> list:
    """``n`` independent outcomes of the program."""
    return [sample(program, *args, rng=rng, **kwargs) for _ in range(n)]


def empirical_counts(outcomes: list) -> Counter:
    """Outcome -> count, the histogram of a list of samples."""
    return Counter(outcomes)
