"""rand_a -> rand_b: a uniform integer on 1..b from a fair a-sided die (the article: rand5 -> rand7).

Basic rejection. Two rolls make a uniform value on 1..a^2 ("base-a digits":
a * (r1 - 1) + r2); keep it if it is <= the largest multiple m of b, map with (v - 1) % b + 1,
else start over. For 5 -> 7: m = 21, P(reject) = 4/25, E[calls] = 2 * 25/21 = 50/21 ~ 2.381.

The article's recycling version. A rejected value v in m+1..a^2 is itself uniform on 1..(a^2 - m);
combine it with one more roll into a uniform value on 1..a (a^2 - m), and so on. The article stops
after three levels (25 -> 20 -> 30) and falls back to the basic sampler.

Both are sampling programs (see ``specmath.program``); the level at which an output is produced is
recorded with ``tick("level k")`` so its exact probability is an expected cost.
"""

from __future__ import annotations

from fractions import Fraction

from specmath.laws import uniform
from specmath.program import RESTART, Recur, die, tick
from specmath.validation import InvalidArgument, check_integer

__all__ = ["rand_basic", "rand_article", "rand7_basic", "rand7_article", "check_die_sizes", "uniform_target"]


def check_die_sizes(a: int, b: int) -> tuple[int, int]:
    """(a, b) as ints >= 2 (the die's sides and the target range of rand_a -> rand_b); InvalidArgument otherwise."""
    return (check_integer(a, "a (rand_a -> rand_b: the die's sides)", min_value=2),
            check_integer(b, "b (rand_a -> rand_b: the target range)", min_value=2))


def uniform_target(b: int):
    """The target law: uniform on 1..b."""
    return uniform(range(1, b + 1))


def _rolls_needed(a: int, b: int) -> int:
    """Smallest k with a^k >= b: the number of rolls combined per attempt."""
    k, size = 1, a
    while size < b:
        k, size = k + 1, size * a
    return k


def rand_basic(a: int = 5, b: int = 7, label: str | None = None):
    """Basic rejection: combine k rolls (a^k >= b, k = 2 for 5 -> 7), keep values <= m = b*floor(a^k/b).

    E[calls] = k * a^k / m; for 5 -> 7 that is 2 * 25/21 = 50/21. Rolls are counted under
    ``label``, by default the die's own name "rand<a>".
    """
    a, b = check_die_sizes(a, b)
    label = f"rand{a}" if label is None else label  # the die's own name: rand2, rand5, ...
    k = _rolls_needed(a, b) if a < b else 1
    size = a**k
    value = 0
    for _ in range(k):
        r = yield die(a, label=label)
        value = a * value + (r - 1)  # base-a digits: uniform on 0..a^k - 1
    m = b * (size // b)  # largest multiple of b not above a^k
    if value < m:
        return value % b + 1
    return RESTART


def rand_article(a: int = 5, b: int = 7, levels: int = 3, label: str | None = None):
    """The article's recycling sampler, generalised: up to ``levels`` levels, then the basic one.

    Level 1 uses two rolls (uniform on 1..a^2); a rejected value leaves r uniform on 1..(size - m),
    and one more roll makes a * r-range values: 25 -> 20 -> 30 for 5 -> 7. Falls back to
    ``rand_basic`` (a fresh, memoryless loop) after the last level, as the article does.
    """
    a, b = check_die_sizes(a, b)
    label = f"rand{a}" if label is None else label  # the die's own name: rand2, rand5, ...
    if a >= b:
        raise InvalidArgument(f"the article's recycling needs a < b (a die smaller than the target); got a={a}, b={b}")
    r1 = yield die(a, label=label)
    r2 = yield die(a, label=label)
    value, size = a * (r1 - 1) + (r2 - 1), a * a  # uniform on 0..size-1
    for level in range(1, levels + 1):
        m = b * (size // b)
        if value < m:
            yield tick(f"level {level}")
            return value % b + 1
        value, size = value - m, size - m  # the rejected part is uniform on 0..size-m-1: keep it
        if level == levels:
            break
        r = yield die(a, label=label)
        value, size = a * value + (r - 1), a * size
    yield tick("fallback")
    return Recur(rand_basic, a, b, label)


def rand7_basic():
    """The article's rand7_basic: rand5 -> rand7 by rejection."""
    return (yield from rand_basic(5, 7))


def rand7_article():
    """The article's rand7_optimized: three recycling levels, then rand7_basic."""
    return (yield from rand_article(5, 7, 3))


def expected_calls_basic(a: int = 5, b: int = 7) -> Fraction:
    """Closed form k * a^k / (b * floor(a^k / b)) for ``rand_basic``."""
    a, b = check_die_sizes(a, b)
    k = _rolls_needed(a, b) if a < b else 1
    size = a**k
    return Fraction(k * size, b * (size // b))
