"""pytest assertions that a rule, a sampling program or a whole sampler is lossless.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

Four assertions, from exact to statistical:

* ``assert_rule_lossless(rule)``: a verification rule ``rule(p, q, x) -> (accept_probability,
  resample_law)`` (``specmath.speculative.step``) is run *exactly* over the rule battery
  (``specmath.speculative.rule_check``: p == q, disjoint supports, zeros, one-hot laws, a one-token
  vocabulary, random pairs, two rounds). On a loss Hypothesis shrinks the counterexample over
  ``specmath.strategies.law_pairs``, and the AssertionError names the smallest one with its exact
  TV(law, p) = 1/2 sum_x |law(x) - p(x)| and its difference table. A rule computed in floats is
  checked up to a stated bound with ``max_tv`` (TV(law, p) <= max_tv on every instance).
* ``assert_lossless(program, *args, target=law)``: the exact law of any sampling program
  (``specmath.exact``) equals ``target``, else the difference table.
* ``assert_sampler_lossless(sample_round)``: an engine-shaped sampler (float arrays in, tokens
  out; ``specmath.audit.rounds.adapters``), one round per call or (``batched=True``) every round of a
  case in one call, warping its target (``sampling=SamplingOptions(...)``: temperature, top-k, top-p)
  or not, gets the audit: G-tests of the whole round law on the audit battery, edge probes (uniforms
  exactly 0 and just below 1), and exact replay when its draw protocol is declared. It fails a
  lossless sampler with probability <= the family level, 1e-6 (derived in its docstring); a failure's
  AssertionError shows each failing case's worst cells, failed probes and the table.
* ``assert_tree_sampler_lossless(sample_tree, children=...)``: a batched token-tree sampler (the
  tree as parent indices, as engines pass it; ``specmath.audit.trees.adapters``) gets the tree
  audit: trees drafted as its verifier assumes (``children``: i.i.d., without replacement, top-k),
  each emitted path completed with draws from p and G-tested against the autoregressive law, and
  edge probes; the same guarantee.

How strong the two statistical audits are is one ``specmath.settings.AuditSettings``: ``settings=``
takes a record or a profile name ("dev", "ci" (the default), "thorough"), and ``n=`` overrides its
rounds per case for one call. The pytest plugin's ``specmath_audit`` fixture passes the run's
(``--specmath-profile``, ``--specmath-n``, ``@pytest.mark.specmath(n=...)``).

An exception raised *by the code under test*, or output that is not what it must return (a rule's
bare number, a sampler's None or float token ids, a tree sampler's path that is not in its tree), is never a "lossy" verdict: it surfaces as a
``SamplerError`` that names where it happened, with the original exception chained as its cause.
Every sampler call gets fresh copies of its inputs; one that writes into them is told so with a
``SamplerInputWarning`` (the verdict does not depend on it, nor on what ran before).

Importing this module needs neither torch nor hypothesis (``assert_rule_lossless`` imports
hypothesis for its shrinking step, the torch generator kind imports torch).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from fractions import Fraction
from functools import partial
from typing import Any

from specmath.exact import exact
from specmath.laws import Law, as_law, difference_table, tv_distance
from specmath.sampling_options import WARP_OPTIONS, SamplingOptions
from specmath.settings import AuditSettings, as_settings
from specmath.speculative.rule_check import (
    RuleFailure,
    RuleInstance,
    bound_text,
    check_instance,
    check_max_tv,
    verify_rule,
)
from specmath.speculative.rule_output import number_text
from specmath.tables import text_table
from specmath.validation import InvalidArgument, check_generator_kind, check_integer

__all__ = ["SamplerError", "SamplerInputWarning", "assert_rule_lossless", "assert_lossless", "assert_sampler_lossless",
           "assert_tree_sampler_lossless", "AuditSettings"]


class SamplerError(Exception):
    """The rule, program or sampler under test raised, or returned invalid output; ``__cause__`` is
    the exception.

    Neither says anything about losslessness, so each is reported as what it is, not as a loss.
    """


class SamplerInputWarning(UserWarning):
    """The sampler under test wrote into the arrays it was handed (its verdict is unaffected)."""


def _law_text(law: Law) -> str:
    return "{" + ", ".join(f"{x!r}: {number_text(law[x])}" for x in law.sorted_outcomes()) + "}"


def _table_text(actual: Law, target: Law, actual_name: str = "law", target_name: str = "target") -> str:
    rows = [(repr(x), number_text(a), number_text(t), number_text(d)) for x, a, t, d in difference_table(actual, target)]
    return text_table(("outcome", actual_name, target_name, "difference"), rows, align=">", indent="    ")


def _name(thing: Any) -> str:
    if isinstance(thing, partial):
        return f"partial({_name(thing.func)})"
    return getattr(thing, "__qualname__", None) or getattr(thing, "__name__", None) or repr(thing)


# -- rules -------------------------------------------------------------------------------------------

def _shrunk_counterexample(rule: Callable, largest: int, max_tv: Fraction) -> RuleFailure | None:
    """The smallest (p, q) whose step law is further than ``max_tv`` from p that Hypothesis finds on at
    most ``largest`` tokens.

    Deterministic (derandomized, no example database), so a test run prints the same counterexample
    every time. None when no one-step counterexample exists there (the battery's smallest is a round).
    """
    from hypothesis import HealthCheck, find, settings
    from hypothesis.errors import NoSuchExample

    from specmath.strategies import law_pairs

    def fails(pq: tuple[Law, Law]) -> bool:
        outcome = check_instance(rule, RuleInstance("shrunk", pq[0], pq[1]), max_tv)
        return outcome is not None and not outcome.is_error

    quiet = settings(database=None, derandomize=True, max_examples=500, deadline=None,
                     suppress_health_check=list(HealthCheck))
    try:
        p, q = find(law_pairs(max_size=largest), fails, settings=quiet)
    except NoSuchExample:
        return None
    return check_instance(rule, RuleInstance("shrunk by Hypothesis", p, q), max_tv)


def assert_rule_lossless(rule: Callable, *, random_instances: int = 40, seed: int = 0, shrink: bool = True,
                         max_tv: Any = 0) -> None:
    """Assert that ``rule(p, q, x) -> (accept_probability, resample_law)`` is lossless, exactly.

    Lossless means: for every (p, q) of the battery the law of the emitted token is p, as Fractions
    (and a whole round continued by target sampling has the autoregressive law). On a loss the
    AssertionError names the smallest counterexample (shrunk by Hypothesis when ``shrink``, over
    law pairs no larger than the battery's smallest failure), the rule's law, the exact
    TV(law, p) = 1/2 sum_x |law(x) - p(x)| and the difference table.

    ``max_tv`` (default 0: exact) is for rules computed in floats, whose laws are off by rounding:
    the rule passes when TV(law, target) <= max_tv on every instance (read exactly: 1e-12 is
    1/10^12), and a resample law whose weights sum to within max_tv of 1 is renormalised first. A
    bound you can justify: a float64 rule's TV is a few V 2^-53 per step, so 1e-12 is generous for
    small vocabularies and still far below anything a sampler test can see.

    A rule that raises, or returns something that is not a valid (accept probability, resample law)
    (``specmath.speculative.rule_output``), gives a ``SamplerError`` naming the instance and the
    problem, chained to the exception.
    """
    bound = check_max_tv(max_tv)
    report = verify_rule(rule, random_instances=random_instances, seed=seed, max_tv=bound)
    if report.errors:
        first = report.smallest_error
        raise SamplerError(
            f"the rule {_name(rule)} {report.error_text()} (an error, not a loss); the smallest is\n"
            f"{first.describe()}\n{first.traceback_summary()}".rstrip()
        ) from (first.exception if first.exception is not None else None)
    if report.lossless:
        return
    battery_smallest = report.smallest_counterexample
    shown = battery_smallest
    if shrink and battery_smallest.instance.gamma == 0:
        shown = _shrunk_counterexample(rule, len(battery_smallest.instance.p), bound) or battery_smallest
    raise AssertionError(_rule_message(rule, shown, len(report.failures), report.instances, bound)
                         + report.float_hint())


def _rule_message(rule: Callable, failure: RuleFailure, failing: int, instances: int, max_tv: Fraction) -> str:
    inst = failure.instance
    bound = f" (TV above max_tv = {bound_text(max_tv)})" if max_tv else ""
    head = f"the rule {_name(rule)} is NOT lossless: {failing} of {instances} battery instances fail{bound}."
    if inst.gamma or failure.law is None:
        return f"{head}\nsmallest counterexample:\n  {failure.describe()}"
    how = "shrunk by Hypothesis" if inst.name == "shrunk by Hypothesis" else f"battery instance {inst.name!r}"
    return (
        f"{head}\nsmallest counterexample ({how}):\n"
        f"  p = {_law_text(inst.p)}\n  q = {_law_text(inst.q)}\n"
        f"  law of the emitted token = {_law_text(failure.law)}\n"
        f"  TV(law, p) = {number_text(failure.tv, exact=True)}\n"
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

def _hints_text(hints: list[str]) -> str:
    return "".join(f"\nhint: {hint}" for hint in hints)


def _sampler_error(sample_round: Callable, report, hints: list[str]) -> SamplerError:
    broken = [c for c in report.cases if c.errors]
    first = broken[0]
    what = "returned invalid output" if first.invalid_output or "invalid output" in first.errors[0] else "raised on valid input"
    error = SamplerError(
        f"the sampler {_name(sample_round)} {what} (an error, not a loss) in {len(broken)} of {len(report.cases)} "
        f"case(s); first, {first.case}: {first.errors[0]}{_hints_text(hints)}"
    )
    error.__cause__ = first.exception
    return error


def assert_sampler_lossless(sample_round: Callable, generator: str = "numpy", n: int | None = None, *,
                            settings: AuditSettings | str | None = None, cases: Any = None, draws: Any = None,
                            batched: bool = False, sampling: SamplingOptions | None = None):
    """Assert that an engine-shaped speculative sampler emits exactly the round law; return the report.

    ``sample_round(target_probs [gamma+1, V], draft_probs [gamma, V], draft_tokens [gamma],
    generator) -> emitted token ids`` takes raw float64 probabilities (row i = p(. | x_<i), row gamma
    the bonus position) and draws *only* from ``generator``, a ``numpy.random.Generator``
    (``generator="numpy"``) or a ``torch.Generator`` ("torch") seeded with the settings' seed. It
    returns 1..gamma+1 integer ids in 0..V-1 (a list, an integer array or tensor).

    ``settings``: how strong the audit is (``specmath.settings``: an ``AuditSettings`` or a profile
    name; default "ci": 20000 rounds per case, seed 0, fixed N); ``n`` overrides its rounds per case.

    ``batched=True``: ``sample_round`` is ``sample_rounds(target_probs [N, gamma+1, V], draft_probs
    [N, gamma, V], draft_tokens [N, gamma], generator) -> [N, gamma+1]`` integer ids with -1 after
    each row's last emitted token (vLLM's placeholder convention), called with every round of a case
    at once (in chunks of at most ``specmath.audit.rounds.calls.BATCH_ELEMENTS`` probabilities; edge
    probes as batches of one). The audit and its guarantee are the same; it is many times faster.

    ``sampling``: the sampler warps, by ``SamplingOptions(temperature, top_k, top_p)`` (nothing else).
    It is still handed raw probabilities, the drafts come from w(q), and it must emit the law of the
    warped target w(p), where w is ``specmath.speculative.sampling_warp.warped`` (temperature, then
    top-k with ties to the lower id, then top-p; the semantics of Hugging Face's logits processors).

    ``cases``: None (the audit battery), a case name, or a list of names or ``AuditCase`` objects.
    Every call gets fresh copies of the arrays; a sampler that writes into them gets a
    ``SamplerInputWarning`` saying where (its verdict is unaffected).

    What runs (``specmath.audit.run_audit``): per case N rounds with drafts drawn by the auditor from
    w(q), G-tests of the joint round law

        P(x_1..x_k y) = prod_{i<=k} min(p_i(x_i), q_i(x_i)) * (k < gamma: max(0, p_k(y) - q_k(y));
                                                                k = gamma: p_gamma(y))

    and of its gamma + 1 per-position marginals; edge probes with a uniform exactly 0 or just below 1
    at each draw; exact replay when ``draws`` (an ``audit.DrawProtocol``) declares the draw order.

    False-failure probability <= F = the settings' family level (1e-6 in every profile), derived: let
    C be the cases, T_c = gamma_c + 2 the tests of case c and L the looks (1, or 5 with ``sequential``
    settings). Each G-test runs at level a = (F - s) / (L sum_c T_c), with s =
    ``audit.rounds.runner.rounding_slack`` <= N sum_c (2 gamma_c + 1) V_c 2^-53 (about 3e-9 for the
    battery at N = 20000). For a sampler that is lossless on the float64 arrays it is handed, a
    coupling makes its N rounds per case equal to N rounds of the exact law except with probability s
    in all; on the exact law each test rejects with probability <= a, and the union bound over the
    L sum_c T_c tests gives F - s; edge probes and replay are deterministic checks that a lossless
    sampler passes with probability 1 (it never emits a tuple of exact probability 0, and an exact
    replay of its own draws reproduces its output). Total <= F. The one approximation
    is the chi-square limit of each G statistic (cells pooled to expected counts >= 5). (A warping
    sampler computes w in float too; its rounding is of the same order as the arrays'.)

    Power: each test's smallest detectable TV at the settings' power (0.99) is in the returned report
    (``specmath.audit.rounds.report.table``), about 0.03-0.06 at N = 20000.

    Raises AssertionError naming, per failing case, the rejecting tests with their worst cells
    (observed against expected counts; the bonus position named as such), the failed edge probes
    with their drafts and uniform, then the table; or ``SamplerError`` (chained to the sampler's
    exception) when the sampler raised or returned invalid output on valid input: an error, not a loss.
    """
    from specmath.audit.rounds.adapters import Adapter
    from specmath.audit.rounds.cases import cases_named
    from specmath.audit.rounds.runner import run_audit
    from specmath.audit.rounds.usage_hints import ROUND_INTERFACE

    settings, cases = _audit_arguments(sample_round, "sample_round", generator, n, settings, cases, cases_named,
                                       ROUND_INTERFACE)
    if sampling is not None and not isinstance(sampling, SamplingOptions):
        raise InvalidArgument(f"sampling must be a SamplingOptions (or None: no warp), got {type(sampling).__name__}")
    warp = None if sampling is None else sampling.check_only(WARP_OPTIONS, "the round audit")
    adapter = Adapter(_name(sample_round), _first_line(sample_round, "sampler under test"), sample_round, generator,
                      warp=warp, draws=draws, batched=bool(batched))
    report = run_audit(adapter, cases, settings)
    return _verdict(sample_round, report, ROUND_INTERFACE, bool(batched))


def _audit_arguments(sampler: Callable, what: str, generator: str, n: int | None, settings: Any, cases: Any,
                     named: Callable, interface: tuple[str, ...]) -> tuple[AuditSettings, Any]:
    """(the settings, with ``n`` if given; the cases ``named`` reads), checked; a sampler that cannot take
    the ``interface``'s arguments (a rule, say) is told what it looks like (``usage_hints.check_call_shape``)."""
    from specmath.audit.rounds.usage_hints import check_call_shape

    if not callable(sampler):
        raise InvalidArgument(f"{what} must be callable, got {type(sampler).__name__} {sampler!r}")
    check_call_shape(sampler, interface, f"the sampler {_name(sampler)}")
    check_generator_kind(generator, "generator")
    settings = as_settings(settings)
    if n is not None:
        settings = settings.replace(n=check_integer(n, "n (rounds per case)", min_value=1))
    return settings, named(cases)


def _first_line(function: Callable, default: str) -> str:
    doc = (getattr(function, "__doc__", None) or "").strip().splitlines()
    return doc[0] if doc else default


def _verdict(sampler: Callable, report, interface: tuple[str, ...], batched: bool = False):
    """``report`` when the audit passed; else the SamplerError or AssertionError it calls for, with the
    usage mistakes it points at (``specmath.audit.rounds.usage_hints``); writes into inputs: a warning."""
    from specmath.audit.rounds.report import failure_text, table, writes_text
    from specmath.audit.rounds.usage_hints import report_hints

    if report.input_writes:
        warnings.warn(SamplerInputWarning(f"the sampler {_name(sampler)}: {writes_text(report)}"), stacklevel=3)
    hints = report_hints(sampler, interface, report, batched=batched)
    if report.errored:
        raise _sampler_error(sampler, report, hints)
    if not report.passed:
        failing = [c for c in report.cases if not c.passed]
        raise AssertionError(
            f"the sampler {_name(sampler)} is NOT lossless: {len(failing)} of {len(report.cases)} cases fail"
            f"{_hints_text(hints)}\n{failure_text(report)}\n\n{table(report, seconds=False)}"
        )
    return report


def assert_tree_sampler_lossless(sample_tree: Callable, generator: str = "numpy", n: int | None = None, *,
                                 settings: AuditSettings | str | None = None, children: str, cases: Any = None):
    """Assert that a batched token-tree sampler is lossless; return the report.

    The sampler, called on a batch of N rounds that share one tree shape::

        sample_tree(parents, target_probs, draft_probs, draft_tokens, generator) -> ids

        parents       int64 [nodes]        parents[i]: node i's parent, -1 for a child of the root
                                           (the context); parents before children, siblings tried
                                           in index order (the battery's trees are breadth first)
        target_probs  float64 [N, nodes+1, V]  row 0: p(. | context); row i + 1: p after node i's
                                           path (node i's token included), as the target's one
                                           tree-attention pass scores it
        draft_probs   float64 [N, nodes, V]    draft_probs[:, i]: the q node i was drawn from (its
                                           parent's row of the draft, before any renormalisation);
                                           siblings share it
        draft_tokens  int64 [N, nodes]     the drafted token of each node
        generator     numpy.random.Generator (``generator="torch"``: a torch.Generator)
        ids           integer [N, depth+1] each row's accepted path (root to node), then one token
                                           (the correction after a rejection, or the bonus below a
                                           leaf), then -1 (vLLM's placeholder)

    This is the layout of ``specmath.speculative.tree_reference.sample_tree_rounds`` (the float
    reference, which passes). Engines write the tree otherwise and convert with
    ``specmath.speculative.tree_layouts``: vLLM's ``speculative_token_tree`` (and Medusa's and
    TensorRT-LLM's choices) lists child-rank paths, ``parents_from_paths``; SGLang's
    ``retrive_next_token`` / ``retrive_next_sibling`` rows give first child and next sibling per
    position, ``parents_from_sglang`` (SGLang's target_probs [bs, num_draft_tokens, V] is
    target_probs here row for row, its position 0 being the root).

    ``children`` (required) says how the auditor draws each node's children, i.e. the premise of
    the verifier: "iid" (SpecInfer's rule), "without-replacement" (recursive rejection without
    replacement) or "top-k" (EAGLE's and Medusa's drafters; SGLang's target-only rule). The same
    verifier may be lossless under one and lossy under another: SpecInfer's rule on top-k children,
    SGLang's running sum on i.i.d. children (a repeated child counted twice; claim
    sglang-target-only-running-sum in ``specmath.bugzoo.claims``).
    ``generator``, ``n``, ``settings`` and ``cases`` (names of ``specmath.audit.trees.cases.TREE_BATTERY``)
    are as for ``assert_sampler_lossless``.

    What runs (``specmath.audit.trees.runner``): per case N drafted trees in a few calls; each emitted
    tuple completed to depth + 1 tokens with the auditor's draws from p, and G-tests of that completed
    law against the autoregressive law A(depth + 1) (the criterion of every lossless verifier, whatever
    path it accepts) and of its depth + 1 per-position marginals; edge probes with a uniform exactly 0
    or just below 1 at each draw 0..nodes. Output that is not a root-to-node path of the row's tree
    followed by one token (and -1s) is invalid output: a ``SamplerError``, never a loss.

    False-failure probability <= the family level (1e-6), derived as for ``assert_sampler_lossless`` with
    T_c = depth_c + 2 tests per case and the rounding slack ``tree_runner.tree_rounding_slack`` (the
    auditor's own float draws included). Power: each case's detectable TV at the settings' power (0.99)
    is in the report, about 0.03-0.06 at N = 20000 (0.09-0.15 at N = 2000, the "dev" profile).
    """
    from specmath.audit.rounds.usage_hints import TREE_INTERFACE
    from specmath.audit.trees.adapters import TreeAdapter
    from specmath.audit.trees.cases import tree_cases_named
    from specmath.audit.trees.runner import run_tree_audit

    settings, cases = _audit_arguments(sample_tree, "sample_tree", generator, n, settings, cases, tree_cases_named,
                                       TREE_INTERFACE)
    adapter = TreeAdapter(_name(sample_tree), _first_line(sample_tree, "tree sampler under test"), sample_tree, generator,
                          children)
    report = run_tree_audit(adapter, cases, settings)
    return _verdict(sample_tree, report, TREE_INTERFACE)
