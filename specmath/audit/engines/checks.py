"""The G-tests of an engine audit and its result: N samples of the first two tokens against exact laws.

Notation: p = target law, w = the engine's sampling chain, N = generate calls.

``exact_laws`` computes the two laws once (``specmath.audit.engines.law``); ``check_samples`` G-tests
one sampler's N samples (the engine's or its control's) against both, each at level family_level / 2
(Bonferroni over the engine's two checks; ``specmath.settings.AuditSettings``, 1e-6 in every
profile), with the smallest TV it detects with probability ``power`` (``specmath.stats.detectable_tv``).
A ``Check`` is the G-test record ``specmath.stats.GTest`` and the sampler's role. ``GenerateAudit`` gathers the checks,
timings and what was measured beside them (the engine's drafting, its quantisation, a pathwise check).
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

__all__ = ["ENGINE_CHECKS", "Check", "GenerateAudit", "ExactLaws", "exact_laws", "check_samples", "timed"]

#: the G-tests of one sampler (first token, first two tokens): each runs at family_level / ENGINE_CHECKS
ENGINE_CHECKS = 2


@dataclass(frozen=True)
class ExactLaws:
    """The first token's law (V,) and the pooled cells of the first two tokens, for N samples."""

    first: np.ndarray
    cells: dict
    frequent: set
    joints: dict = field(default_factory=dict)  # frequent x1 -> (V,) P(x1, .), to tell a negligible x2

    def cell_of(self, sample: Sequence[int]):
        """The cell of the two-token test a sample (x1, x2) falls in; the sample itself where it is impossible."""
        x1, x2 = sample[0], sample[1]
        if x1 not in self.frequent:
            return (OTHER,) if self.first[x1] >= NEGLIGIBLE else (x1, x2)
        if (x1, x2) in self.cells:
            return (x1, x2)
        joint = self.joints.get(x1)
        return (x1, x2) if joint is not None and joint[x2] < NEGLIGIBLE else (x1, OTHER)

    def first_cells(self) -> dict:
        """The first token's law on the test's cells: the frequent tokens (expected count >= 5 at this N are
        exactly ``frequent``), the others pooled into OTHER, as the G-test pools them; tokens of negligible
        law (``engine_law.NEGLIGIBLE``) stay out, so that one sampled is an impossible outcome."""
        cells = {x: float(self.first[x]) for x in self.frequent}
        rest = float(self.first[self.first >= NEGLIGIBLE].sum() - sum(cells.values()))
        if rest > 0:
            cells[OTHER] = rest
        return cells

    def first_cell_of(self, x1: int):
        return x1 if x1 in self.frequent or self.first[x1] < NEGLIGIBLE else OTHER


def exact_laws(logits: Logits, prompt: Sequence[int], options: SamplingOptions, semantics: EngineSemantics,
               n: int) -> ExactLaws:
    """Both laws of an audit of N samples, from ``logits`` (``engine_law``)."""
    p1 = first_token_law(logits, prompt, options, semantics)
    cells, joints = two_token_rows(logits, prompt, options, semantics, n, p1=p1)
    return ExactLaws(p1, cells, set(joints), joints)


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


def timed(fn: Callable, *args) -> tuple[object | None, str | None, float]:
    """(result, None, seconds), or (None, "ExcType: first line", seconds) when ``fn`` raised: an engine's
    own failure is reported as an error, never as a loss."""
    start = time.perf_counter()
    try:
        result = fn(*args)
    except Exception as exc:  # noqa: BLE001 - any exception of the engine under audit is its error
        message = str(exc).splitlines()[0] if str(exc) else ""
        return None, f"{type(exc).__name__}: {message}"[:200], time.perf_counter() - start
    return result, None, time.perf_counter() - start


@dataclass
class GenerateAudit:
    """An engine x target x options audit: its checks, its control's, timings, or why it did not run."""

    engine: str
    pair: str
    config: str
    n: int
    prompt: list[int] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    error: str | None = None  # the engine raised: an error, never a verdict on losslessness
    skipped: str | None = None
    seconds: float = 0.0  # the engine's N generate calls
    control_seconds: float = 0.0
    control: str = ""  # what the control does wrong
    drafted: int | None = None  # tokens the engine drafted and how many were accepted, when it says
    accepted: int | None = None
    quantisation_tv: float | None = None  # TV(first law from the engine's logits, from transformers' forward)
    pathwise: dict | None = None  # speculative vs plain, token for token (``specmath.audit.engines.pathwise``)
    notes: list[str] = field(default_factory=list)
    #: every request sent: role, seed (call i of a request seeded S is seeded S + i), n, and what the engine reported
    #: of it (its spec-decode counters before and after): any sample can be drawn again alone
    requests: list[dict] = field(default_factory=list)

    @property
    def error_kind(self) -> str | None:
        """REFUSED (the engine rejected the request) or ENGINE ERROR (it crashed), None when it ran."""
        from specmath.audit.engines.protocol import error_kind

        return error_kind(self.error)

    @property
    def speculated(self) -> bool:
        """The engine drafted while it sampled, by its own count (True where it gives none)."""
        return self.drafted is None or self.drafted > 0

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
        """Lossless as far as this run can tell: the engine passes and its control (where one ran) is caught."""
        return (self.error is None and self.skipped is None and self.engine_passed and self.speculated
                and (self.control_caught or not self.has_control)
                and not (self.pathwise and self.pathwise.get("differences")))

    @property
    def verdict(self) -> str:
        if self.skipped:
            return "SKIPPED: " + self.skipped
        if self.error:
            dead = self.error.startswith("EngineDead:")  # the engine said it crashed: ENGINE ERROR, with its message
            return f"{'REFUSED' if self.error_kind == 'REFUSED' else 'ENGINE ERROR' if dead else 'ERROR'}: {self.error}"
        if not self.engine_passed:
            return "FAIL"
        if self.pathwise and self.pathwise.get("differences"):
            return "FAIL (pathwise)"
        if not self.speculated:
            return "INCONCLUSIVE (the engine drafted no token: its speculation never ran)"
        if not self.has_control:
            return "pass (no negative control)"
        return "pass" if self.control_caught else "INCONCLUSIVE (control not caught)"

    def detectable(self, name: str, role: str = "engine") -> float:
        return next((c.detectable_tv for c in self.checks if c.role == role and c.name == name), math.nan)

    def to_json(self) -> dict:
        return {"engine": self.engine, "pair": self.pair, "config": self.config, "n": self.n, "prompt": self.prompt,
                "passed": self.passed, "verdict": self.verdict, "error": self.error, "skipped": self.skipped,
                "seconds": self.seconds, "control_seconds": self.control_seconds, "control": self.control,
                "drafted": self.drafted, "accepted": self.accepted, "quantisation_tv": self.quantisation_tv,
                "pathwise": self.pathwise, "notes": self.notes, "error_kind": self.error_kind,
                "requests": self.requests, "checks": [c.to_json() for c in self.checks]}
