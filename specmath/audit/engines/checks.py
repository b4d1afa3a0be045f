"""The G-tests of an engine audit and its result: N samples of the first two tokens against exact laws.

Notation: p = target law, w = the engine's sampling chain, N = generate calls.

``exact_laws`` computes the two laws once (``specmath.audit.engines.law``); ``check_samples`` G-tests
one sampler's N samples (the engine's or its control's) against both, each at level family_level / 2
(Bonferroni over the engine's two checks; ``specmath.settings.AuditSettings``, 1e-6 in every
profile), with the smallest TV it detects with probability ``power`` (``specmath.stats.detectable_tv``).
A ``Check`` is the G-test record ``specmath.stats.GTest`` and the sampler's role. ``GenerateAudit`` gathers the checks,
timings and what was measured beside them (the engine's drafting, its quantisation, a pathwise check).

Every audit that ran ends in one verdict of ``VERDICTS`` (the first word of ``GenerateAudit.verdict``), judged in
this order, and ``EXIT_STATUS`` maps it to ``specmath audit-generate``'s exit status:

* ``REFUSED`` (3): the engine rejected the request (``EngineRefused``: a reply ``{"error", "refused": true}``, an
  endpoint's HTTP 400), with its message;
* ``ENGINE ERROR`` (2): the engine raised, crashed (``{"error", "engine_dead": true}``) or broke the protocol, with
  its message and its version;
* ``LOSS`` (1): the engine's G-test rejected the exact law (with the TV measured, the TV the test detects and a
  reproducer: the command and seed that draw the same samples), or it broke its promise of the same tokens for the
  same seed (``LOSS (pathwise)``, with the seed: speculative against plain decoding, or a seeded request alone
  against in a batch). That LOSS is of seed reproducibility, not of the law: a law loss is a G-test's;
* ``INCONCLUSIVE`` (3): the engine passed but its negative control was not caught (the test could not have seen the
  loss it targets), the control itself failed to run, or the engine drafted no token (it did not speculate); for a
  pathwise check with a reference and a control of its own (a seeded request alone vs in a batch): the reference
  differed too (the plain path: no difference can be laid to speculation) or the control did not differ;
* ``PASS`` (0): the engine passed and its control was caught (``PASS (no negative control)`` where none ran).

A crashed or refused engine is never PASS and never LOSS. An engine that cannot run here (its package is not
installed) is no audit: ``GenerateAudit.skipped`` says why, its verdict is None, and it leaves the exit status alone.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields

import numpy as np

from specmath.audit.engines.law import NEGLIGIBLE, OTHER, Logits, first_token_law, two_token_rows
from specmath.audit.engines.semantics import EngineSemantics
from specmath.laws import Law
from specmath.sampling_options import SamplingOptions
from specmath.settings import CI, AuditSettings
from specmath.stats import GTest, detectable_tv, g_test
from specmath.validation import check_real

__all__ = ["ENGINE_CHECKS", "MAX_CELLS", "POOLED", "VERDICTS", "EXIT_STATUS", "Check", "GenerateAudit", "ExactLaws", "Failure", "exact_laws",
           "check_samples", "timed", "exit_status", "verdict_word", "in_verdict_words", "memoised", "detectable_tvs", "n_for_tv"]

#: the G-tests of one sampler (first token, first two tokens): each runs at family_level / ENGINE_CHECKS
ENGINE_CHECKS = 2
#: the most cells of each G-test: the likeliest are kept, the rest pooled into one. Power costs N ~ lambda(dof) / 4 TV^2
#: (``specmath.stats.detectable_tv``); 16 cells detect a TV of 0.05 at N = 8200, the hundreds that T = 1 has at
#: expected count >= 5 need N = 32000. The TV detected is on the test's cells, so a loss that only moves mass among
#: the pooled unlikely outcomes is detected as a smaller TV (or seen as an impossible outcome)
MAX_CELLS = 16
#: the cell of the two-token test that pools the unlikely cells beyond MAX_CELLS
POOLED = "pooled"
#: the verdicts of an audit that ran, in the order they are judged (the module's docstring)
VERDICTS = ("REFUSED", "ENGINE ERROR", "LOSS", "INCONCLUSIVE", "PASS")
#: ``specmath audit-generate``'s exit status for each verdict (2 is also a mistake in the arguments)
EXIT_STATUS = {"PASS": 0, "LOSS": 1, "ENGINE ERROR": 2, "REFUSED": 3, "INCONCLUSIVE": 3}
#: several audits: the exit status of the first of these verdicts among them (a loss outranks an error, ...)
_STATUS_ORDER = ("LOSS", "ENGINE ERROR", "REFUSED", "INCONCLUSIVE", "PASS")


@dataclass(frozen=True)
class ExactLaws:
    """The first token's law (V,) and the pooled cells of the first two tokens, for N samples."""

    first: np.ndarray
    cells: dict
    frequent: set
    joints: dict = field(default_factory=dict)  # frequent x1 -> (V,) P(x1, .), to tell a negligible x2
    pooled: frozenset = frozenset()  # two-token cells merged into POOLED (the least likely, beyond MAX_CELLS)
    first_kept: frozenset | None = None  # the first token's own cells (None: every frequent token)

    def cell_of(self, sample: Sequence[int]):
        """The cell of the two-token test a sample (x1, x2) falls in; the sample itself where it is impossible."""
        x1, x2 = sample[0], sample[1]
        if x1 not in self.frequent:
            cell = (OTHER,) if self.first[x1] >= NEGLIGIBLE else (x1, x2)
        elif (x1, x2) in self.cells or (x1, x2) in self.pooled:
            cell = (x1, x2)
        else:
            joint = self.joints.get(x1)
            cell = (x1, x2) if joint is not None and joint[x2] < NEGLIGIBLE else (x1, OTHER)
        return POOLED if cell in self.pooled else cell

    def first_cells(self) -> dict:
        """The first token's law on the test's cells: the frequent tokens (expected count >= 5 at this N are
        exactly ``frequent``; the MAX_CELLS - 1 most likely of them), the others pooled into OTHER, as the G-test
        pools them; tokens of negligible law (``engine_law.NEGLIGIBLE``) stay out, so that one sampled is an
        impossible outcome."""
        kept = self.frequent if self.first_kept is None else self.first_kept
        cells = {x: float(self.first[x]) for x in kept}
        rest = float(self.first[self.first >= NEGLIGIBLE].sum() - sum(cells.values()))
        if rest > 0:
            cells[OTHER] = rest
        return cells

    def first_cell_of(self, x1: int):
        kept = self.frequent if self.first_kept is None else self.first_kept
        return x1 if x1 in kept or self.first[x1] < NEGLIGIBLE else OTHER


