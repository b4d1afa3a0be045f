"""The sampled interpreter: run a sampling program with an explicit, seeded random generator.

The same generator function that ``specmath.exact`` enumerates is driven here by the same loop
(``specmath.driver``), once per sample, each request answered by ``GeneratorHandler`` from a
``numpy.random.Generator`` (never the global random state):

* ``die``/``draw``: one uniform u in [0, 1) located in the cumulative float weights W_1 <= ... <= W_n:
  the answer is outcome i for the first i with W_i > u W_n;
* ``coin(p)``: True iff u < p (u a double, p compared exactly as a Fraction).

Floats appear only here, on the sampled side. RESTART and Recur are followed until an outcome is
returned; ``max_attempts`` turns a program that never returns into an error instead of a hang.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from specmath.driver import Call, run
from specmath.laws import Law
from specmath.program import Coin, Draw
from specmath.validation import check_generator

__all__ = ["GeneratorHandler", "sample", "sample_with_costs", "sample_many", "empirical_counts"]


def _cumulative(law: Law) -> tuple[list, np.ndarray]:
    """The outcomes of positive weight and their cumulative float weights (kept with the law)."""
    outcomes = [x for x, w in law.items() if w > 0]
    return outcomes, np.cumsum([float(law[x]) for x in outcomes])


class GeneratorHandler:
    """Answers each request from the seeded numpy Generator ``rng``."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = check_generator(rng)

    def answer(self, request: Draw | Coin) -> Any:
        if isinstance(request, Coin):
            return bool(self.rng.random() < request.p)
        outcomes, cum = request.law.derived("cumulative", _cumulative)
        i = int(np.searchsorted(cum, self.rng.random() * cum[-1], side="right"))
        return outcomes[min(i, len(outcomes) - 1)]  # guard against float round-off at the top end


def sample_with_costs(
    program: Callable, *args: Any, rng: np.random.Generator, max_attempts: int = 1_000_000, **kwargs: Any
) -> tuple[Any, Counter]:
    """One outcome of ``program(*args, **kwargs)`` and the costs it spent (requests per label)."""
    costs: Counter = Counter()
    outcome = run(Call.of(program, args, kwargs), GeneratorHandler(rng), costs, max_attempts=max_attempts)
    return outcome, costs


def sample(program: Callable, *args: Any, rng: np.random.Generator, **kwargs: Any) -> Any:
    """One outcome of ``program(*args, **kwargs)``, with randomness from ``rng``."""
    return sample_with_costs(program, *args, rng=rng, **kwargs)[0]


def sample_many(program: Callable, n: int, *args: Any, rng: np.random.Generator, **kwargs: Any) -> list:
    """``n`` independent outcomes of the program."""
    return [sample(program, *args, rng=rng, **kwargs) for _ in range(n)]


def empirical_counts(outcomes: list) -> Counter:
    """Outcome -> count, the histogram of a list of samples."""
    return Counter(outcomes)
