"""One speculative step outputs p for EVERY target p and draft q on n tokens: a symbolic proof.

Notation: p = target law, q = draft law, gamma = draft tokens per round (one here),
alpha = sum_x min(p(x), q(x)).

The exact interpreter proves ``step_law(p, q) == p`` for one pair of laws at a time. Here the
weights are sympy symbols, so one computation covers all pairs on n tokens at once.

The step's rule is piecewise: min(1, p(x)/q(x)) and max(0, p(x) - q(x)) change formula where p(x)
crosses q(x). So the pairs (p, q) are split by their *sign pattern*: the set A of tokens with
p(x) >= q(x) ("above"). Every pair lies in exactly one region, and inside a region every min and max
is one polynomial expression. A region is parametrised without constraints left over:

* q(x) are free symbols with q(x_last) = 1 - sum of the others;
* p(x) = q(x) + d(x) with d(x) >= 0 for x in A, p(x) = q(x) - e(x) with e(x) > 0 outside A;
* sum p = sum q forces sum_A d = sum_(not A) e, solved for the last e; the region A = every token
  forces p = q.

In the region the step's output law is the law of the program "draft x ~ q; accept with a(x); else
draw y ~ r_x":

    P(out = y) = sum_x q(x) [ a(x) 1{y = x} + (1 - a(x)) r_x(y) ],

and the region is *proved* when P(out = y) - p(y) cancels to the rational function 0 for every y.
There are 2^n - 1 regions (A is never empty: sum p = sum q leaves some p(x) >= q(x)).

A lossy rule is caught the same way: a region whose difference does not cancel is returned with a
rational witness (p, q) inside it, and the witness is checked by the exact interpreter running
``speculative_step`` (``step_law``) with the same rule on Fractions.

A *symbolic rule* is ``rule(p, q, x, above) -> (accept_probability, resample_law or None)`` over
dicts of numbers (sympy expressions or Fractions); ``above`` is the set A, so the rule can resolve
its min and max. ``as_step_rule`` turns it into a rule of ``specmath.speculative.step`` on Laws.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import combinations

from specmath.laws import Law, LawError, tv_distance
from specmath.speculative.step import step_law
from specmath.validation import InvalidArgument, check_integer

__all__ = [
    "SymbolicRule",
    "standard_symbolic_rule",
    "resample_from_target_rule",
    "as_step_rule",
    "RegionResult",
    "SymbolicProof",
    "prove_step_symbolically",
    "prove_step_for_sizes",
    "SYMBOLIC_RULES",
]

SymbolicRule = Callable[[dict, dict, Hashable, frozenset], tuple]


def standard_symbolic_rule(p: dict, q: dict, x: Hashable, above: frozenset) -> tuple:
    """The standard rule with its min and max resolved in the region ``above`` = {y: p(y) >= q(y)}.

    accept = min(1, p(x)/q(x)) = 1 on A, p(x)/q(x) off A;
    residual(y) = max(0, p(y) - q(y)) / sum_z max(0, p(z) - q(z)) = (p(y) - q(y)) / mass on A, 0 off A.
    """
    if x in above:
        return 1, None
    excess = {y: (p[y] - q[y] if y in above else 0) for y in p}
    mass = sum(excess.values())
    return p[x] / q[x], {y: w / mass for y, w in excess.items()}


def resample_from_target_rule(p: dict, q: dict, x: Hashable, above: frozenset) -> tuple:
    """A lossy rule: accept with min(1, p(x)/q(x)) as usual, but on rejection draw from p itself."""
    if x in above:
        return 1, None
    return p[x] / q[x], dict(p)


#: rules by name, for ``specmath verify symbolic-step --rule NAME``
SYMBOLIC_RULES: dict[str, SymbolicRule] = {
    "standard": standard_symbolic_rule,
    "resample-from-target": resample_from_target_rule,
}


def as_step_rule(rule: SymbolicRule):
    """The rule ``(p, q, x) -> (accept, resample Law or None)`` of ``speculative_step`` on exact Laws."""

    def step_rule(p: Law, q: Law, x: object):
        above = frozenset(y for y in p if p[y] >= q[y])
        accept, resample = rule(dict(p.items()), dict(q.items()), x, above)
        return Fraction(accept), (None if resample is None else Law({y: Fraction(w) for y, w in resample.items()}))

    return step_rule


@dataclass
class RegionResult:
    """One sign pattern: the tokens with p >= q, whether the output law cancels to p, and a witness if not."""

    above: tuple
    lossless: bool
    difference: dict  # y -> P(out = y) - p(y), cancelled (all 0 when lossless)
    witness: dict | None = None  # {"p": Law, "q": Law, "output": Law, "tv": Fraction} for a lossy region


@dataclass
class SymbolicProof:
    """The verdict for one rule on one vocabulary size: every region, and the first counterexample."""

    tokens: tuple
    rule: str
    regions: list[RegionResult] = field(default_factory=list)
    seconds: float = 0.0  # wall time of the symbolic work (machine-dependent: report it, never store it)

    @property
    def lossless(self) -> bool:
        return all(r.lossless for r in self.regions)

    @property
    def cases(self) -> int:
        return len(self.regions)

    @property
    def counterexample(self) -> RegionResult | None:
        return next((r for r in self.regions if not r.lossless), None)

    def to_json(self) -> dict:
        out = {"tokens": len(self.tokens), "rule": self.rule, "lossless": self.lossless, "cases": self.cases}
        bad = self.counterexample
        if bad is not None:
            w = bad.witness
            out["counterexample"] = {
                "above": [str(t) for t in bad.above],
                "p": {str(k): str(v) for k, v in w["p"].items()},
                "q": {str(k): str(v) for k, v in w["q"].items()},
                "output": {str(k): str(v) for k, v in w["output"].items()},
                "tv": str(w["tv"]),
            }
        return out


def _output_law(p: dict, q: dict, rule: SymbolicRule, above: frozenset) -> dict:
    """P(out = y) = sum_x q(x) [a(x) 1{y = x} + (1 - a(x)) r_x(y)]: the step's law in one region."""
    out = {y: 0 for y in p}
    for x in p:
        accept, resample = rule(p, q, x, above)
        out[x] += q[x] * accept
        if resample is not None:
            for y in p:
                out[y] += q[x] * (1 - accept) * resample[y]
        elif accept != 1:
            raise LawError(f"the rule may reject token {x!r} but gave no law to resample from")
    return out


