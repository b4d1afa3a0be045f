"""Proving one round lossless position by position, without enumerating V^(gamma+1) sequences.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)). E is the tuple one round emits (law R = ``round_law``).

The literal statement is C == AR: E continued by plain target sampling to gamma + 1 tokens has the
autoregressive law (``completed_round_law``). Writing H(s) = P(|E| >= |s| and E starts with s), the
first n tokens of the continuation satisfy, for s = s' x with |s| = n,

    C_n(s) = H(s) + p(x | s') [C_{n-1}(s') - (H(s') - R(s'))],

so by induction on n, C == AR holds iff at every node a (|a| <= gamma, reached with H(a) > 0)

    H(a x) = p(x | prefix a) * sum_y H(a y)        for every token x,

i.e. *given that the round emits a token after a, that token has law p(. | prefix a)*. Checking this
needs one pass over R and V checks per node of the draft tree, far fewer than the V^(gamma+1)
sequences of C. ``prove_round`` reports the first node where it fails, with the conditional law
found there and its exact TV distance from p(. | prefix a); the tests show it agrees with C == AR.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from specmath.laws import Law, tv_distance
from specmath.speculative.round import LM, check_round_arguments, round_law
from specmath.speculative.step import Rule

__all__ = ["RoundProof", "prove_round"]


@dataclass(frozen=True)
class RoundProof:
    """Verdict of ``prove_round``; on failure, the node a, the next-token law there, and p(. | prefix a)."""

    lossless: bool
    nodes_checked: int
    node: tuple | None = None
    next_token_law: Law | None = None
    target_law: Law | None = None

    @property
    def tv(self) -> Fraction:
        """TV(next-token law at the failing node, p(. | prefix node)); 0 when lossless."""
        if self.lossless:
            return Fraction(0)
        return tv_distance(self.next_token_law, self.target_law)


def prove_round(target: LM, draft: LM, prefix: tuple, gamma: int, rule: Rule | None = None) -> RoundProof:
    """Exact check that one round is lossless: H(a x) == p(x | prefix a) sum_y H(a y) at every node a."""
    prefix = check_round_arguments(prefix, gamma)
    law = round_law(target, draft, prefix, gamma, rule)
    # H(s) = P(E starts with s), accumulated over every prefix of every emitted tuple
    reach: dict[tuple, Fraction] = {}
    children: dict[tuple, list] = {}
    for emitted, w in law.items():
        if not w:
            continue
        for n in range(1, len(emitted) + 1):
            s = emitted[:n]
            if s not in reach:
                reach[s] = Fraction(0)
                children.setdefault(s[:-1], []).append(s[-1])
            reach[s] += w
    checked = 0
    for node in sorted(children, key=len):
        p = target(prefix + node)
        # the round continues past `node` with mass sum_y H(node y); its next token must follow p
        mass = sum((reach[node + (y,)] for y in children[node]), Fraction(0))
        checked += 1
        if any(p.prob(x) * mass != reach[node + (x,)] for x in children[node]) or any(
            p[x] and x not in children[node] for x in p
        ):
            found = Law({**{x: 0 for x in p}, **{x: reach[node + (x,)] / mass for x in children[node]}})
            return RoundProof(False, checked, node, found, p)
    return RoundProof(True, checked)
