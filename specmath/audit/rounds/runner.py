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

How strong the audit is (N, the seed, sequential looks, the family level and the power) is one
``specmath.settings.AuditSettings``; the report keeps the settings it ran under.
"""

from __future__ import annotations

import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from specmath.audit.power import looks, run_tests, tests_per_case
from specmath.audit.rounds.adapters import Adapter, make_generator
from specmath.audit.rounds.calls import SamplerCalls, SamplerFailure
from specmath.audit.rounds.cases import BATTERY, AuditCase
from specmath.audit.rounds.drafts import RoundDrafts
from specmath.audit.rounds.probes import run_probes
from specmath.audit.rounds.replay import ReplayOutcome, record_replay
from specmath.settings import AuditSettings, as_settings
from specmath.stats import GTest
from specmath.validation import InvalidArgument, check_real

__all__ = ["CaseResult", "AuditReport", "run_case", "run_audit", "run_cases", "versions", "rounding_slack", "test_level"]


@dataclass
class CaseResult:
    """Everything the audit learned about one case."""

    case: str
    description: str
    gamma: int
    vocab_size: int
    n: int = 0
    tests: list[GTest] = field(default_factory=list)
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
    """An adapter's audit over the battery, and the settings it ran under."""

    adapter: str
    description: str
    settings: AuditSettings  # N per case, the first case's seed, looks, the stated family level (rounding included), power
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


def run_case(adapter: Adapter, case: AuditCase, settings: AuditSettings, level: float,
             replay_rounds: int = 200) -> CaseResult:
    """Audit ``adapter`` on one case with ``settings`` (its n, this case's seed, its looks, its power), each
    test at ``level``: rounds and tests at the looks, edge probes, replay of the first ``replay_rounds``."""
    with _single_torch_thread(adapter):
        return _run_case(adapter, case, settings, level, replay_rounds)


def _run_case(adapter: Adapter, case: AuditCase, settings: AuditSettings, level: float, replay_rounds: int) -> CaseResult:
    start = time.perf_counter()
    result = CaseResult(case.name, case.description, case.gamma, case.vocab_size)
    expected = case.expected(adapter.warp)
    drafts = RoundDrafts(case, adapter.warp)
    drafts_rng = np.random.default_rng([settings.seed, 1])
    rounds = _Rounds(adapter, case, SamplerCalls(adapter, drafts), make_generator(adapter.generator_kind, settings.seed),
                     result, replay_rounds)
    for look in looks(settings.n, settings.sequential):
        tokens, nodes = drafts.draw(look - rounds.done, drafts_rng)
        try:
            rounds.run(tokens, nodes)
        except SamplerFailure as failure:
            result.error, result.invalid_output, result.exception = failure.text, failure.invalid, failure.cause
            break
        result.tests = run_tests(expected, rounds.counts, level, settings.power, final=False)
        if any(t.rejects for t in result.tests):
            break
    result.n = sum(rounds.counts.values())
    if result.n:
        result.tests = run_tests(expected, rounds.counts, level, settings.power, final=True, cache=case._cache)
    run_probes(result, case, adapter, rounds.calls)
    result.input_writes = rounds.calls.writes
    result.seconds = time.perf_counter() - start
    return result


@dataclass
class _Rounds:
    """A case's sampler calls so far: the emitted tuples counted, and how many rounds are done."""

    adapter: Adapter
    case: AuditCase
    calls: SamplerCalls
    generator: object  # the sampler's seeded generator (numpy or torch), one for the whole case
    result: CaseResult  # where replays are recorded
    replay_rounds: int  # one-round samplers with a draw protocol: the first this many rounds are replayed
    counts: Counter = field(default_factory=Counter)
    done: int = 0

    def run(self, tokens: np.ndarray, nodes: np.ndarray) -> None:
        """The drafted rounds ``tokens`` [R, gamma] (``nodes``: their draft rows): one call for a batched sampler,
        else one call per round."""
        if self.adapter.batched:
            self.counts.update(self.calls.rounds(tokens, nodes, self.generator, self.done))
            self.done += len(tokens)
            return
        for row in range(len(tokens)):
            replayed = self.adapter.draws and self.done < self.replay_rounds
            state = self.generator.get_state() if replayed else None
            emitted = self.calls.round(tokens[row], nodes[row], self.generator,
                                       f"round {self.done}, drafts {tokens[row].tolist()}")
            self.counts[emitted] += 1
            self.done += 1
            if state is not None:
                record_replay(self.result, self.case, self.adapter, state, tuple(tokens[row].tolist()), emitted,
                              f"round {self.done - 1}")


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


test_level.__test__ = False  # a helper, not a test, where a test module imports it


def run_audit(adapter: Adapter, cases: tuple[AuditCase, ...] = BATTERY, settings: AuditSettings | str | None = None,
              replay_rounds: int = 200) -> AuditReport:
    """Audit ``adapter`` on ``cases`` with ``settings`` (an ``AuditSettings``, a profile name, or None: ``ci``):
    a lossless float64 sampler fails with probability <= settings.family_level; case i runs with seed settings.seed + i.

    The float rounding slack s of the handed arrays (``rounding_slack``) is set aside and each test runs
    at (family_level - s) / (tests x looks) (Bonferroni); the report states family_level, s and that level.
    Sequential mode stops a case at its first rejecting look and the audit at its first failed case.
    """
    settings = as_settings(settings)
    slack = rounding_slack(cases, settings.n)
    level = test_level(settings.family_level, slack,
                       sum(tests_per_case(c.gamma) for c in cases) * len(looks(settings.n, settings.sequential)))
    start = time.perf_counter()
    results, not_run = run_cases(cases, settings.sequential, lambda index, case: run_case(
        adapter, case, settings.replace(seed=settings.seed + index), level, replay_rounds))
    return AuditReport(adapter.name, adapter.description, settings, results, not_run,
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
