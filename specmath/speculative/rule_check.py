"""Check a user's verification rule: is ``rule(p, q, x)`` lossless on a battery of instances?

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

A rule is ``rule(p, q, x) -> (accept_probability, resample_law | None)`` for a draft token x ~ q
(``specmath.speculative.step``). It is lossless on an instance when the exact law of the emitted
token equals p (one step), or when a whole round continued by plain target sampling has the
autoregressive law (round instances, ``completed_round_law``). The battery mixes hand-written edge
cases (p == q, disjoint supports, zeros on either side, one-hot laws, a single-token vocabulary)
with seeded random laws and two small round instances.

Three verdicts, kept apart:

* **lossless**: law == target exactly on every instance (or, for a rule computed in floats checked
  with ``max_tv``, TV(law, target) <= max_tv on every instance);
* **lossy**: some instance has a law that differs from its target; the report names the *smallest*
  failing instance (fewest tokens, then one step before rounds, then the smallest denominators) with
  its exact total-variation distance TV(law, p) = 1/2 sum_x |law(x) - p(x)|;
* **error**: the rule *raised* on a valid instance, or returned something that is not a valid
  (accept probability, resample law) (``specmath.speculative.rule_output``: a bare number, an accept
  probability outside [0, 1], a rejection without a resample law, a resample law over tokens outside
  the vocabulary). Neither says anything about losslessness, so neither is counted as a loss: the
  report names the instance and the problem (a raise as ``RuleError``, with the rule's own exception
  chained as its cause).

A resample law may be any Mapping token -> probability or a probability vector over p's tokens
(``specmath.speculative.rule_output``).
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from specmath.laws import Law, tv_distance
from specmath.speculative.generate import autoregressive_law, completed_round_law
from specmath.speculative.rule_output import FLOAT_SIZED, float_bound, number_text, read_rule_output
from specmath.speculative.step import Rule, step_law
from specmath.speculative.toy_lm import random_toy_lm
from specmath.validation import InvalidArgument, check_fraction, check_integer

__all__ = ["RuleInstance", "RuleFailure", "RuleError", "RuleReport", "rule_battery", "verify_rule", "check_instance",
           "bound_text"]


class RuleError(Exception):
    """The rule under test raised on a valid instance; ``__cause__`` is the rule's own exception."""


@dataclass(frozen=True)
class RuleInstance:
    """One test case: a (p, q) step, or a round of ``gamma`` over seeded random toy LMs."""

    name: str
    p: Law
    q: Law
    gamma: int = 0  # 0: one step on (p, q); >= 1: a round on random toy LMs of p's vocabulary size
    seeds: tuple = ()

    @property
    def size(self) -> tuple:
        """Order for 'smallest': vocabulary size, then steps before rounds, then gamma, then the
        largest denominator in p and q (1/2 is simpler than 3/7)."""
        denominators = max(w.denominator for law in (self.p, self.q) for w in law.values())
        return (len(self.p), self.gamma, denominators)


@dataclass(frozen=True)
class RuleFailure:
    """A failing instance: the law the rule produced and its exact TV from the target, the invalid
    output (``invalid``), or the exception the rule raised (``error``, ``exception``)."""

    instance: RuleInstance
    law: Law | None
    target: Law | None
    tv: Fraction | None
    error: str | None = None  # the rule raised: "TypeError: ..."
    invalid: str | None = None  # the rule returned something that is not a valid (accept, resample law)
    exception: BaseException | None = field(default=None, compare=False, repr=False)

    @property
    def raised(self) -> bool:
        return self.error is not None

    @property
    def is_error(self) -> bool:
        """The rule raised or returned invalid output: an error, not a loss."""
        return self.error is not None or self.invalid is not None

    def traceback_summary(self, frames: int = 3) -> str:
        """Where the rule raised: its first ``frames`` frames (and the last one), then the exception."""
        if self.exception is None:
            return self.error or ""
        stack = traceback.extract_tb(self.exception.__traceback__)[1:]  # frame 0 is the checker's call
        shown = traceback.format_list(stack[:frames])
        if len(stack) > frames:
            shown += ["  ...\n"] + traceback.format_list(stack[-1:])
        last = traceback.format_exception_only(type(self.exception), self.exception)
        return "".join(["Traceback (the rule's frames):\n", *shown, *last])

    def describe(self) -> str:
        inst = self.instance
        head = f"{inst.name}: p = {_law_text(inst.p)}, q = {_law_text(inst.q)}"
        if inst.gamma:
            head = f"{inst.name}: a round with gamma = {inst.gamma} on random toy LMs (seeds {inst.seeds}) over {len(inst.p)} tokens"
        if self.error is not None:
            return f"{head}\n  the rule raised {self.error}"
        if self.invalid is not None:
            return f"{head}\n  the rule's output is invalid: {self.invalid}"
        return (f"{head}\n  law = {_law_text(self.law, self.target)}\n  target = {_law_text(self.target, self.law)}\n"
                f"  TV distance = {number_text(self.tv, exact=True)}")