def _capped(cells: dict, most: int) -> tuple[dict, frozenset]:
    """The ``most - 1`` likeliest cells and one POOLED cell of the rest's mass (when there are more than ``most``)."""
    if len(cells) <= most:
        return cells, frozenset()
    order = sorted(cells, key=lambda c: (-cells[c], repr(c)))  # ties broken by name: the same cells in every process
    kept = {c: cells[c] for c in order[:most - 1]}
    rest = order[most - 1:]
    kept[POOLED] = math.fsum(cells[c] for c in rest)
    return kept, frozenset(rest)


def exact_laws(logits: Logits, prompt: Sequence[int], options: SamplingOptions, semantics: EngineSemantics,
               n: int, max_cells: int | None = None) -> ExactLaws:
    """Both laws of an audit of N samples, from ``logits`` (``engine_law``), each test on at most ``max_cells`` cells
    (default ``MAX_CELLS``; the likeliest kept, the rest pooled)."""
    most = MAX_CELLS if max_cells is None else max_cells
    p1 = first_token_law(logits, prompt, options, semantics)
    cells, joints = two_token_rows(logits, prompt, options, semantics, n, p1=p1)
    cells, pooled = _capped(cells, most)
    frequent = set(joints)
    first_kept = None
    if len(frequent) > most - 1:
        first_kept = frozenset(sorted(frequent, key=lambda x: (-p1[x], x))[:most - 1])
    return ExactLaws(p1, cells, frequent, joints, pooled, first_kept)


def memoised(logits: Logits) -> Logits:
    """``logits`` that asks the engine once per context (the laws at several N share their contexts)."""
    rows: dict[tuple, np.ndarray] = {}

    def cached(contexts: list[list[int]]) -> np.ndarray:
        missing = [c for c in dict.fromkeys(tuple(c) for c in contexts) if c not in rows]
        if missing:
            rows.update(zip(missing, logits([list(c) for c in missing]), strict=True))
        return np.stack([rows[tuple(c)] for c in contexts])

    return cached


