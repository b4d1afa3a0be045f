"""Weighted reservoir sampling (A-Res) and Algorithm L's skips, with their exact laws.

A-Res (Efraimidis & Spirakis 2006): give item i the key u_i^(1/w_i), u_i uniform on (0, 1), and keep
the k largest keys. A key has CDF P(u^(1/w) <= x) = x^w, density w x^(w-1), so the keys of the items
i_1, ..., i_k come out largest, in that order, above all the others R with probability

    int_(1 > x_1 > ... > x_k > 0) prod_j w_(i_j) x_j^(w_(i_j) - 1) prod_(r in R) x_k^(w_r) dx
      = prod_j w_(i_j) / (W - w_(i_1) - ... - w_(i_(j-1))),

the law of *successive sampling*: draw without replacement, each time proportionally to the weights
left. ``key_order_probability`` does the integral with sympy (no formula assumed) and the tests
compare it with ``exact(successive_sampling, ...)``. The inclusion probability P(i in sample) is then
*not* k w_i / W (that can exceed 1: weights (1, 1, 4), k = 2 gives 4/3).

Algorithm L (Li 1994) for the unweighted reservoir skips ahead: with W the k-th smallest of the
uniform keys seen so far, the number of items skipped before the next replacement is geometric,
P(skip >= s | W) = (1 - W)^s, and after a replacement at item i, W ~ Beta(k, i - k + 1). Hence
P(next replacement after item i is i + s + 1) = E[(1 - W)^s W], which
``algorithm_l_next_law`` integrates with sympy and the tests compare with Algorithm R's law
prod_(t=i+1)^(i+s) (1 - k/t) * k/(i+s+1), from ``exact(algorithm_r_next, ...)``.

References: P. Efraimidis, P. Spirakis, "Weighted random sampling with a reservoir", IPL (2006);
K.-H. Li, "Reservoir-sampling algorithms of time complexity O(n(1 + log(N/n)))", ACM TOMS (1994);
J. Vitter, "Random sampling with a reservoir", ACM TOMS (1985).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Hashable, Mapping, Sequence
from fractions import Fraction

import numpy as np

from specmath.classic.reservoir import check_reservoir_sizes
from specmath.laws import Law, LawError, as_law, to_fraction
from specmath.program import die, draw
from specmath.validation import check_integer

__all__ = [
    "AFTER_N",
    "check_weights",
    "successive_sampling",
    "key_order_probability",
    "a_res_law",
    "inclusion_probabilities",
    "naive_inclusion",
    "a_res_sampled",
    "algorithm_r_next",
    "algorithm_l_next_law",
    "algorithm_l_threshold_density",
    "algorithm_l_threshold_update",
    "algorithm_r_replacements",
    "algorithm_l_replacements",
]


#: outcome of the next-replacement laws when no item up to n is taken
AFTER_N = "after n"


def check_weights(weights: Mapping[Hashable, object], k: int) -> dict[Hashable, Fraction]:
    """Weights as positive Fractions, with 1 <= k <= number of items; LawError otherwise."""
    if not isinstance(weights, Mapping) or not weights:
        raise LawError(f"A-Res needs a non-empty mapping item -> positive weight, got {weights!r}")
    out = {x: to_fraction(w, what=f"weight of {x!r}") for x, w in weights.items()}
    bad = {x: w for x, w in out.items() if w <= 0}
    if bad:
        raise LawError(f"A-Res needs positive weights; got {bad}")
    check_reservoir_sizes(len(out), k)
    return out


def successive_sampling(weights: tuple, k: int):
    """Sampling program: k draws without replacement, each proportional to the remaining weights.

    ``weights`` is a tuple of (item, weight) pairs; returns the items in the order drawn.
    P(i_1, ..., i_k) = prod_j w_(i_j) / (W - sum_(l<j) w_(i_l)).
    """
    left = dict(check_weights(dict(weights), k))
    chosen = []
    for _ in range(k):
        x = yield draw(Law.from_weights(left), label="draw")
        chosen.append(x)
        del left[x]
    return tuple(chosen)


def key_order_probability(weights: Mapping[Hashable, object], order: Sequence[Hashable]) -> Fraction:
    """P(the keys u^(1/w) of ``order`` are the largest, in that order), by symbolic integration.

    int_0^1 dx_1 f_1(x_1) int_0^(x_1) dx_2 f_2(x_2) ... int_0^(x_(k-1)) dx_k f_k(x_k) F_R(x_k),
    f_j(x) = w_j x^(w_j - 1) (density of a key), F_R(x) = prod_(r not in order) x^(w_r) (all others below).
    """
    import sympy

    w = check_weights(weights, len(order))
    if len(set(order)) != len(order) or not set(order) <= set(w):
        raise LawError(f"order {order!r} must list distinct items of the weights")
    xs = sympy.symbols(f"x0:{len(order) + 1}", positive=True)  # xs[0] = 1 is the upper limit
    rest = sum((w[r] for r in w if r not in order), Fraction(0))
    # innermost: the last kept key x_k, with every other key below it: F_R(x_k) = x_k^R
    integrand = sympy.Integer(1) * xs[len(order)] ** sympy.Rational(rest.numerator, rest.denominator)
    for j in reversed(range(len(order))):
        wj = sympy.Rational(w[order[j]].numerator, w[order[j]].denominator)
        x = xs[j + 1]
        upper = sympy.Integer(1) if j == 0 else xs[j]
        # the density of key j, integrated below the previous key
        integrand = sympy.integrate(wj * x ** (wj - 1) * integrand, (x, 0, upper))
    value = sympy.nsimplify(integrand)
    if not value.is_Rational:
        raise LawError(f"the key-order integral did not reduce to a rational number: {value}")
    return Fraction(int(value.p), int(value.q))


def a_res_law(weights: Mapping[Hashable, object], k: int) -> Law:
    """The law of A-Res's sample (as a sorted tuple), summing ``key_order_probability`` over orders."""
    from itertools import permutations

    w = check_weights(weights, k)
    out: dict[tuple, Fraction] = {}
    for order in permutations(sorted(w), k):
        key = tuple(sorted(order))
        out[key] = out.get(key, Fraction(0)) + key_order_probability(w, order)
    return Law(out, name="A-Res sample")