@dataclass
class RuleReport:
    """The verdict of ``verify_rule``: how many instances were checked and which failed."""

    instances: int
    failures: list[RuleFailure] = field(default_factory=list)  # the law differs from the target
    errors: list[RuleFailure] = field(default_factory=list)  # the rule raised, or its output is invalid
    max_tv: Fraction = Fraction(0)  # the bound the laws were held to (0: equal exactly)

    @property
    def lossless(self) -> bool:
        """No instance failed and none was an error."""
        return not self.failures and not self.errors

    @property
    def verdict(self) -> str:
        """"error" when the rule raised or returned invalid output anywhere (it could not be judged),
        else "lossy" or "lossless"."""
        return "error" if self.errors else "lossy" if self.failures else "lossless"

    @property
    def smallest_counterexample(self) -> RuleFailure | None:
        if not self.failures:
            return None
        return min(self.failures, key=lambda f: f.instance.size)

    @property
    def smallest_error(self) -> RuleFailure | None:
        if not self.errors:
            return None
        return min(self.errors, key=lambda f: f.instance.size)

    def error_text(self) -> str:
        """What went wrong, counted: "raised on 3 and returned invalid output on 2 of 54 instances"."""
        raised = sum(f.raised for f in self.errors)
        parts = ([f"raised on {raised}"] if raised else []) + (
            [f"returned invalid output on {len(self.errors) - raised}"] if len(self.errors) > raised else [])
        return " and ".join(parts) + f" of {self.instances} instances"

    def text(self) -> str:
        if self.errors:
            first = self.smallest_error
            return (
                f"ERROR: the rule {self.error_text()}, so it was not judged "
                f"(an error is not a loss); the smallest is\n{first.describe()}\n{first.traceback_summary()}"
            ).rstrip()
        bound = f" (TV(law, target) <= max_tv = {bound_text(self.max_tv)})" if self.max_tv else ""
        if self.lossless:
            return f"lossless on all {self.instances} instances{bound}"
        worst = self.smallest_counterexample
        return (
            f"NOT lossless: {len(self.failures)} of {self.instances} instances fail{bound.replace('<=', '>')}; "
            f"the smallest counterexample is\n{worst.describe()}{self.float_hint()}"
        )

    def float_hint(self) -> str:
        """When every failing TV is a float's rounding: a line saying which ``max_tv`` would pass it, else ""."""
        largest = max((f.tv for f in self.failures if f.tv is not None), default=None)
        if largest is None or largest >= FLOAT_SIZED or len(self.failures) != len([f for f in self.failures if f.tv]):
            return ""
        bound = float_bound(largest)
        return (f"\n(the largest TV, {float(largest):.2g}, is a float's rounding: a rule computed in floats is checked up "
                f"to a bound, max_tv={float(bound):g} or specmath verify-rule --max-tv {float(bound):g})")


def bound_text(bound: Fraction) -> str:
    """A TV bound as the user wrote it: a decimal (1e-12, 0.001), exact when short and not a decimal (1/3)."""
    shown = float(bound)
    return f"{shown:g}" if Fraction(repr(shown)) == bound else number_text(bound, exact=True)


#: outcomes a law in a message lists; a longer law shows those furthest from the other law
SHOWN_OUTCOMES = 8


def _law_text(law: Law | None, other: Law | None = None) -> str:
    """``{x: weight, ...}``, weights by ``number_text``; a law of many outcomes (a round's) lists those
    where it differs most from ``other`` and counts the rest."""
    if law is None:
        return "-"
    outcomes = list(law.items())
    if len(outcomes) > SHOWN_OUTCOMES:
        far = sorted(outcomes, key=lambda item: -abs(item[1] - (other.get(item[0], 0) if other is not None else 0)))
        chosen = {x for x, _ in far[:SHOWN_OUTCOMES]}
        shown = [f"{x!r}: {number_text(w)}" for x, w in outcomes if x in chosen]
        return "{" + ", ".join(shown) + f", ... {len(outcomes) - SHOWN_OUTCOMES} more}}"
    return "{" + ", ".join(f"{x!r}: {number_text(w)}" for x, w in outcomes) + "}"


def _law(*weights: int, names: str = "ABCDEFGH") -> Law:
    return Law.from_weights({names[i]: w for i, w in enumerate(weights)})