def detectable_tvs(laws: ExactLaws, n: int, settings: AuditSettings = CI) -> tuple[float, float]:
    """The TVs the two tests of N samples detect with probability ``settings.power`` (first token, first two)."""
    level = settings.family_level / ENGINE_CHECKS
    return (detectable_tv(Law.from_weights(laws.first_cells()), n, level, settings.power),
            detectable_tv(Law.from_weights(laws.cells), n, level, settings.power))


def n_for_tv(logits: Logits, prompt: Sequence[int], options: SamplingOptions, semantics: EngineSemantics,
             target_tv: float, settings: AuditSettings = CI, *, most: int = 50_000) -> int:
    """The smallest N (to 2 %) at which both tests detect a TV of ``target_tv`` with probability ``settings.power``
    (a test of a single cell, a deterministic token, detects nothing and counts for nothing), at most ``most``.

    The detectable TV is sqrt(lambda(dof) / 4N) (``specmath.stats.detectable_tv``), and the cells (expected
    count >= 5) grow with N, so dof does too: N is scaled by (detectable / target)^2 until it holds."""
    check_real(target_tv, "target TV", min_value=0, max_value=1, open_min=True)
    logits = memoised(logits)
    n = 1000
    for _ in range(12):
        laws = exact_laws(logits, prompt, options, semantics, n)
        worst = max((tv for tv in detectable_tvs(laws, n, settings) if math.isfinite(tv)), default=0.0)
        if worst <= target_tv or n >= most:
            return min(n, most)
        n = min(most, math.ceil(n * (worst / target_tv) ** 2 * 1.02))
    return n


@dataclass(frozen=True, kw_only=True)
class Check(GTest):
    """One G-test of one sampler against one exact law (``GTest``), and whose samples they were."""

    role: str  # "engine" or "control"

    @classmethod
    def of(cls, test: GTest, role: str) -> Check:
        """``test`` as the check of the sampler in ``role``."""
        return cls(**{f.name: getattr(test, f.name) for f in fields(GTest)}, role=role)

    def to_json(self) -> dict:
        def finite(x: float | None):
            return x if x is None or math.isfinite(x) else str(x)  # strict JSON has no inf

        return {"name": self.name, "role": self.role, "statistic": finite(self.statistic), "dof": self.dof,
                "p_value": self.p_value, "level": self.level, "detectable_tv": finite(self.detectable_tv),
                "passed": self.passed, "measured_tv": finite(self.measured_tv),
                "impossible": [list(x) if isinstance(x, tuple) else x for x in self.impossible]}


def check_samples(samples: Sequence[Sequence[int]], role: str, laws: ExactLaws,
                  settings: AuditSettings = CI) -> list[Check]:
    """The two G-tests of one sampler's samples (each at least two tokens long), each at family_level / 2."""
    n = len(samples)
    level = settings.family_level / ENGINE_CHECKS
    first = Law.from_weights(laws.first_cells())  # the G-test pools the same cells: the same test, 12 cells not 49152
    pair_law = Law.from_weights(laws.cells)
    out = []
    for name, law, counts in (
        ("first token", first, Counter(laws.first_cell_of(s[0]) for s in samples)),
        ("first two tokens", pair_law, Counter(laws.cell_of(s) for s in samples)),
    ):
        g = g_test(counts, law)
        # the shift as measured: 1/2 sum over cells |count / N - law|, sampling noise included (about sqrt(cells / N));
        # fsum: exactly rounded, so the same whatever order the set of cells comes in (string cells hash per process)
        weights = {x: float(w) for x, w in law.items()}
        measured = 0.5 * math.fsum(abs(counts.get(x, 0) / n - weights.get(x, 0.0)) for x in set(weights) | set(counts))
        judged = g.judged(name, level, settings.power, detectable_tv(law, n, level, settings.power),
                          impossible=g.impossible[:3], measured_tv=measured)
        out.append(Check.of(judged, role))
    return out


@dataclass(frozen=True)
class Failure:
    """Why an engine's request gave no samples: its message (``ExcType: first line``), whether it refused, and the
    server that failed where the exception names one (``EngineProtocolError.source``)."""

    message: str
    refused: bool = False
    source: str | None = None


def timed(fn: Callable, *args) -> tuple[object | None, Failure | None, float]:
    """(result, None, seconds), or (None, ``Failure``, seconds) when ``fn`` raised: an engine's own failure is
    reported as its error or its refusal (``EngineRefused``), never as a loss."""
    from specmath.audit.engines.protocol import EngineRefused

    start = time.perf_counter()
    try:
        result = fn(*args)
    except Exception as exc:  # noqa: BLE001 - any exception of the engine under audit is its error
        message = str(exc).splitlines()[0] if str(exc) else ""
        failure = Failure(f"{type(exc).__name__}: {message}"[:300], refused=isinstance(exc, EngineRefused),
                          source=getattr(exc, "source", None))
        return None, failure, time.perf_counter() - start
    return result, None, time.perf_counter() - start


