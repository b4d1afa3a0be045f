"""One speculative sampling step for any target law p and draft law q over one finite vocabulary.

The step (Leviathan et al. 2023, Algorithm 1 with gamma = 1; Chen et al. 2023 swap the names p, q):

1. the draft proposes x ~ q;
2. accept x with probability min(1, p(x) / q(x));
3. on rejection, output y ~ residual = norm(max(0, p - q)).

Why the output law is p: P(out = x) = q(x) min(1, p(x)/q(x)) + P(reject) residual(x)
= min(p(x), q(x)) + (1 - alpha) * max(0, p(x) - q(x)) / (1 - alpha) = p(x),
because P(reject) = 1 - sum_x min(p(x), q(x)) = 1 - alpha = sum_x max(0, p(x) - q(x)).

A *rule* generalises step 2-3: ``rule(p, q, x) -> (accept_probability, resample_law)``; the
standard rule is ``standard_rule``. ``step_law(p, q, rule)`` is the exact output law of a rule.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from specmath.exact import exact
from specmath.laws import Law, LawError, as_law, check_same_vocabulary
from specmath.program import coin, draw
from specmath.speculative.rule_output import read_rule_output

__all__ = [
    "acceptance_rate",
    "residual_law",
    "standard_rule",
    "speculative_step",
    "step_law",
    "Rule",
]

Rule = Callable[[Law, Law, object], tuple[Fraction, Law | None]]


def acceptance_rate(p: Law, q: Law) -> Fraction:
    """alpha = sum_x min(p(x), q(x)): the probability that the draft token is accepted."""
    p, q = as_law(p, name="p"), as_law(q, name="q")
    check_same_vocabulary(p, q)
    return sum((min(p[x], q[x]) for x in p), Fraction(0))


def residual_law(p: Law, q: Law) -> Law:
    """norm(max(0, p - q)): residual(x) = max(0, p(x) - q(x)) / sum_y max(0, p(y) - q(y)).

    The normaliser equals 1 - alpha. When p == q it is 0 and the residual does not exist; that is
    an error here (a rejection cannot happen then, so a correct sampler never asks for it).
    """
    p, q = as_law(p, name="p"), as_law(q, name="q")
    check_same_vocabulary(p, q)
    excess = {x: max(Fraction(0), p[x] - q[x]) for x in p}
    mass = sum(excess.values(), Fraction(0))
    if mass == 0:
        raise LawError("the residual max(0, p - q) is zero everywhere (p == q): there is nothing to resample")
    return Law({x: w / mass for x, w in excess.items()}, name="residual")


def standard_rule(p: Law, q: Law, x: object) -> tuple[Fraction, Law | None]:
    """Accept with min(1, p(x)/q(x)); on rejection resample from norm(max(0, p - q)).

    The residual is only built when rejection has positive probability (p(x) < q(x)).
    """
    accept = min(Fraction(1), p[x] / q[x])
    return accept, (residual_law(p, q) if accept < 1 else None)


def speculative_step(p: Law, q: Law, rule: Rule = standard_rule):
    """Sampling program: draft x ~ q, accept/reject it with ``rule``, return the emitted token."""
    x = yield draw(q, label="draft")
    # the rule's output read strictly (a pair; vectors and dicts as laws over p's vocabulary)
    accept_probability, resample = read_rule_output(rule(p, q, x), p, x)
    accepted = yield coin(accept_probability, label="accept")
    if accepted:
        return x
    if resample is None:
        raise LawError(f"the rule rejected token {x!r} but gave no law to resample from")
    y = yield draw(resample, label="resample")
    return y


def step_law(p: Law, q: Law, rule: Rule | None = None) -> Law:
    """Exact law of the token emitted by one speculative step with ``rule`` (default: standard).

    For the standard rule this equals p for every p, q over one vocabulary. p and q may be any
    Mappings outcome -> probability (``as_law``).
    """
    p, q = as_law(p, name="p"), as_law(q, name="q")
    check_same_vocabulary(p, q)
    return exact(speculative_step, p, q, rule or standard_rule).law