def _hand_written() -> list[RuleInstance]:
    # (name, p weights, q weights): every edge case the standard rule must survive
    cases = [
        ("single token", (1,), (1,)),
        ("p == q", (3, 7), (3, 7)),
        ("two-token world", (7, 3), (4, 6)),
        ("disjoint supports", (1, 0), (0, 1)),
        ("one-hot p", (0, 1, 0), (1, 1, 1)),
        ("one-hot q", (1, 2, 3), (0, 0, 1)),
        ("one-hot p and q, different tokens", (1, 0, 0), (0, 0, 1)),
        ("zeros on both sides", (4, 2, 1, 1, 0), (1, 5, 0, 2, 2)),
        ("p == q with zeros", (0, 1, 2), (0, 1, 2)),
        ("q uniform, p peaked", (97, 1, 1, 1), (1, 1, 1, 1)),
        ("p uniform, q peaked", (1, 1, 1, 1), (97, 1, 1, 1)),
        ("p(x) = 0 where q(x) is large", (0, 1, 1), (8, 1, 1)),
    ]
    return [RuleInstance(name, _law(*wp), _law(*wq)) for name, wp, wq in cases]


def _random(count: int, seed: int) -> list[RuleInstance]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        size = int(rng.integers(2, 6))
        while True:
            # integer weights 0..4, so zeros are frequent; normalised exactly
            wp, wq = rng.integers(0, 5, size=size), rng.integers(0, 5, size=size)
            if wp.sum() and wq.sum():
                break
        out.append(RuleInstance(f"random #{i} (seed {seed})", _law(*map(int, wp)), _law(*map(int, wq))))
    return out


def _rounds(seed: int) -> list[RuleInstance]:
    out = []
    for vocab, gamma in ((2, 2), (3, 3)):
        target, draft = random_toy_lm(vocab, seed), random_toy_lm(vocab, seed + 1)
        out.append(RuleInstance(f"round V={vocab} gamma={gamma}", target(()), draft(()), gamma, (seed, seed + 1)))
    return out


def rule_battery(random_instances: int = 40, seed: int = 0) -> list[RuleInstance]:
    """The hand-written cases, ``random_instances`` seeded random (p, q) pairs, and two round instances."""
    random_instances = check_integer(random_instances, "random_instances", min_value=0)
    return _hand_written() + _random(random_instances, seed) + _rounds(seed)


@dataclass(frozen=True)
class _Guarded:
    """The rule, with an exception raised *inside* it turned into RuleError (so it is not mistaken for
    the checker rejecting an invalid output), and its output read strictly (``read_rule_output``, a
    Mapping resample law within ``slack`` of 1 renormalised). Equal and hashable as the rule is: an
    exact-interpreter key."""

    rule: Callable
    slack: Fraction = Fraction(0)

    def __call__(self, p: Law, q: Law, x: object):
        try:
            output = self.rule(p, q, x)
        except Exception as exc:
            raise RuleError(f"{type(exc).__name__}: {exc}") from exc
        return read_rule_output(output, p, x, slack=self.slack)


def check_instance(rule: Rule, instance: RuleInstance, max_tv: Fraction = Fraction(0)) -> RuleFailure | None:
    """None when the rule's law is within TV ``max_tv`` of the target on ``instance`` (0: equal exactly),
    else the failure (a raise, an invalid output, or the law with its exact TV)."""
    guarded = _Guarded(rule, max_tv)
    try:
        if instance.gamma:
            vocab = len(instance.p)
            target, draft = (random_toy_lm(vocab, s) for s in instance.seeds)
            law = completed_round_law(target, draft, (), instance.gamma, guarded)
            expected = autoregressive_law(target, (), instance.gamma + 1)
        else:
            law, expected = step_law(instance.p, instance.q, guarded), instance.p
    except RuleError as exc:  # the rule raised: an error, never a loss
        cause = exc.__cause__
        return RuleFailure(instance, None, None, None, error=str(exc), exception=cause)
    except (ValueError, TypeError) as exc:  # the output is not a valid (accept probability, resample law)
        return RuleFailure(instance, None, None, None, invalid=str(exc))
    if law == expected:
        return None
    tv = tv_distance(law, expected)
    return None if tv <= max_tv else RuleFailure(instance, law, expected, tv)


def check_max_tv(max_tv: object) -> Fraction:
    """A TV bound in [0, 1), read exactly (1e-12 is 1/10^12)."""
    return check_fraction(max_tv, "max_tv (a bound on TV(law, target))", min_value=0, max_value=1, open_max=True)


def verify_rule(rule: Callable, *, random_instances: int = 40, seed: int = 0, max_tv: object = 0) -> RuleReport:
    """Run ``rule(p, q, x) -> (accept_probability, resample_law)`` over ``rule_battery``.

    Lossless on an instance means law == target exactly (Fractions, no tolerance), or TV(law, target)
    <= ``max_tv`` for a rule computed in floats. Instances where the rule raised or returned invalid
    output go to ``report.errors``, the others that fail to ``report.failures``.
    """
    if not callable(rule):
        raise InvalidArgument(f"a rule must be callable as rule(p, q, x), got {type(rule).__name__} {rule!r}")
    bound = check_max_tv(max_tv)
    battery = rule_battery(random_instances, seed)
    outcomes = [f for f in (check_instance(rule, inst, bound) for inst in battery) if f is not None]
    return RuleReport(len(battery), [f for f in outcomes if not f.is_error], [f for f in outcomes if f.is_error], bound)
