"""An absorbing Markov chain over program calls, solved exactly (Gaussian elimination over the rationals).

The exact interpreter reaches program calls through RESTART and Recur; they are the chain's
transient states. For state i, with T[i][j] the probability that one attempt of i continues as j,
A[i][x] the probability that it returns the outcome x, and C[i][c] the expected cost c of one attempt,

    h_i(x) = A[i][x] + sum_j T[i][j] h_j(x)         (law of the final outcome)
    k_i(c) = C[i][c] + sum_j T[i][j] k_j(c)         (expected total cost)

i.e. (I - T) h = A and (I - T) k = C, solved here for the start state 0 on the augmented matrix
[I - T | A | C]. For a plain restart loop (one state, T = r) this is the familiar h = A / (1 - r).
A pivot that is 0 means a set of states that restart among themselves forever: the program does not
halt with probability 1, an error rather than a truncated answer.

Weights are Fractions, or sympy expressions for the symbolic interpreter, which passes a
``simplify`` applied after every operation (so expressions stay rational functions in lowest terms).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from specmath.driver import NotExactError

__all__ = ["ChainState", "solve_chain"]


@dataclass
class ChainState:
    """One attempt of one program call, summed over its paths."""

    continues: dict[int, Any] = field(default_factory=dict)  # T[i][j]: P(the attempt continues as state j)
    returns: dict[Hashable, Any] = field(default_factory=dict)  # A[i][x]: P(the attempt returns x)
    costs: dict[str, Any] = field(default_factory=dict)  # C[i][c]: E[cost c of the attempt]

    def restart_probability(self) -> Any:
        """P(the attempt ends in RESTART or Recur) = sum_j T[i][j]."""
        return sum(self.continues.values(), 0)


def solve_chain(states: list[ChainState], simplify: Callable[[Any], Any]) -> tuple[dict, dict]:
    """(h_0, k_0): the law of the outcome and the expected total costs, from the start state 0."""
    outcomes = list(dict.fromkeys(x for s in states for x in s.returns))
    labels = list(dict.fromkeys(c for s in states for c in s.costs))
    n = len(states)
    if n == 1:
        stay = simplify(1 - states[0].continues.get(0, 0))
        if stay == 0:
            raise NotExactError("the program restarts with probability 1: it never returns")
        law = {x: simplify(_divide(w, stay)) for x, w in states[0].returns.items()}
        costs = {c: simplify(_divide(v, stay)) for c, v in states[0].costs.items()}
        return law, costs
    rows = [_augmented_row(i, s, n, outcomes, labels) for i, s in enumerate(states)]
    for col in range(n):
        pivot = next((r for r in range(col, n) if simplify(rows[r][col]) != 0), None)
        if pivot is None:
            raise NotExactError(
                "some reachable program state never returns (the chain has a closed loop of restarts); "
                "the program does not halt with probability 1"
            )
        rows[col], rows[pivot] = rows[pivot], rows[col]
        pv = rows[col][col]
        rows[col] = [simplify(_divide(v, pv)) for v in rows[col]]
        for r in range(n):
            if r != col and rows[r][col] != 0:
                factor = rows[r][col]
                rows[r] = [simplify(a - factor * b) for a, b in zip(rows[r], rows[col])]
    start = rows[0]
    law = {x: start[n + a] for a, x in enumerate(outcomes)}
    costs = {c: start[n + len(outcomes) + b] for b, c in enumerate(labels)}
    return law, costs


def _augmented_row(i: int, state: ChainState, n: int, outcomes: list, labels: list) -> list:
    """Row i of [I - T | A | C]."""
    row: list = [0] * (n + len(outcomes) + len(labels))
    row[i] = 1
    for j, w in state.continues.items():
        row[j] = row[j] - w
    for a, x in enumerate(outcomes):
        row[n + a] = state.returns.get(x, 0)
    for b, c in enumerate(labels):
        row[n + len(outcomes) + b] = state.costs.get(c, 0)
    return row


def _divide(x: Any, y: Any) -> Any:
    """x / y, kept exact when both are plain ints (int / int would make a float in Python)."""
    if isinstance(x, int) and isinstance(y, int):
        return Fraction(x, y)
    return x / y
