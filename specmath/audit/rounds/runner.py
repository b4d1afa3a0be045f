"""Run the audit: draw drafts, call the sampler, test the counts, probe zero draws, replay exactly.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

For each battery case (``specmath.audit.rounds.cases``) and an adapter (``specmath.audit.rounds.adapters``):

1. **rounds**: N rounds of drafts x_1..x_gamma drawn from w(q) with the auditor's own numpy generator
   (``specmath.audit.rounds.drafts``); the sampler gets fresh raw arrays and its own seeded generator, one
   round per call, or (``Adapter.batched``) every round of the look in one call [N, gamma+1, V] (in
   chunks for a large vocabulary); the emitted tuples are counted. An exception or invalid output
   ends the case with an error verdict (``specmath.audit.rounds.calls``);
2. **tests**: G-tests of the joint round law and the per-position laws (``specmath.audit.power``),
   at looks N/16..N in sequential mode (a rejection stops the case, and the audit);
3. **edge probes**: for k <= gamma, a generator whose draw k is exactly 0 or the largest uniform
   below 1 (``specmath.audit.rounds.probes``); the emitted tuple must have positive exact probability, and
   nothing may raise;
4. **replay**: for one-round samplers with a known draw protocol, the first ``replay_rounds`` rounds
   and every probe are replayed through the exact algorithm (``specmath.audit.rounds.replay``; a batched
   sampler's probes, batches of one, are replayed too).

A case passes when no test rejects, nothing raised, every probe emitted a possible tuple and the
replay found no mismatch beyond float rounding. A sampler that raises or returns invalid output (in a
round or a probe) makes the case an ERROR naming the problem (``CaseResult.errors``), never a loss:
it says the sampler is broken on valid input, not what law it samples. A sampler that writes into
its inputs is told so (``CaseResult.input_writes``); its verdict is unaffected, each call having had
its own copies.
"""

from __future__ import annotations

import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from specmath.audit.power import TestResult, looks, run_tests, tests_per_case
from specmath.audit.rounds.adapters import Adapter, make_generator
from specmath.audit.rounds.calls import SamplerCalls, SamplerFailure
from specmath.audit.rounds.cases import BATTERY, AuditCase
from specmath.audit.rounds.drafts import RoundDrafts
from specmath.audit.rounds.probes import run_probes
from specmath.audit.rounds.replay import ReplayOutcome, record_replay
from specmath.validation import InvalidArgument, check_real

__all__ = ["CaseResult", "AuditReport", "run_case", "run_audit", "run_cases", "versions", "DEFAULT_ROUNDS",
           "rounding_slack", "test_level"]

#: rounds per case of the full audit (the CLI default)
DEFAULT_ROUNDS = 20_000


@dataclass
class CaseResult:
    """Everything the audit learned about one case."""

    case: str
    description: str
    gamma: int
    vocab_size: int
    n: int = 0
    tests: list[TestResult] = field(default_factory=list)
    error: str | None = None
    probes: list[dict] = field(default_factory=list)
    replays: list[ReplayOutcome] = field(default_factory=list)
    replay_failures: list[dict] = field(default_factory=list)
    seconds: float = 0.0
    input_writes: str | None = None  # the first write into its inputs the sampler made, in words
    invalid_output: bool = False  # the error is invalid output, not an exception the sampler raised
    exception: BaseException | None = field(default=None, repr=False, compare=False)  # the first one, for chaining

    @property
    def reasons(self) -> list[str]:
        """Why the case fails (empty when it passes)."""
        out = []
        if self.error:
            out.append(f"error: {self.error}")
        out += [f"{t.name}: p = {t.p_value:.3g} < {t.level:.3g}" + (f", impossible {t.impossible[0]!r}" if t.impossible else "")
                for t in self.tests if t.rejects]
        out += [p["problem"] for p in self.probes if p["problem"]]
        out += [f"replay mismatch in {f['where']}: expected {f['expected']}, got {f['emitted']}" for f in self.replay_failures]
        return out

    @property
    def errors(self) -> list[str]:
        """What the sampler raised or returned invalidly (a round or an edge probe): an error in the sampler, not a loss."""
        out = [self.error] if self.error else []
        return out + [p["problem"] for p in self.probes if p.get("raised")]

    @property
    def passed(self) -> bool:
        return not self.reasons

    @property
    def verdict(self) -> str:
        """"pass", "ERROR" (the sampler raised: its exception is named, no verdict on its law) or "FAIL"."""
        if self.errors:
            return "ERROR"
        return "pass" if self.passed else "FAIL"

    def replay_counts(self) -> dict[str, int]:
        return dict(Counter(r.kind for r in self.replays))


