"""Run the audit: draw drafts, call the sampler, test the counts, probe zero draws, replay exactly.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

For each battery case (``specmath.audit.cases``) and an adapter (``specmath.audit.adapters``):

1. **rounds**: N times, draw x_1..x_gamma from w(q) with the auditor's own numpy generator, hand
   the sampler the raw arrays and its own seeded generator, count the emitted tuples; an exception
   ends the case with an error verdict;
2. **tests**: G-tests of the joint round law and the per-position laws (``specmath.audit.power``),
   at looks N/16..N in sequential mode (a rejection stops the case, and the audit);
3. **edge probes**: for k <= gamma, a generator whose draw k is exactly 0 or the largest uniform
   below 1 (``specmath.audit.edge_draws``), with drafts chosen so that x_k has the smallest ratio p/q
   (often p(x_k) = 0; for the zero) or the largest ratio below 1 (for the max), the earlier ones the
   largest; k = gamma puts the edge on the first draw after the gamma accept uniforms, the resample
   draw of a sampler that draws its uniforms first. The emitted tuple must have positive exact
   probability (a necessary condition whatever the drafts, as long as q_i(x_i) > 0), and nothing may
   raise;
4. **replay**: for samplers with a known draw protocol, the first ``replay_rounds`` rounds and every
   probe are replayed through the exact algorithm (``specmath.audit.replay``).

A case passes when no test rejects, nothing raised, every probe emitted a possible tuple and the
replay found no mismatch beyond float rounding. A sampler that raises (in a round or a probe) makes
the case an ERROR naming the exception (``CaseResult.errors``), never a loss: an exception says the
sampler is broken on valid input, not what law it samples.
"""

from __future__ import annotations

import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from specmath.audit.adapters import Adapter, make_generator
from specmath.audit.cases import BATTERY, AuditCase
from specmath.audit.edge_draws import EDGES, edge_generator
from specmath.audit.power import TestResult, looks, run_tests, tests_per_case
from specmath.audit.replay import ReplayOutcome, replay_round
from specmath.validation import check_real

__all__ = ["CaseResult", "AuditReport", "run_case", "run_audit", "DEFAULT_ROUNDS"]

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

    @property
    def reasons(self) -> list[str]:
        """Why the case fails (empty when it passes)."""
        out = []
        if self.error:
            out.append(f"error: {self.error}")
        out += [f"{t.name}: p = {t.p_value:.3g} < {t.level:.3g}" + (f", impossible {t.impossible[0]!r}" if t.impossible else "")
                for t in self.tests if t.rejects]
        out += [f"{p['edge']} probe k={p['k']}: {p['problem']}" for p in self.probes if p["problem"]]
        out += [f"replay mismatch in {f['where']}: expected {f['expected']}, got {f['emitted']}" for f in self.replay_failures]
        return out

    @property
    def errors(self) -> list[str]:
        """What the sampler raised (a round or an edge probe): an error in the sampler, not a loss."""
        out = [self.error] if self.error else []
        return out + [f"{p['edge']} probe k={p['k']}: {p['problem']}" for p in self.probes if p.get("raised")]

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
    family_level: float
    power: float
    cases: list[CaseResult]
    not_run: list[str]
    seconds: float
    versions: dict

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.cases)

    @property
    def errored(self) -> bool:
        """True when the sampler raised in some case: the report is an error, not a loss."""
        return any(c.errors for c in self.cases)


class _Drafter:
    """Draws x_i ~ w(q)(. | x_<i) by inverse CDF from the auditor's generator (rows cached per context)."""

    def __init__(self, case: AuditCase, adapter: Adapter, rng: np.random.Generator) -> None:
        self.draft = case.models(adapter.warp)[1]
        self.gamma, self.rng, self.cdfs = case.gamma, rng, {}

    def __call__(self) -> tuple:
        tokens: tuple = ()
        for _ in range(self.gamma):
            cdf = self.cdfs.get(tokens)
            if cdf is None:
                law = self.draft(tokens)
                cdf = self.cdfs[tokens] = np.cumsum([float(law[x]) for x in range(len(law))])
            # the first index whose cumulative mass exceeds u * total has positive probability
            tokens += (int(np.searchsorted(cdf, self.rng.random() * cdf[-1], side="right")),)
        return tokens


def _exact_rows(case: AuditCase, adapter: Adapter, tokens: tuple) -> tuple[list, list]:
    target, draft = case.models(adapter.warp)
    return [target(tokens[:i]) for i in range(len(tokens) + 1)], [draft(tokens[:i]) for i in range(len(tokens))]


def _probe_drafts(case: AuditCase, adapter: Adapter, k: int, edge: str) -> tuple:
    """Drafts with the largest p/q before position k and, at k, the smallest p/q ("zero" edge) or
    the largest p/q below 1 ("max" edge; the smallest if none is below 1). Ties: lowest id.

    k = gamma (the draw after the gamma accept uniforms: the first resample draw) uses the k = 0
    drafts, so the round usually rejects at position 0 and resamples with the edge uniform.
    """
    k = 0 if k == case.gamma else k
    target, draft = case.models(adapter.warp)
    tokens: tuple = ()
    for j in range(case.gamma):
        p, q = target(tokens), draft(tokens)
        ratios = sorted((p[x] / q[x], x) for x in range(case.vocab_size) if q[x] > 0)
        below_one = [r for r in ratios if r[0] < 1]
        if j != k:
            choice = max(ratios, key=lambda r: (r[0], -r[1]))
        elif edge == "max" and below_one:
            choice = max(below_one, key=lambda r: (r[0], -r[1]))
        else:
            choice = ratios[0]
        tokens += (choice[1],)
    return tokens


