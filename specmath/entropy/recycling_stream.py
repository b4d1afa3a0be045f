"""A recycling stream: rand_a -> rand_b outputs that share one leftover uniform state.

``rand_recycling`` keeps its leftover only until *its* output; a stream keeps it across outputs
(randomness recycling, Draper & Saad 2025; the same bookkeeping as arithmetic decoding).
State: v uniform on 0..n-1, independent of every output so far.

1. Fill: while n < ``bound``, roll: v' = a v + (r - 1), n' = a n.
2. With m = b floor(n / b): if v < m, output x = v mod b + 1 and keep the *quotient* v // b,
   uniform on 0..m/b - 1 and independent of x (v < m is a uniform pair (v // b, v mod b)).
3. Else keep v - m, uniform on 0..(n - m) - 1, and go back to 1 (``Recur``, solved exactly).

Each output spends log_a(n) - log_a(m / b) = log_a(b) + log_a(n / m) digits of the state's
information, and n / m < 1 + b / bound, so the amortised calls per output tend to the entropy
limit log_a(b) (log_5 7 = 1.20906) as ``bound`` grows; ``bound`` is the state size parameter.

The exact interpreter proves one output step (``stream_next``) and threads the state through k
outputs (``stream_joint_law``): for 5 -> 7 the first three outputs are i.i.d. uniform, exactly.
``RecyclingStream`` runs the same algorithm on plain integers for the 10^6-output measurement
(``benchmarks/entropy_stream.py``); the tests check it agrees with ``stream_next`` draw for draw.

References: T. Draper, F. Saad, "Efficient online random sampling via randomness recycling"
(arXiv:2505.18879, 2025); J. Lumbroso, "Optimal discrete uniform generation from coin flips, and
applications" (arXiv:1304.1916, 2013).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from fractions import Fraction

import numpy as np

from specmath.classic.rand7 import check_die_sizes
from specmath.driver import Call, run
from specmath.entropy.rand_recycling import refill
from specmath.exact import exact
from specmath.laws import Law, LawError
from specmath.program import Recur, die
from specmath.validation import InvalidArgument, check_generator, check_integer

__all__ = ["stream_next", "stream_joint_law", "stream_step_from_uniform", "long_run_calls_per_output", "RecyclingStream", "numpy_rolls", "run_program_on_rolls", "GivenRolls", "check_bound"]


def check_bound(b: int, bound: int) -> int:
    """The state size ``bound`` as an int >= b (an output must fit in the state); InvalidArgument otherwise."""
    return check_integer(bound, "the stream's state size bound (at least b)", min_value=b)


def stream_next(a: int, b: int, bound: int, value: int, size: int, label: str = "rand5"):
    """Sampling program: one output of the stream from state (value uniform on 0..size-1).

    Returns (x, value', size'): x uniform on 1..b, value' uniform on 0..size'-1, independent of x.
    """
    a, b = check_die_sizes(a, b)
    bound = check_bound(b, bound)
    value, size = yield from refill(a, value, size, bound, label)
    m = size - size % b  # b floor(n / b)
    if value < m:
        # v < m is the uniform pair (v // b, v mod b): output one, keep the other
        return (value % b + 1, value // b, m // b)
    # v - m is uniform on 0..n - m - 1: recycle the rejected part too
    return Recur(stream_next, a, b, bound, value - m, size - m, label)


def stream_joint_law(a: int, b: int, bound: int, k: int, label: str = "rand5") -> tuple[Law, Fraction]:
    """The exact law of the first k outputs (a Law over k-tuples) and E[calls for k outputs].

    The state is threaded through: P(x_1..x_k, s_k) = sum_(s_(k-1)) P(x_1..x_(k-1), s_(k-1))
    P_step(x_k, s_k | s_(k-1)), each step law from ``exact(stream_next, ..., state)``.
    """
    a, b = check_die_sizes(a, b)
    bound = check_bound(b, bound)
    k = check_integer(k, "k (the number of outputs)", min_value=1)
    steps: dict[tuple[int, int], tuple[Law, Fraction]] = {}
    dist: dict[tuple, Fraction] = {((), 0, 1): Fraction(1)}
    calls = Fraction(0)
    for _ in range(k):
        nxt: dict[tuple, Fraction] = {}
        for (outs, value, size), w in dist.items():
            if (value, size) not in steps:
                res = exact(stream_next, a, b, bound, value, size, label)
                steps[(value, size)] = (res.law, res.expected_cost(label))
            law, cost = steps[(value, size)]
            calls += w * cost
            for (x, v2, n2), w2 in law.items():
                key = (outs + (x,), v2, n2)
                nxt[key] = nxt.get(key, Fraction(0)) + w * w2
        dist = nxt
    joint: dict[tuple, Fraction] = {}
    for (outs, _, _), w in dist.items():
        joint[outs] = joint.get(outs, Fraction(0)) + w
    return Law(joint, name=f"first {k} stream outputs"), calls


def stream_step_from_uniform(a: int, b: int, bound: int, size: int, label: str = "rand5"):
    """Sampling program: draw the state value uniform on 0..size-1 (label "state"), then one output.

    Its exact law is the invariant that makes the stream i.i.d.: if v is uniform given n, then
    P(x, v', n') = (1/b) P(n') (1/n') -- the output is uniform and independent of the new state,
    whose value is again uniform given its size.
    """
    v = yield die(size, label="state")
    return (yield from stream_next(a, b, bound, v - 1, size, label))


def long_run_calls_per_output(a: int, b: int, bound: int, label: str = "rand5") -> Fraction:
    """Exact long-run calls per output: sum_n pi(n) c(n) over the chain of state sizes.

    By the invariant the size n alone is a Markov chain (v is uniform given n); c(n) is the exact
    expected calls of one output from size n and pi its stationary law, pi = pi P, sum pi = 1.
    """
    a, b = check_die_sizes(a, b)
    bound = check_bound(b, bound)
    order, index, rows, costs = [1], {1: 0}, [], []
    while len(rows) < len(order):
        res = exact(stream_step_from_uniform, a, b, bound, order[len(rows)], label)
        row: dict[int, Fraction] = {}
        for (_, _, n2), w in res.law.items():
            if n2 not in index:
                index[n2] = len(order)
                order.append(n2)
            row[index[n2]] = row.get(index[n2], Fraction(0)) + w
        rows.append(row)
        costs.append(res.expected_cost(label))
    pi = _stationary(rows, len(order))
    return sum((p * c for p, c in zip(pi, costs, strict=True)), Fraction(0))


def _stationary(rows: list[dict[int, Fraction]], n: int) -> list[Fraction]:
    """Solve pi (P - I) = 0 with sum pi = 1 by Gaussian elimination over the rationals."""
    # equations: for each state j, sum_i pi_i (P[i][j] - [i == j]) = 0; the last one replaced by sum pi = 1
    mat = [[Fraction(0)] * (n + 1) for _ in range(n)]
    for i, row in enumerate(rows):
        for j, w in row.items():
            mat[j][i] += w
        mat[i][i] -= 1
    mat[n - 1] = [Fraction(1)] * n + [Fraction(1)]
    for col in range(n):
        pivot = next((r for r in range(col, n) if mat[r][col] != 0), None)
        if pivot is None:
            raise LawError("the chain of state sizes has no unique stationary law")
        mat[col], mat[pivot] = mat[pivot], mat[col]
        pv = mat[col][col]
        mat[col] = [v / pv for v in mat[col]]
        for r in range(n):
            if r != col and mat[r][col] != 0:
                f = mat[r][col]
                mat[r] = [x - f * y for x, y in zip(mat[r], mat[col], strict=True)]
    return [mat[i][n] for i in range(n)]


class RecyclingStream:
    """The same algorithm as ``stream_next`` on plain integers, for long sampled runs.

    ``rolls`` is an iterator of die faces 1..a (e.g. ``numpy_rolls(a, rng)``); ``calls`` counts
    the faces consumed so far.
    """

    def __init__(self, a: int, b: int, bound: int, rolls: Iterator[int]):
        a, b = check_die_sizes(a, b)
        bound = check_bound(b, bound)
        self.a, self.b, self.bound, self.rolls = a, b, bound, rolls
        self.value, self.size, self.calls = 0, 1, 0

    def __iter__(self) -> RecyclingStream:
        return self

    def __next__(self) -> int:
        a, b, bound, rolls = self.a, self.b, self.bound, self.rolls
        value, size, calls = self.value, self.size, self.calls
        while True:
            while size < bound:
                value, size, calls = a * value + (next(rolls) - 1), a * size, calls + 1
            m = size - size % b
            if value < m:
                self.value, self.size, self.calls = value // b, m // b, calls
                return value % b + 1
            value, size = value - m, size - m

    def take(self, n: int) -> list[int]:
        """The next n outputs."""
        return [next(self) for _ in range(n)]


def numpy_rolls(a: int, rng: np.random.Generator, chunk: int = 1 << 16) -> Iterator[int]:
    """An endless iterator of fair die faces 1..a from a seeded numpy Generator."""
    check_generator(rng)
    while True:
        yield from rng.integers(1, a + 1, size=chunk).tolist()


class GivenRolls:
    """A handler (``specmath.driver``) that answers every die request with the next of the given faces."""

    def __init__(self, rolls: Iterator[int]) -> None:
        self.rolls = rolls

    def answer(self, request) -> int:
        face = next(self.rolls, None)
        if face is None:
            raise InvalidArgument("the given die faces ran out before the outputs asked for")
        return face


def run_program_on_rolls(a: int, b: int, bound: int, rolls: Iterator[int], n: int) -> tuple[list[int], int]:
    """Drive the *proved* program ``stream_next`` with given die faces: (n outputs, faces used).

    The shared driver answers each die request with the next face (``GivenRolls``) and follows
    Recur; the returned state is fed to the next output. The tests compare it with ``RecyclingStream``.
    """
    value, size, outs, costs = 0, 1, [], Counter()
    handler = GivenRolls(rolls)
    for _ in range(n):
        x, value, size = run(Call(stream_next, (a, b, bound, value, size)), handler, costs)
        outs.append(x)
    return outs, sum(costs.values())  # every request of stream_next is one die roll
