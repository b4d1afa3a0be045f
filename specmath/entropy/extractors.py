"""Fair bits from a biased coin: von Neumann, Peres' iterated extractor, Elias' block extractor.

A p-coin (heads = True with probability p, q = 1 - p) carries H(p) = -p log2 p - q log2 q bits per
flip; an extractor turns n flips into a variable number of bits that are fair and independent
*given how many there are*: P(bits = s) = P(length = |s|) / 2^|s|. Each extractor here is a plain
function of the n flips; ``block_extractor`` is the sampling program that flips n coins and applies
it, so the exact interpreter gives the joint law of the output bits (for rational or sympy p).

* von Neumann (1951): pairs HT -> 1, TH -> 0, HH/TT -> nothing. Rate p q bits per flip (0.21 at
  p = 0.3); ``specmath.classic.fair_coin.von_neumann`` is its one-bit-at-a-time form.
* Peres (1992): also recycle what von Neumann discards. From the pairs build u_i = x_(2i-1) xor x_(2i)
  (a coin with bias 2pq) and v = the common value of each equal pair (bias p^2 / (p^2 + q^2)), and
  apply the extractor again to both: Psi_d(x) = vN(x) ++ Psi_(d-1)(u) ++ Psi_(d-1)(v), Psi_0 = ().
  As n -> oo its rate is r_d(p) = p q + r_(d-1)(p^2 + q^2) / 2 + (p^2 + q^2) r_(d-1)(p^2 / (p^2 + q^2)) / 2,
  which tends to H(p) as d -> oo.
* Elias (1972): the C(n, h) sequences with h heads are equally likely; split them by the binary
  expansion of C(n, h) into blocks of 2^j and output the rank inside the block as j bits.
  E[bits] = sum_h p^h q^(n-h) sum_(j: bit j of C(n,h) is 1) j 2^j.

References: J. von Neumann, "Various techniques used in connection with random digits" (1951);
Y. Peres, "Iterating von Neumann's procedure for extracting random bits", Ann. Stat. (1992);
P. Elias, "The efficient construction of an unbiased random sequence", Ann. Math. Stat. (1972).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from math import comb
from typing import Any

from specmath.classic.fair_coin import check_bias
from specmath.laws import Law, as_law
from specmath.program import coin
from specmath.validation import check_choice, check_fraction, check_integer

__all__ = [
    "von_neumann_bits",
    "peres_bits",
    "elias_bits",
    "EXTRACTORS",
    "block_extractor",
    "fair_given_length_target",
    "peres_rate",
    "elias_rate",
    "von_neumann_rate",
    "block_rate",
]


def von_neumann_bits(flips: Sequence[bool]) -> tuple[int, ...]:
    """One bit per unequal pair: (H, T) -> 1, (T, H) -> 0; P(HT) = P(TH) = p q."""
    return tuple(int(x) for x, y in zip(flips[0::2], flips[1::2], strict=False) if x != y)


def peres_bits(flips: Sequence[bool], depth: int | None = None) -> tuple[int, ...]:
    """Psi_d(x) = vN(x) ++ Psi_(d-1)(xor of pairs) ++ Psi_(d-1)(values of equal pairs); depth None = no limit."""
    if (depth is not None and depth <= 0) or len(flips) < 2:
        return ()
    pairs = list(zip(flips[0::2], flips[1::2], strict=False))
    below = None if depth is None else depth - 1
    # u_i = x xor y is a (2pq)-coin, independent of the vN bits given which pairs are unequal
    u = [x != y for x, y in pairs]
    # v = the common value of each equal pair: a p^2 / (p^2 + q^2)-coin
    v = [x for x, y in pairs if x == y]
    return von_neumann_bits(flips) + peres_bits(u, below) + peres_bits(v, below)


def elias_bits(flips: Sequence[bool]) -> tuple[int, ...]:
    """Rank of the sequence among the C(n, h) with the same heads, cut into dyadic blocks."""
    n, h = len(flips), sum(bool(x) for x in flips)
    rank, left = 0, h  # lexicographic rank, False < True
    for i, x in enumerate(flips):
        if x:
            rank += comb(n - i - 1, left)  # sequences that put False here come first
            left -= 1
    size = comb(n, h)
    for j in reversed(range(size.bit_length())):
        if size >> j & 1:
            # a block of 2^j equally likely sequences: the rank inside it is j fair bits
            if rank < 2**j:
                return tuple((rank >> (j - 1 - t)) & 1 for t in range(j))
            rank -= 2**j
    raise AssertionError("rank outside 0..C(n, h) - 1")  # unreachable: the blocks cover the class


#: name -> extractor(flips, depth) used by ``block_extractor``
EXTRACTORS: dict[str, Callable[[Sequence[bool], int | None], tuple[int, ...]]] = {
    "von-neumann": lambda flips, depth: von_neumann_bits(flips),
    "peres": peres_bits,
    "elias": lambda flips, depth: elias_bits(flips),
}


def block_extractor(p: Any, n: int, method: str = "peres", depth: int | None = None):
    """Sampling program: flip n p-coins (label "flip") and return the extracted bits as a tuple."""
    p = check_bias(p)
    n = check_integer(n, "n (the number of flips)", min_value=1)
    check_choice(method, "extractor", EXTRACTORS)
    flips = []
    for _ in range(n):
        flips.append((yield coin(p, label="flip")))
    return EXTRACTORS[method](flips, depth)


def fair_given_length_target(law: Law) -> Law:
    """The law the bits must have: P(s) = P(length = |s|) / 2^|s| for every bit string s."""
    law = as_law(law)
    length = law.map(len)
    out: dict[tuple, Fraction] = {}
    for L, w in length.items():
        for k in range(2**L):
            out[tuple((k >> (L - 1 - t)) & 1 for t in range(L))] = w / 2**L
    return Law(out, name="fair bits given their number")


def _check_rate_bias(p: Any) -> None:
    # checked on the exact number p stands for; p itself is kept (a float rate for a float p)
    check_fraction(p, "a coin bias p", min_value=0, max_value=1)


def von_neumann_rate(p: Any) -> Any:
    """p q bits per flip (one bit per 1 / (p q) flips on average)."""
    _check_rate_bias(p)
    return p * (1 - p)


def peres_rate(p: Any, depth: int) -> Any:
    """r_d(p) = p q + r_(d-1)(p^2 + q^2) / 2 + (p^2 + q^2) r_(d-1)(p^2 / (p^2 + q^2)) / 2, r_0 = 0.

    The n -> oo rate of Psi_d in bits per flip; exact for Fractions, a float for floats.
    """
    depth = check_integer(depth, "Peres' depth", min_value=0)
    _check_rate_bias(p)
    if depth == 0 or p == 0 or p == 1:
        return 0 * p
    q = 1 - p
    s = p * p + q * q  # P(equal pair)
    return p * q + peres_rate(s, depth - 1) / 2 + s * peres_rate(p * p / s, depth - 1) / 2


def elias_rate(p: Any, n: int) -> Any:
    """E[bits] / n = (1/n) sum_h C(n,h) p^h q^(n-h) E_h, E_h = sum_(j: bit j of C(n,h)) j 2^j / C(n,h)."""
    n = check_integer(n, "Elias' block length n", min_value=1)
    _check_rate_bias(p)
    q = 1 - p
    total = 0 * p
    for h in range(n + 1):
        c = comb(n, h)
        bits = sum(j * 2**j for j in range(c.bit_length()) if c >> j & 1)
        total += p**h * q ** (n - h) * bits
    return total / n


def block_rate(law: Law, n: int) -> Fraction:
    """E[number of output bits] / n from the exact law of the bits of n flips."""
    return as_law(law).expectation(len) / n