def _call(adapter: Adapter, case: AuditCase, tokens: tuple, generator) -> tuple:
    p, q = case.arrays(tokens)
    return tuple(adapter(p, q, np.array(tokens, dtype=np.int64), generator))


def _run_probes(result: CaseResult, case: AuditCase, adapter: Adapter) -> None:
    joint = case.expected(adapter.warp).joint
    for edge in EDGES:
        for k in range(case.gamma + 1):
            _run_probe(result, case, adapter, joint, edge, k)


def _run_probe(result: CaseResult, case: AuditCase, adapter: Adapter, joint, edge: str, k: int) -> None:
    """One edge probe: the emitted tuple must be possible, nothing may raise, the replay must agree."""
    tokens = _probe_drafts(case, adapter, k, edge)
    generator = edge_generator(adapter.generator_kind, k, edge)
    state = generator.get_state() if adapter.draws else None
    probe = {"edge": edge, "k": k, "drafts": list(tokens), "emitted": None, "problem": None}
    result.probes.append(probe)
    try:
        emitted = _call(adapter, case, tokens, generator)
    except Exception as exc:  # an exception on valid input is a finding, reported as such
        probe["problem"] = f"raised {type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:120]}"
        probe["raised"] = True
        return
    probe["emitted"] = list(emitted)
    if joint.prob(emitted) == 0:
        probe["problem"] = f"emitted {emitted}, which has exact probability 0"
    if state is not None:
        _replay(result, case, adapter, state, tokens, emitted, f"{edge} probe k={k}")


def _replay(result: CaseResult, case: AuditCase, adapter: Adapter, state, tokens: tuple, emitted: tuple, where: str) -> None:
    p_laws, q_laws = _exact_rows(case, adapter, tokens)
    outcome = replay_round(state, adapter.draws, p_laws, q_laws, tokens, emitted)
    result.replays.append(outcome)
    if outcome.kind == "mismatch" and len(result.replay_failures) < 5:
        result.replay_failures.append({"where": where, "drafts": list(tokens), "uniforms": list(outcome.uniforms),
                                       "expected": list(outcome.expected), "emitted": list(emitted)})
    elif outcome.kind == "mismatch":
        result.replay_failures.append({"where": where, "expected": list(outcome.expected), "emitted": list(emitted)})


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
    drafter = _Drafter(case, adapter, np.random.default_rng([seed, 1]))
    generator = make_generator(adapter.generator_kind, seed)
    counts: Counter = Counter()
    rounds = 0
    for look in looks(n, sequential):
        while rounds < look and result.error is None:
            tokens = drafter()
            state = generator.get_state() if adapter.draws and rounds < replay_rounds else None
            try:
                emitted = _call(adapter, case, tokens, generator)
            except Exception as exc:
                result.error = f"round {rounds}, drafts {list(tokens)}: {type(exc).__name__}: {exc}"
                break
            counts[emitted] += 1
            rounds += 1
            if state is not None:
                _replay(result, case, adapter, state, tokens, emitted, f"round {rounds - 1}")
        if result.error is not None or rounds == 0:
            break
        result.tests = run_tests(expected, counts, level, power, final=False)
        if any(t.rejects for t in result.tests):
            break
    result.n = rounds
    if rounds:
        result.tests = run_tests(expected, counts, level, power, final=True, cache=case._cache)
    _run_probes(result, case, adapter)
    result.seconds = time.perf_counter() - start
    return result


def run_audit(adapter: Adapter, cases: tuple[AuditCase, ...] = BATTERY, n: int = DEFAULT_ROUNDS, seed: int = 0,
              sequential: bool = False, family_level: float = 1e-6, power: float = 0.99,
              replay_rounds: int = 200) -> AuditReport:
    """Audit ``adapter`` on ``cases``; each test at family_level / (tests x looks) (Bonferroni).

    Sequential mode stops a case at its first rejecting look and the audit at its first failed case.
    """
    family_level = check_real(family_level, "family_level", min_value=0, max_value=1, open_min=True, open_max=True)
    total_tests = sum(tests_per_case(c.gamma) for c in cases) * len(looks(n, sequential))
    level = family_level / total_tests
    start = time.perf_counter()
    results, not_run = _run_cases(adapter, cases, n, seed, sequential, level, power, replay_rounds)
    return AuditReport(adapter.name, adapter.description, n, sequential, family_level, power, results, not_run,
                       time.perf_counter() - start, _versions(adapter))


def _run_cases(adapter, cases, n, seed, sequential, level, power, replay_rounds) -> tuple[list[CaseResult], list[str]]:
    results: list[CaseResult] = []
    not_run: list[str] = []
    for index, case in enumerate(cases):
        if sequential and results and not results[-1].passed:
            not_run = [c.name for c in cases[index:]]
            break
        results.append(run_case(adapter, case, n, seed + index, sequential, level, power, replay_rounds))
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


def _versions(adapter: Adapter) -> dict:
    import platform

    out = {"python": platform.python_version(), "numpy": np.__version__}
    if adapter.generator_kind == "torch":
        import torch

        out["torch"] = torch.__version__
    if adapter.name.startswith("hf"):
        import transformers

        out["transformers"] = transformers.__version__
    return out