@dataclass
class AuditReport:
    """An adapter's audit over the battery."""

    adapter: str
    description: str
    rounds: int
    sequential: bool
    family_level: float  # the stated bound on P(a lossless sampler fails), float rounding included
    power: float
    cases: list[CaseResult]
    not_run: list[str]
    seconds: float
    versions: dict
    rounding_slack: float = 0.0  # the part of family_level set aside for float rounding (``rounding_slack``)
    test_level: float = float("nan")  # each test's level: (family_level - rounding_slack) / (tests x looks)

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.cases)

    @property
    def errored(self) -> bool:
        """True when the sampler raised (or returned invalid output) in some case: an error, not a loss."""
        return any(c.errors for c in self.cases)

    @property
    def input_writes(self) -> list[str]:
        """Where the sampler wrote into its inputs, one entry per case it did so in."""
        return [f"{c.case}, {c.input_writes}" for c in self.cases if c.input_writes]


def run_case(adapter: Adapter, case: AuditCase, n: int, seed: int, sequential: bool, level: float,
             power: float = 0.99, replay_rounds: int = 200) -> CaseResult:
    """Audit ``adapter`` on one case: rounds and tests at the looks, edge probes, replay."""
    with _single_torch_thread(adapter):
        return _run_case(adapter, case, n, seed, sequential, level, power, replay_rounds)


def _run_case(adapter: Adapter, case: AuditCase, n: int, seed: int, sequential: bool, level: float,
              power: float, replay_rounds: int) -> CaseResult:
    start = time.perf_counter()
    result = CaseResult(case.name, case.description, case.gamma, case.vocab_size)
    expected = case.expected(adapter.warp)
    drafts = RoundDrafts(case, adapter.warp)
    calls = SamplerCalls(adapter, drafts)
    drafts_rng = np.random.default_rng([seed, 1])
    generator = make_generator(adapter.generator_kind, seed)
    counts: Counter = Counter()
    rounds = 0
    for look in looks(n, sequential):
        tokens, nodes = drafts.draw(look - rounds, drafts_rng)
        try:
            if adapter.batched:
                counts.update(calls.rounds(tokens, nodes, generator, rounds))
                rounds = look
            else:
                rounds = _one_round_each(adapter, case, calls, tokens, nodes, generator, counts, rounds, result, replay_rounds)
        except SamplerFailure as failure:
            result.error, result.invalid_output, result.exception = failure.text, failure.invalid, failure.cause
            break
        result.tests = run_tests(expected, counts, level, power, final=False)
        if any(t.rejects for t in result.tests):
            break
    result.n = sum(counts.values())
    if result.n:
        result.tests = run_tests(expected, counts, level, power, final=True, cache=case._cache)
    run_probes(result, case, adapter, calls)
    result.input_writes = calls.writes
    result.seconds = time.perf_counter() - start
    return result


def _one_round_each(adapter: Adapter, case: AuditCase, calls: SamplerCalls, tokens: np.ndarray, nodes: np.ndarray,
                    generator, counts: Counter, rounds: int, result: CaseResult, replay_rounds: int) -> int:
    """Call a one-round sampler on each drafted round (replaying the first ``replay_rounds``); the rounds done."""
    for row in range(len(tokens)):
        state = generator.get_state() if adapter.draws and rounds < replay_rounds else None
        emitted = calls.round(tokens[row], nodes[row], generator, f"round {rounds}, drafts {tokens[row].tolist()}")
        counts[emitted] += 1
        rounds += 1
        if state is not None:
            record_replay(result, case, adapter, state, tuple(tokens[row].tolist()), emitted, f"round {rounds - 1}")
    return rounds