def inclusion_probabilities(law: Law, items: Sequence[Hashable]) -> dict[Hashable, Fraction]:
    """item -> P(item is in the sample), from a law over samples (tuples of items)."""
    law = as_law(law)
    return {i: law.P(lambda s, i=i: i in s) for i in items}


def naive_inclusion(weights: Mapping[Hashable, object], k: int) -> dict[Hashable, Fraction]:
    """k w_i / W: what A-Res's inclusion probabilities are often mistaken for."""
    w = check_weights(weights, k)
    total = sum(w.values(), Fraction(0))
    return {x: k * v / total for x, v in w.items()}


def a_res_sampled(weights: Mapping[Hashable, object], k: int, rng: np.random.Generator) -> tuple:
    """One A-Res sample over the items in order (floats): keep the k largest keys u^(1/w), sorted."""
    w = check_weights(weights, k)
    heap: list[tuple[float, Hashable]] = []
    for x, wx in w.items():
        key = rng.random() ** (1.0 / float(wx))  # key = u^(1 / w)
        if len(heap) < k:
            heapq.heappush(heap, (key, x))
        elif key > heap[0][0]:
            heapq.heapreplace(heap, (key, x))  # evict the smallest key
    return tuple(sorted(x for _, x in heap))


def check_position(i: int, k: int, n: int) -> tuple[int, int, int]:
    """(i, k, n) as ints with 1 <= k <= i <= n: the stream position i after the reservoir has filled."""
    n, k = check_reservoir_sizes(n, k)
    return check_integer(i, "the current position i (k <= i <= n)", min_value=k, max_value=n), k, n