#: the words audit-generate wrote before its verdicts came from ``VERDICTS``, and the verdict each one is: a
#: committed record keeps what its run printed, and a page reads it in the set's words
EARLIER_WORDS = (("FAIL", "LOSS"), ("pass", "PASS"))


def in_verdict_words(recorded: str) -> str:
    """A recorded verdict line in ``VERDICTS``' words: ``FAIL (pathwise)`` -> ``LOSS (pathwise)``, ``pass`` ->
    ``PASS``; a line in the set's words as it is."""
    for earlier, word in EARLIER_WORDS:
        if recorded == earlier or recorded.startswith((earlier + " ", earlier + ":")):
            return word + recorded[len(earlier):]
    return recorded


def verdict_word(verdict: str | None) -> str | None:
    """The verdict of ``VERDICTS`` a verdict line starts with (None for an audit that did not run)."""
    if verdict is None:
        return None
    return next(word for word in VERDICTS if verdict.startswith(word))


def exit_status(verdicts: Sequence[str | None]) -> int:
    """The exit status of several audits' verdicts: ``EXIT_STATUS`` of the first of LOSS, ENGINE ERROR, REFUSED,
    INCONCLUSIVE found among them; 0 when every audit that ran passed (audits that did not run count for nothing)."""
    words = {verdict_word(v) for v in verdicts} - {None}
    return next((EXIT_STATUS[w] for w in _STATUS_ORDER if w in words), 0)