def rounding_slack(cases, n: int) -> float:
    """An upper bound on P(some audited round of a lossless float64 sampler differs from an exact one).

    Each case hands the sampler float64(p), float64(q): every entry within relative 2^-53 of the exact
    law, so a row is within TV V 2^-53 of its law, a round within (2 gamma + 1) V 2^-53, and (coupling)
    N rounds differ from N exact rounds with probability <= N (2 gamma + 1) V 2^-53. Summed over cases.
    """
    return sum(n * (2 * c.gamma + 1) * c.vocab_size * 2.0**-53 for c in cases)


def test_level(family_level: float, slack: float, tests: int) -> float:
    """Each test's level, so that slack + tests x level = ``family_level`` (Bonferroni); ``InvalidArgument``
    when the float rounding slack of this many rounds would take half the family level or more."""
    family_level = check_real(family_level, "family_level", min_value=0, max_value=1, open_min=True, open_max=True)
    if slack >= family_level / 2:
        raise InvalidArgument(f"these rounds leave float rounding slack {slack:.2g}, half the family level "
                              f"{family_level:g} or more: use fewer rounds")
    return (family_level - slack) / tests


def run_audit(adapter: Adapter, cases: tuple[AuditCase, ...] = BATTERY, n: int = DEFAULT_ROUNDS, seed: int = 0,
              sequential: bool = False, family_level: float = 1e-6, power: float = 0.99,
              replay_rounds: int = 200) -> AuditReport:
    """Audit ``adapter`` on ``cases``: a lossless float64 sampler fails with probability <= ``family_level``.

    The float rounding slack s of the handed arrays (``rounding_slack``) is set aside and each test runs
    at (family_level - s) / (tests x looks) (Bonferroni); the report states family_level, s and that level.
    Sequential mode stops a case at its first rejecting look and the audit at its first failed case.
    """
    slack = rounding_slack(cases, n)
    level = test_level(family_level, slack, sum(tests_per_case(c.gamma) for c in cases) * len(looks(n, sequential)))
    start = time.perf_counter()
    results, not_run = run_cases(cases, sequential, lambda index, case: run_case(
        adapter, case, n, seed + index, sequential, level, power, replay_rounds))
    return AuditReport(adapter.name, adapter.description, n, sequential, float(family_level), power, results, not_run,
                       time.perf_counter() - start, versions(adapter), slack, level)


def run_cases(cases, sequential: bool, run_one) -> tuple[list[CaseResult], list[str]]:
    """(results, names not run): ``run_one(index, case)`` for each case; sequential mode stops after a failed one."""
    results: list[CaseResult] = []
    not_run: list[str] = []
    for index, case in enumerate(cases):
        if sequential and results and not results[-1].passed:
            not_run = [c.name for c in cases[index:]]
            break
        results.append(run_one(index, case))
    return results, not_run


@contextmanager
def one_torch_thread():
    """Batch-of-one rounds on tiny tensors: intra-op threads only add synchronisation (35x slower
    on a shared 2-core machine), so torch work runs with one thread; the setting is restored."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@contextmanager
def _single_torch_thread(adapter: Adapter):
    """``one_torch_thread`` for torch adapters; numpy adapters run as they are."""
    if adapter.generator_kind != "torch":
        yield
        return
    with one_torch_thread():
        yield


def versions(adapter) -> dict:
    """The versions a report records: python, numpy, and torch or transformers when the adapter uses them."""
    import platform

    out = {"python": platform.python_version(), "numpy": np.__version__}
    if adapter.generator_kind == "torch":
        import torch

        out["torch"] = torch.__version__
    if adapter.name.startswith("hf"):
        import transformers

        out["transformers"] = transformers.__version__
    return out