def algorithm_r_next(i: int, k: int, n: int):
    """Sampling program: the next item after i that Algorithm R puts in the reservoir (AFTER_N if none <= n).

    Item t is kept with probability k / t: P(next = i + s + 1) = prod_(t=i+1)^(i+s) (1 - k/t) k/(i+s+1).
    """
    i, k, n = check_position(i, k, n)
    for t in range(i + 1, n + 1):
        j = yield die(t, label="random index")
        if j <= k:
            return t
    return AFTER_N


def algorithm_l_next_law(i: int, k: int, n: int) -> Law:
    """Law of Algorithm L's next replacement after item i: P(i + s + 1) = E[(1 - W)^s W], W ~ Beta(k, i-k+1).

    Integrated with sympy against the Beta density; the tail beyond n is the outcome AFTER_N.
    """
    import sympy

    i, k, n = check_position(i, k, n)
    w = sympy.Symbol("w", positive=True)
    density = algorithm_l_threshold_density(i, k, w)
    out: dict = {}
    for s in range(n - i):
        # skip s items (each with probability 1 - W), then replace: (1 - W)^s W
        value = sympy.integrate(density * (1 - w) ** s * w, (w, 0, 1))
        out[i + s + 1] = Fraction(int(value.p), int(value.q))
    out[AFTER_N] = 1 - sum(out.values(), Fraction(0))
    return Law(out, name="Algorithm L next replacement")


def algorithm_l_threshold_density(i: int, k: int, w):
    """The claimed density of W right after a replacement at item i: Beta(k, i - k + 1) in w."""
    import sympy

    return w ** (k - 1) * (1 - w) ** (i - k) / sympy.beta(k, i - k + 1).rewrite(sympy.gamma)


def algorithm_l_threshold_update(density, k: int, s: int, w):
    """Density of W after Algorithm L skips s items and replaces the next, from W's density before.

    Bayes: post(w) = density(w) (1 - w)^s w / P(skip = s); then W' = W V with V = u^(1/k) ~ Beta(k, 1),
    so f_W'(z) = int_z^1 post(w) k (z/w)^(k-1) / w dw. Returned as an expression in w.
    """
    import sympy

    z = sympy.Symbol("z", positive=True)
    likelihood = density * (1 - w) ** s * w
    post = likelihood / sympy.integrate(likelihood, (w, 0, 1))
    # the density of a product W V at z: integrate over W = w >= z with V = z / w
    new = sympy.integrate(post * k * (z / w) ** (k - 1) / w, (w, z, 1))
    return sympy.simplify(new.subs(z, w))


def algorithm_r_replacements(k: int, n: int):
    """Sampling program: the items k+1..n that Algorithm R puts into the reservoir (kept w.p. k/t)."""
    n, k = check_reservoir_sizes(n, k)
    out = []
    for t in range(k + 1, n + 1):
        j = yield die(t, label="random index")
        if j <= k:
            out.append(t)
    return tuple(out)


def algorithm_l_replacements(k: int, n: int, rng: np.random.Generator) -> tuple[int, ...]:
    """Algorithm L (floats): the items 1..n that enter the reservoir after the first k.

    W = u^(1/k); repeat: skip floor(log u / log(1 - W)) items, replace with the next one, ``W *= u^(1/k)``.
    """
    n, k = check_reservoir_sizes(n, k)
    out = []
    w_threshold = math.exp(math.log(rng.random()) / k)
    i = k
    while True:
        # P(skip >= s) = (1 - W)^s: a geometric number of items is passed over
        i += math.floor(math.log(rng.random()) / math.log1p(-w_threshold)) + 1
        if i > n:
            return tuple(out)
        out.append(i)
        w_threshold *= math.exp(math.log(rng.random()) / k)
