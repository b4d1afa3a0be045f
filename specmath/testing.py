"""pytest assertions that a rule, a sampling program or a whole sampler is lossless.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

Three assertions, from exact to statistical:

* ``assert_rule_lossless(rule)``: a verification rule ``rule(p, q, x) -> (accept_probability,
  resample_law)`` (``specmath.speculative.step``) is run *exactly* over the rule battery
  (``specmath.speculative.rule_check``: p == q, disjoint supports, zeros, one-hot laws, a one-token
  vocabulary, random pairs, two rounds). On a loss Hypothesis shrinks the counterexample over
  ``specmath.strategies.law_pairs``, and the AssertionError names the smallest one with its exact
  TV(law, p) = 1/2 sum_x |law(x) - p(x)| and its difference table.
* ``assert_lossless(program, *args, target=law)``: the exact law of any sampling program
  (``specmath.exact``) equals ``target``, else the difference table.
* ``assert_sampler_lossless(sample_round)``: an engine-shaped sampler (float arrays in, tokens
  out; ``specmath.audit.adapters``) gets the audit: G-tests of the whole round law on the audit
  battery, edge probes (uniforms exactly 0 and just below 1), and exact replay when its draw
  protocol is declared. It fails a lossless sampler with probability <= 1e-6 (derived in its
  docstring); a failure's AssertionError carries the failing cases' table.

An exception raised *by the code under test* is never a "lossy" verdict: it surfaces as a
``SamplerError`` that names where it happened, with the original exception chained as its cause.

Importing this module needs neither torch nor hypothesis (``assert_rule_lossless`` imports
hypothesis for its shrinking step, the torch generator kind imports torch).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from specmath.exact import exact
from specmath.laws import Law, as_law, difference_table, tv_distance
from specmath.speculative.rule_check import RuleFailure, RuleInstance, check_instance, verify_rule
from specmath.validation import InvalidArgument, check_generator_kind, check_integer

__all__ = ["SamplerError", "assert_rule_lossless", "assert_lossless", "assert_sampler_lossless", "FAMILY_LEVEL"]

#: the largest probability with which ``assert_sampler_lossless`` fails a lossless sampler
FAMILY_LEVEL = 1e-6


class SamplerError(Exception):
    """The rule, program or sampler under test raised; ``__cause__`` is its own exception.

    An exception says nothing about losslessness, so it is reported as what it is, not as a loss.
    """


def _law_text(law: Law) -> str:
    return "{" + ", ".join(f"{x!r}: {law[x]}" for x in law.sorted_outcomes()) + "}"


def _table_text(actual: Law, target: Law, actual_name: str = "law", target_name: str = "target") -> str:
    rows = [("outcome", actual_name, target_name, "difference")]
    rows += [(repr(x), str(a), str(t), str(d)) for x, a, t, d in difference_table(actual, target)]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return "\n".join("    " + "  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows)


def _name(thing: Any) -> str:
    if isinstance(thing, partial):
        return f"partial({_name(thing.func)})"
    return getattr(thing, "__qualname__", None) or getattr(thing, "__name__", None) or repr(thing)


# -- rules -------------------------------------------------------------------------------------------

def _shrunk_counterexample(rule: Callable, largest: int) -> RuleFailure | None:
    """The smallest (p, q) with step law != p that Hypothesis finds on at most ``largest`` tokens.

    Deterministic (derandomized, no example database), so a test run prints the same counterexample
    every time. None when no one-step counterexample exists there (the battery's smallest is a round).
    """
    from hypothesis import HealthCheck, find, settings
    from hypothesis.errors import NoSuchExample

    from specmath.strategies import law_pairs

    def fails(pq: tuple[Law, Law]) -> bool:
        outcome = check_instance(rule, RuleInstance("shrunk", pq[0], pq[1]))
        return outcome is not None and not outcome.raised

    quiet = settings(database=None, derandomize=True, max_examples=500, deadline=None,
                     suppress_health_check=list(HealthCheck))
    try:
        p, q = find(law_pairs(max_size=largest), fails, settings=quiet)
    except NoSuchExample:
        return None
    return check_instance(rule, RuleInstance("shrunk by Hypothesis", p, q))


def assert_rule_lossless(rule: Callable, *, random_instances: int = 40, seed: int = 0, shrink: bool = True) -> None:
    """Assert that ``rule(p, q, x) -> (accept_probability, resample_law)`` is lossless, exactly.

    Lossless means: for every (p, q) of the battery the law of the emitted token is p, as Fractions
    (and a whole round continued by target sampling has the autoregressive law). On a loss the
    AssertionError names the smallest counterexample (shrunk by Hypothesis when ``shrink``, over
    law pairs no larger than the battery's smallest failure), the rule's law, the exact
    TV(law, p) = 1/2 sum_x |law(x) - p(x)| and the difference table. A rule that raises gives a
    ``SamplerError`` naming the instance, chained to the rule's exception.
    """
    report = verify_rule(rule, random_instances=random_instances, seed=seed)
    if report.errors:
        first = report.smallest_error
        raise SamplerError(
            f"the rule {_name(rule)} raised on {len(report.errors)} of {report.instances} instances "
            f"(an error, not a loss); the smallest is\n{first.describe()}\n{first.traceback_summary()}"
        ) from first.exception
    if report.lossless:
        return
    battery_smallest = report.smallest_counterexample
    shown = battery_smallest
    if shrink and battery_smallest.instance.gamma == 0:
        shown = _shrunk_counterexample(rule, len(battery_smallest.instance.p)) or battery_smallest
    raise AssertionError(_rule_message(rule, shown, len(report.failures), report.instances))


def _rule_message(rule: Callable, failure: RuleFailure, failing: int, instances: int) -> str:
    inst = failure.instance
    head = f"the rule {_name(rule)} is NOT lossless: {failing} of {instances} battery instances fail."
    if inst.gamma or failure.law is None:
        return f"{head}\nsmallest counterexample:\n  {failure.describe()}"
    how = "shrunk by Hypothesis" if inst.name == "shrunk by Hypothesis" else f"battery instance {inst.name!r}"
    return (
        f"{head}\nsmallest counterexample ({how}):\n"
        f"  p = {_law_text(inst.p)}\n  q = {_law_text(inst.q)}\n"
        f"  law of the emitted token = {_law_text(failure.law)}\n"
        f"  TV(law, p) = {failure.tv}\n"
        f"{_table_text(failure.law, inst.p, 'law', 'p')}"
    )


# -- programs ----------------------------------------------------------------------------------------

def assert_lossless(program: Callable, *args: Any, target: Any, **kwargs: Any) -> None:
    """Assert ``exact(program, *args, **kwargs).law == target`` (any Mapping, ``as_law``), as Fractions.

    The AssertionError shows TV(law, target) and the table outcome / law / target / difference.
    A program that raises while its law is computed gives a ``SamplerError`` chained to the exception;
    an invalid target is a ``LawError`` (a ValueError) about the target.
    """
    target_law = as_law(target, name="target")
    try:
        law = exact(program, *args, **kwargs).law
    except Exception as exc:
        raise SamplerError(f"the program {_name(program)} raised while its exact law was computed: "
                           f"{type(exc).__name__}: {exc}") from exc
    if law == target_law:
        return
    raise AssertionError(
        f"the program {_name(program)} is NOT lossless: TV(law, target) = {tv_distance(law, target_law)}\n"
        + _table_text(law, target_law)
    )


# -- samplers ----------------------------------------------------------------------------------------

def _rounding_slack(cases: Sequence, n: int) -> float:
    """An upper bound on P(some audited round of a lossless float64 sampler differs from an exact one).

    Each case hands the sampler float64(p), float64(q): every entry within relative 2^-53 of the exact
    law, so a row is within TV V 2^-53 of its law, a round within (2 gamma + 1) V 2^-53, and (coupling)
    N rounds differ from N exact rounds with probability <= N (2 gamma + 1) V 2^-53. Summed over cases.
    """
    return sum(n * (2 * c.gamma + 1) * c.vocab_size * 2.0**-53 for c in cases)


def assert_sampler_lossless(sample_round: Callable, generator: str = "numpy", n: int = 20000, seed: int = 0, *,
                            cases: Sequence | None = None, draws: Any = None, sequential: bool = False):
    """Assert that an engine-shaped speculative sampler emits exactly the round law; return the report.

    ``sample_round(target_probs [gamma+1, V], draft_probs [gamma, V], draft_tokens [gamma],
    generator) -> emitted token ids`` takes raw float64 probabilities (row i = p(. | x_<i), row gamma
    the bonus position) and draws *only* from ``generator``, a ``numpy.random.Generator``
    (``generator="numpy"``) or a ``torch.Generator`` ("torch") seeded with ``seed``.

    What runs (``specmath.audit.run_audit`` on the audit battery, or ``cases``): per case N rounds
    with drafts drawn by the auditor from q, G-tests of the joint round law

        P(x_1..x_k y) = prod_{i<=k} min(p_i(x_i), q_i(x_i)) * (k < gamma: max(0, p_k(y) - q_k(y));
                                                                k = gamma: p_gamma(y))

    and of its gamma + 1 per-position marginals; edge probes with a uniform exactly 0 or just below 1
    at each draw; exact replay when ``draws`` (an ``audit.DrawProtocol``) declares the draw order.

    False-failure probability <= 1e-6, derived: let C be the cases, T_c = gamma_c + 2 the tests of
    case c and L the looks (1, or 5 in ``sequential`` mode). Each G-test runs at level
    a = (1e-6 - s) / (L sum_c T_c), with s = ``_rounding_slack`` <= N sum_c (2 gamma_c + 1) V_c 2^-53
    (about 3e-9 for the battery at N = 20000). For a sampler that is lossless on the float64 arrays
    it is handed, a coupling makes its N rounds per case equal to N rounds of the exact law except
    with probability s in all; on the exact law each test rejects with probability <= a, and the union
    bound over the L sum_c T_c tests gives 1e-6 - s; edge probes and replay are deterministic checks
    that a lossless sampler passes with probability 1 (it never emits a tuple of exact probability 0,
    and an exact replay of its own draws reproduces its output). Total <= 1e-6. The one approximation
    is the chi-square limit of each G statistic (cells pooled to expected counts >= 5).

    Power: each test's smallest detectable TV at probability 0.99 is in the returned report
    (``specmath.audit.report.table``), about 0.03-0.06 at N = 20000.

    Raises AssertionError with the failing cases' table, or ``SamplerError`` (chained to the
    sampler's exception) when the sampler raised on valid input: an error, not a loss.
    """
    from specmath.audit.adapters import Adapter
    from specmath.audit.cases import BATTERY
    from specmath.audit.report import table
    from specmath.audit.runner import run_audit

    if not callable(sample_round):
        raise InvalidArgument(f"sample_round must be callable, got {type(sample_round).__name__} {sample_round!r}")
    check_generator_kind(generator, "generator")
    n = check_integer(n, "n (rounds per case)", min_value=1)
    cases = tuple(BATTERY if cases is None else cases)
    if not cases:
        raise InvalidArgument("cases is empty: nothing to audit")
    slack = _rounding_slack(cases, n)
    if slack >= FAMILY_LEVEL / 2:
        raise InvalidArgument(f"n = {n} rounds on these cases leave float rounding slack {slack:.2g}: use fewer rounds")

    raised: list[BaseException] = []

    def recorded(target_probs, draft_probs, draft_tokens, gen):
        try:
            return sample_round(target_probs, draft_probs, draft_tokens, gen)
        except Exception as exc:
            raised.append(exc)
            raise

    doc = (getattr(sample_round, "__doc__", None) or "").strip().splitlines()
    adapter = Adapter(_name(sample_round), doc[0] if doc else "sampler under test", recorded, generator, draws=draws)
    report = run_audit(adapter, cases, n=n, seed=seed, sequential=sequential, family_level=FAMILY_LEVEL - slack)
    if raised:
        where = [f"{c.case}: {reason}" for c in report.cases for reason in c.reasons if "rais" in reason or "error" in reason]
        raise SamplerError(
            f"the sampler {_name(sample_round)} raised on valid input (an error, not a loss) in "
            f"{len(raised)} call(s); first: {type(raised[0]).__name__}: {raised[0]}\n" + "\n".join(where[:5])
        ) from raised[0]
    if not report.passed:
        failing = [c for c in report.cases if not c.passed]
        reasons = "\n".join(f"  {c.case}: {'; '.join(c.reasons)}" for c in failing)
        raise AssertionError(
            f"the sampler {_name(sample_round)} is NOT lossless: {len(failing)} of {len(report.cases)} cases fail\n"
            f"{reasons}\n\n{table(report)}"
        )
    return report

