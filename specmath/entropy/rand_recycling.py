"""rand_a -> rand_b with unbounded recycling: never throw a rejected value away.

State: a value v uniform on 0..n-1 (the start is v = 0, n = 1: nothing known yet).

1. While n < b, roll: v' = a v + (r - 1) is uniform on 0..a n - 1 (one more base-a digit).
2. With m = b floor(n / b), the largest multiple of b not above n: if v < m, output v mod b + 1
   (uniform on 1..b, since each residue appears m / b times among 0..m-1).
3. Otherwise v - m is uniform on 0..(n mod b) - 1: carry it as the new state (``Recur``) and go to 1.

The article stops after three such levels (25 -> 20 -> 30) and falls back to the memoryless sampler;
here the leftover (of size n mod b < b, so finitely many states) is carried until an output happens.
For 5 -> 7 the sizes cycle 25 -> 4 -> 20 -> 6 -> 30 -> 2 -> 10 -> 3 -> 15 -> 1 -> 5 -> 25, and the exact
interpreter gives E[calls] = 1115/504 ~ 2.2123 (basic: 50/21 ~ 2.3810, article: 5816/2625 ~ 2.2156).

Why nothing producing *one output at a time* does better (Knuth-Yao). Any sampler that stops
after T base-a digits and outputs a uniform value on 1..b is a DDG tree: by depth k its leaves
labelled j carry a multiple of a^(-k) not above 1/b, so at most floor(a^k / b) b / a^k of the mass
has stopped, i.e. P(T > k) >= (a^k mod b) / a^k. Summing over k,
E[T] >= sum_(k>=0) (a^k mod b) / a^k = ``knuth_yao.optimal_expected_draws(uniform b, a)``.
This sampler's leftover size after k rolls is exactly a^k mod b, so it meets the bound at every k:
E[T] equals it (checked exactly for many (a, b) in the tests). Doing better needs several outputs
to share the leftover: ``specmath.entropy.recycling_stream`` reaches log_a(b) calls per output.

References: D. Knuth, A. Yao, "The complexity of nonuniform random number generation" (1976);
T. Draper, F. Saad, "Efficient online random sampling via randomness recycling" (arXiv:2505.18879, 2025).
"""

from __future__ import annotations

from fractions import Fraction

from specmath.classic.rand7 import check_die_sizes, uniform_target
from specmath.entropy.knuth_yao import optimal_expected_draws
from specmath.program import Recur, die
from specmath.validation import check_integer

__all__ = ["rand_recycling", "refill", "rand7_recycling", "knuth_yao_bound", "leftover_sizes"]


def refill(a: int, value: object, size: object, bound: int, label: str):
    """Sampling program: roll a-sided dice until ``size`` >= ``bound``; returns the new (value, size).

    ``value`` must be uniform on 0..size-1 (checked to be integers 0 <= value < size); each roll
    appends one base-a digit, v' = a v + (r - 1), n' = a n, so v' stays uniform on 0..n'-1.
    """
    size = check_integer(size, "the leftover state's size", min_value=1)
    value = check_integer(value, "the leftover state's value (0 <= value < size)", min_value=0, max_value=size - 1)
    while size < bound:
        r = yield die(a, label=label)
        value, size = a * value + (r - 1), a * size
    return value, size


def rand_recycling(a: int = 5, b: int = 7, value: int = 0, size: int = 1, label: str = "rand5"):
    """Sampling program: uniform on 1..b from a-sided dice, carrying the leftover (value, size).

    ``value`` is uniform on 0..size-1 given everything the caller knows; the defaults start fresh.
    E[calls] = sum_(k>=0) (a^k mod b) / a^k (the Knuth-Yao optimum); 1115/504 for 5 -> 7.
    """
    a, b = check_die_sizes(a, b)
    value, size = yield from refill(a, value, size, b, label)
    m = b * (size // b)  # the largest multiple of b not above n
    if value < m:
        return value % b + 1
    # rejected: v - m is uniform on 0..(n - m) - 1, independent of everything else; keep it
    return Recur(rand_recycling, a, b, value - m, size - m, label)


def rand7_recycling():
    """rand5 -> rand7 with unbounded recycling: E[calls] = 1115/504."""
    return (yield from rand_recycling(5, 7))


def knuth_yao_bound(a: int, b: int) -> Fraction:
    """The least E[calls] of any one-output-at-a-time sampler: sum_(k>=0) (a^k mod b) / a^k."""
    a, b = check_die_sizes(a, b)
    return optimal_expected_draws(uniform_target(b), a)


def leftover_sizes(a: int, b: int, rolls: int) -> list[int]:
    """The leftover size after k = 0..rolls rolls with no output yet: a^k mod b (1 at k = 0).

    P(no output after k rolls) = leftover / a^k, the Knuth-Yao bound term by term.
    """
    a, b = check_die_sizes(a, b)
    rolls = check_integer(rolls, "rolls (the number of rolls)", min_value=0)
    sizes, size = [], 1
    for _ in range(rolls + 1):
        sizes.append(size)
        size = size * a if size * a < b else (size * a) % b
    return sizes