def _region_symbols(tokens: Sequence, above: frozenset):
    """(p, q) as sympy expressions parametrising the region, and the free symbols with their ranges."""
    import sympy

    n = len(tokens)
    qs = sympy.symbols(f"q0:{n - 1}", nonnegative=True)
    q = {t: qs[i] for i, t in enumerate(tokens[:-1])}
    q[tokens[-1]] = 1 - sum(qs)
    if len(above) == n:
        return dict(q), q  # every p(x) >= q(x) and both sum to 1: p = q
    inside = [t for t in tokens if t in above]
    outside = [t for t in tokens if t not in above]
    d = {t: sympy.Symbol(f"d_{i}", nonnegative=True) for i, t in enumerate(tokens) if t in above}
    e = {t: sympy.Symbol(f"e_{i}", positive=True) for i, t in enumerate(tokens) if t not in above}
    # sum_A d = sum_(not A) e: the last e is what the others leave
    e[outside[-1]] = sum(d[t] for t in inside) - sum(e[t] for t in outside[:-1])
    p = {t: q[t] + d[t] if t in above else q[t] - e[t] for t in tokens}
    return p, q


def _witness_points(tokens: Sequence, above: frozenset):
    """Rational (p, q) pairs with exactly the sign pattern ``above`` (p > q on A, p < q off A)."""
    n = len(tokens)
    outside = [t for t in tokens if t not in above]
    for scale in (2, 3, 5, 7):
        for tilt in range(n):
            # q: unequal positive weights; p: q shifted up on A and down off A by a total of shift
            weights = [Fraction(1 + (i + tilt) % n) for i in range(n)]
            q = {t: w / sum(weights) for t, w in zip(tokens, weights, strict=True)}
            shift = min(q[t] for t in tokens) / scale
            p = {t: q[t] + shift / len(above) if t in above else q[t] - shift / len(outside) for t in tokens}
            yield p, q


def _witness(tokens: Sequence, above: frozenset, rule: SymbolicRule) -> dict:
    """A rational pair in the region where the rule's output differs from p, checked by ``step_law``."""
    for p, q in _witness_points(tokens, above):
        output = _output_law(p, q, rule, above)
        if any(output[y] != p[y] for y in tokens):
            P, Q = Law(p), Law(q)
            exact_output = step_law(P, Q, as_step_rule(rule))  # the exact interpreter runs speculative_step
            if exact_output != Law(output):
                raise AssertionError(f"region formula {output} and exact interpreter {dict(exact_output)} disagree")
            return {"p": P, "q": Q, "output": exact_output, "tv": tv_distance(exact_output, P)}
    raise ValueError(f"no rational witness found in region above={sorted(map(str, above))} (the difference may vanish there)")


def prove_step_symbolically(tokens: int | Sequence = 3, rule: SymbolicRule = standard_symbolic_rule,
                            rule_name: str | None = None) -> SymbolicProof:
    """Prove (or refute, with a witness) that one step with ``rule`` outputs p for all p, q on ``tokens``.

    ``tokens`` is a vocabulary (a sequence of at least 2 distinct tokens) or its size n >= 2 (tokens
    "A", "B", ...). Checks each of the 2^n - 1 sign-pattern regions (see the module docstring).
    """
    import sympy

    if not isinstance(tokens, Iterable):
        size = check_integer(tokens, "the vocabulary size (or a sequence of tokens)", min_value=2, max_value=26)
        tokens = tuple(chr(ord("A") + i) for i in range(size))
    tokens = tuple(tokens)
    if len(tokens) < 2 or len(set(tokens)) != len(tokens):
        raise InvalidArgument(f"need at least 2 distinct tokens, got {tokens!r}")
    proof = SymbolicProof(tokens, rule_name or getattr(rule, "__name__", "rule"))
    start = time.perf_counter()
    for size in range(1, len(tokens) + 1):
        for chosen in combinations(tokens, size):
            above = frozenset(chosen)
            p, q = _region_symbols(tokens, above)
            output = _output_law(p, q, rule, above)
            # a rational function is 0 iff its cancelled numerator is the zero polynomial
            difference = {y: sympy.cancel(sympy.together(output[y] - p[y])) for y in tokens}
            lossless = all(v == 0 for v in difference.values())
            witness = None if lossless else _witness(tokens, above, rule)
            proof.regions.append(RegionResult(chosen, lossless, difference, witness))
    proof.seconds = time.perf_counter() - start
    return proof


def prove_step_for_sizes(sizes: Sequence[int] = (2, 3, 4), rule: SymbolicRule = standard_symbolic_rule,
                         rule_name: str | None = None) -> list[SymbolicProof]:
    """``prove_step_symbolically`` for each vocabulary size in ``sizes``."""
    return [prove_step_symbolically(n, rule, rule_name) for n in sizes]