@dataclass
class GenerateAudit:
    """An engine x target x options audit: its checks, its control's, timings, its verdict, or why it did not run."""

    engine: str
    pair: str
    config: str
    n: int
    prompt: list[int] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    error: str | None = None  # the engine raised or crashed: ENGINE ERROR, never a verdict on losslessness
    error_source: str | None = None  # the server whose failure ``error`` or ``refused`` is, where the engine names one
    refused: str | None = None  # the engine rejected the request (its message): REFUSED
    skipped: str | None = None  # it cannot run here (not installed): no audit, no verdict
    engine_version: str | None = None  # what the engine says it is (a JSON-lines engine's ``info``)
    seed: int = 0  # call i of the engine is seeded seed + i (its control's: seed + CONTROL_SEED_OFFSET + i)
    reproducer: str | None = None  # the command that draws the same samples (the caller knows how it was reached)
    seconds: float = 0.0  # the engine's N generate calls
    control_seconds: float = 0.0
    control: str = ""  # what the control does wrong
    control_error: str | None = None  # the control's engine raised: INCONCLUSIVE (it is not the engine under audit)
    drafted: int | None = None  # tokens the engine drafted and how many were accepted, when it says
    accepted: int | None = None
    quantisation_tv: float | None = None  # TV(first law from the engine's logits, from transformers' forward)
    #: speculative vs plain, token for token (``specmath.audit.engines.pathwise``); a check with a reference of its
    #: own carries "reference_differences" (where it must agree: any is INCONCLUSIVE) and "control_differences"
    #: (where it must differ: none is INCONCLUSIVE)
    pathwise: dict | None = None
    notes: list[str] = field(default_factory=list)
    #: every request sent: role, seed (call i of a request seeded S is seeded S + i), n, and what the engine reported
    #: of it (its spec-decode counters before and after): any sample can be drawn again alone
    requests: list[dict] = field(default_factory=list)

    def record_failure(self, failure: Failure, where: str = "") -> None:
        """The engine's failure as this audit's REFUSED or ENGINE ERROR, with the server it names; ``where``
        prefixes the message (the part of the audit that met it)."""
        if failure.refused:
            self.refused = where + failure.message
        else:
            self.error = where + failure.message
        self.error_source = failure.source

    @property
    def error_kind(self) -> str | None:
        """REFUSED (the engine rejected the request) or ENGINE ERROR (it crashed), None when it ran."""
        return "REFUSED" if self.refused else "ENGINE ERROR" if self.error else None

    @property
    def engine_passed(self) -> bool:
        return all(c.passed for c in self.checks if c.role == "engine")

    @property
    def control_caught(self) -> bool:
        return any(not c.passed for c in self.checks if c.role == "control")

    @property
    def has_control(self) -> bool:
        return any(c.role == "control" for c in self.checks)

    @property
    def passed(self) -> bool:
        """The verdict is PASS: the engine passes and its control (where one ran) is caught."""
        return verdict_word(self.verdict) == "PASS"

    def _loss(self) -> str | None:
        """The LOSS line: the rejected check's measured and detectable TV and p-value, or the pathwise seed."""
        again = f"; reproduce: {self.reproducer}" if self.reproducer else f"; seed {self.seed}"
        failed = [c for c in self.checks if c.role == "engine" and not c.passed]
        if failed:
            c = failed[-1]  # the first two tokens when both failed: the law the controls target
            impossible = f", impossible outcomes {[list(x) if isinstance(x, tuple) else x for x in c.impossible]}" \
                if c.impossible else ""
            return (f"LOSS: {c.name}: measured TV {_short(c.measured_tv)}, detectable TV {_short(c.detectable_tv)}, "
                    f"p = {c.p_value:.2g} at level {c.level:.2g}{impossible}{again}")
        if self.pathwise and self.pathwise.get("differences"):
            first = self.pathwise["first"]
            against = self.pathwise.get("against", "plain decoding")  # the seeds row: the same request alone
            # a promise about the tokens of a seed, broken; the law is the G-tests' to judge
            return (f"LOSS (pathwise): {self.pathwise['differences']} of {self.pathwise['seeds']} seeds differ from "
                    f"{against}, first seed {first['seed']} at token {first['position']} ({first['speculative']} "
                    f"vs {first['plain']}): the same seed did not give the same tokens (seed reproducibility, not a "
                    f"test of the law){again}")
        return None

    @property
    def verdict(self) -> str | None:
        """One of ``VERDICTS`` and why (the module's docstring); None for an audit that did not run."""
        if self.skipped:
            return None
        if self.refused:
            return f"REFUSED: {self.refused}"
        if self.error:
            return f"ENGINE ERROR: {self.error} ({self.engine_version or self.engine})"
        pathwise = self.pathwise or {}
        if pathwise.get("reference_differences"):
            # the comparison's own reference (the plain path, which must agree) differs: a difference on the
            # speculative path cannot be laid to speculation
            return (f"INCONCLUSIVE: {pathwise['reference_differences']} of {pathwise['seeds']} seeds differ on the plain "
                    f"path too ({pathwise.get('reference', 'its reference')}): a difference cannot be laid to speculation")
        loss = self._loss()
        if loss:
            return loss
        if pathwise.get("control_differences") == 0:
            return (f"INCONCLUSIVE: the negative control ({self.control}) gave the same tokens as the request: the "
                    "comparison could not have seen a change")
        if self.drafted == 0:
            return "INCONCLUSIVE: the engine drafted no token: it did not speculate, so no drafted row was audited"
        if self.control_error:
            return f"INCONCLUSIVE: the negative control did not run ({self.control_error})"
        if not self.has_control:  # a pathwise check whose own control differed has had its control caught
            return "PASS" if pathwise.get("control_differences") else "PASS (no negative control)"
        if not self.control_caught:
            two = self.detectable("first two tokens", "control")
            return (f"INCONCLUSIVE: the negative control ({self.control}) was not caught at N = {self.n}: the loss it "
                    f"makes is below what the test detects here (detectable TV {_short(two)})")
        return "PASS"

    def detectable(self, name: str, role: str = "engine") -> float:
        return next((c.detectable_tv for c in self.checks if c.role == role and c.name == name), math.nan)

    def to_json(self) -> dict:
        return {"engine": self.engine, "pair": self.pair, "config": self.config, "n": self.n, "prompt": self.prompt,
                "verdict": self.verdict, "passed": self.passed, "error": self.error, "refused": self.refused,
                "error_source": self.error_source,
                "skipped": self.skipped, "engine_version": self.engine_version, "seed": self.seed,
                "reproducer": self.reproducer, "seconds": self.seconds, "control_seconds": self.control_seconds,
                "control": self.control, "control_error": self.control_error,
                "control_caught": self.control_caught if self.has_control else None, "drafted": self.drafted,
                "accepted": self.accepted, "quantisation_tv": self.quantisation_tv, "pathwise": self.pathwise,
                "notes": self.notes, "error_kind": self.error_kind, "requests": self.requests,
                "checks": [c.to_json() for c in self.checks]}


def _short(x: float | None) -> str:
    return "-" if x is None or math.isnan(x) else "inf" if math.isinf(x) else f"{x:.3f}"
