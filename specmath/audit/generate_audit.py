"""End-to-end audit of an engine's generate path: its first two tokens against the target's own law.

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)).

A lossless engine emits, whatever its draft and however it verifies, tokens whose law is the warped
target law. So after N whole generate calls on one prompt c (``specmath.audit.engines``):

* **first token**: x1 ~ w(p(. | c)), where w is the warp of HF's logits processors, in their order:
  temperature z / T, then top-k (keep logits >= the k-th largest), then top-p (keep the most likely
  tokens while the mass strictly before them is < top_p), then softmax; computed here in float64
  from the target's float32 logits, independently of every engine's own warp code;
* **first two tokens**: (x1, x2) ~ w(p(. | c))(x1) w(p(. | c x1))(x2). The law of x2 is computed for
  each x1 with expected count N w(p)(x1) >= ``MIN_EXPECTED``; cells (x1, x2) of expected count
  below it are pooled into (x1, other), and all rarer x1 into one (other,) cell, so that every cell
  of the G-test has an expected count of at least 5 (its chi-square approximation).

Each is a G-test (``specmath.stats.g_test``; a token of law 0 is a certain failure) at level
1e-6 / 2 (Bonferroni over the engine's two checks, so a correct engine fails with probability at most
1e-6), with its power stated: ``specmath.stats.detectable_tv``, the smallest TV (on the test's cells)
detected with probability 0.99. A negative control (a lossy variant, ``Engine.control``) runs the
same checks in the same audit: the audit *passes* when the engine passes both checks and the control
fails one; a control that passes means the run could not tell a loss here (inconclusive, not a pass).
An engine that raises is an *error*, reported with its exception, never a loss.

Tolerance: the law comes from one target forward over the whole prompt, the engines compute theirs
incrementally with a KV cache; the two float32 paths differ by about 1e-6 in a logit, a TV far below
any detectable TV here (0.01 or more). A top-k or top-p boundary that falls within such rounding of
a token would show up as an impossible token; none does on these pairs (the run says so if it did).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import torch

from specmath.audit.engines import Engine, engine_named
from specmath.audit.generate_pairs import AuditPair, load_audit_pair
from specmath.laws import Law
from specmath.lm.warps import Sampling
from specmath.stats import detectable_tv, g_test
from specmath.validation import InvalidArgument, check_choice, check_integer

__all__ = ["CONFIGS", "Check", "GenerateAudit", "warped_law", "first_token_law", "two_token_law",
           "run_generate_audit", "FAMILY_LEVEL", "POWER"]

#: a correct engine fails the audit with probability at most this
FAMILY_LEVEL = 1e-6
#: the detectable TV is the one found with this probability
POWER = 0.99
#: smallest expected count of a cell of the two-token test
MIN_EXPECTED = 5.0
OTHER = "other"

#: the table's sampling configurations
CONFIGS = {
    "T=1": Sampling(1.0),
    "T=0.7 top-k 20": Sampling(0.7, top_k=20),
    "top-p 0.9": Sampling(1.0, top_p=0.9),
}


def warped_law(logits: np.ndarray, sampling: Sampling) -> np.ndarray:
    """(V,) logits -> (V,) float64 law: temperature, top-k, top-p (HF's processor order), softmax."""
    z = np.asarray(logits, dtype=np.float64) / sampling.temperature
    if sampling.top_k is not None and sampling.top_k < z.size:
        kth = np.sort(z)[-sampling.top_k]
        z = np.where(z >= kth, z, -np.inf)  # ties at the k-th value are kept
    law = np.exp(z - z.max())
    law /= law.sum()
    if sampling.top_p is not None and sampling.top_p < 1:
        order = np.argsort(-law, kind="stable")
        before = np.cumsum(law[order]) - law[order]  # mass strictly more likely than each token
        keep = np.zeros(law.size, dtype=bool)
        keep[order[before < sampling.top_p]] = True
        law = np.where(keep, law, 0.0)
        law /= law.sum()
    return law


@torch.inference_mode()
def _last_logits(target: torch.nn.Module, contexts: list[list[int]]) -> np.ndarray:
    """(len(contexts), V) float32 logits at the last position of each (equal-length) context."""
    rows = []
    for start in range(0, len(contexts), 64):
        batch = torch.tensor(contexts[start : start + 64])
        rows.append(target(batch).logits[:, -1].float())
    return torch.cat(rows).numpy()


def first_token_law(pair: AuditPair, sampling: Sampling) -> np.ndarray:
    """w(p(. | prompt)) as a float64 vector."""
    return warped_law(_last_logits(pair.target, [pair.prompt])[0], sampling)


def two_token_law(pair: AuditPair, sampling: Sampling, n: int) -> tuple[dict, set]:
    """({cell: probability}, frequent x1): cells (x1, x2), (x1, OTHER), (OTHER,) as described above."""
    p1 = first_token_law(pair, sampling)
    frequent = [int(x) for x in np.flatnonzero(n * p1 >= MIN_EXPECTED)]
    cells: dict = {}
    logits = _last_logits(pair.target, [pair.prompt + [x1] for x1 in frequent]) if frequent else []
    for x1, row in zip(frequent, logits, strict=True):
        joint = p1[x1] * warped_law(row, sampling)  # P(x1, x2)
        big = n * joint >= MIN_EXPECTED
        for x2 in np.flatnonzero(big):
            cells[(x1, int(x2))] = float(joint[x2])
        rest = float(joint[~big].sum())
        if rest > 0:
            cells[(x1, OTHER)] = rest
    rare = float(sum(p1[x] for x in range(p1.size) if x not in set(frequent)))
    if rare > 0:
        cells[(OTHER,)] = rare
    return cells, set(frequent)


def _two_token_cell(sample: tuple[int, int], frequent: set, cells: dict):
    x1, x2 = sample
    if x1 not in frequent:
        return (OTHER,)
    return (x1, x2) if (x1, x2) in cells else (x1, OTHER)


@dataclass
class Check:
    """One G-test of one sampler (engine or control) against one exact law."""

    name: str
    role: str  # "engine" or "control"
    statistic: float
    dof: int
    p_value: float
    level: float
    detectable_tv: float
    impossible: list

    @property
    def passed(self) -> bool:
        return self.p_value >= self.level

    def to_json(self) -> dict:
        def finite(x: float):
            return x if math.isfinite(x) else str(x)  # strict JSON has no inf

        return {"name": self.name, "role": self.role, "statistic": finite(self.statistic), "dof": self.dof,
                "p_value": self.p_value, "level": self.level, "detectable_tv": finite(self.detectable_tv),
                "passed": self.passed, "impossible": [list(x) if isinstance(x, tuple) else x for x in self.impossible]}


@dataclass
class GenerateAudit:
    """An engine x pair x sampling audit: its checks, its control's, timings, or why it did not run."""

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

    @property
    def engine_passed(self) -> bool:
        return all(c.passed for c in self.checks if c.role == "engine")

    @property
    def control_caught(self) -> bool:
        return any(not c.passed for c in self.checks if c.role == "control")

    @property
    def passed(self) -> bool:
        """Lossless as far as this run can tell: the engine passes and the control is caught."""
        return self.error is None and self.skipped is None and self.engine_passed and self.control_caught

    @property
    def verdict(self) -> str:
        if self.skipped:
            return "SKIPPED: " + self.skipped
        if self.error:
            return "ERROR: " + self.error
        if not self.engine_passed:
            return "FAIL"
        return "pass" if self.control_caught else "INCONCLUSIVE (control not caught)"

    def detectable(self, name: str) -> float:
        return next((c.detectable_tv for c in self.checks if c.role == "engine" and c.name == name), math.nan)

    def to_json(self) -> dict:
        return {"engine": self.engine, "pair": self.pair, "config": self.config, "n": self.n, "prompt": self.prompt,
                "passed": self.passed, "verdict": self.verdict, "error": self.error, "skipped": self.skipped,
                "seconds": self.seconds, "control_seconds": self.control_seconds,
                "checks": [c.to_json() for c in self.checks]}


def _checks(samples: list[tuple[int, int]], role: str, p1: np.ndarray, cells: dict, frequent: set, level: float) -> list[Check]:
    n = len(samples)
    first = Law.from_weights({x: float(p1[x]) for x in np.flatnonzero(p1 > 0).tolist()})
    pair_law = Law.from_weights(cells)
    out = []
    for name, law, counts in (
        ("first token", first, Counter(s[0] for s in samples)),
        ("first two tokens", pair_law, Counter(_two_token_cell(s, frequent, cells) for s in samples)),
    ):
        g = g_test(counts, law)
        out.append(Check(name, role, g.statistic, g.dof, g.p_value, level, detectable_tv(law, n, level, POWER),
                         list(g.impossible[:3])))
    return out


def _run(fn, pair: AuditPair, sampling: Sampling, n: int, seed: int) -> tuple[list | None, str | None, float]:
    start = time.perf_counter()
    try:
        samples = fn(pair, sampling, n, seed)
    except Exception as exc:  # the engine's own failure: reported as an error, not as a loss
        return None, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:200], time.perf_counter() - start
    return samples, None, time.perf_counter() - start


def run_generate_audit(engine: Engine | str, pair: str, config: str | Sampling = "T=1", n: int = 2000,
                       seed: int = 0, control: bool = True) -> GenerateAudit:
    """N generate calls of ``engine`` on ``pair``'s prompt (and of its control), tested as described above."""
    engine = engine_named(engine) if isinstance(engine, str) else engine
    if isinstance(config, Sampling):
        sampling = config
    else:
        sampling = CONFIGS[check_choice(config, "sampling configuration", CONFIGS, also="or a Sampling")]
    if sampling.greedy:
        raise InvalidArgument("the engine audit compares sampled laws: temperature must be > 0")
    n = check_integer(n, "n (generate calls)", min_value=1)
    label = config if isinstance(config, str) else _label(sampling)
    audit = GenerateAudit(engine.name, pair, label, n)
    reason = engine.unavailable(pair)
    if reason:
        audit.skipped = reason
        return audit
    loaded = load_audit_pair(pair)
    if engine.lookup:
        loaded = dataclasses.replace(loaded, prompt=loaded.lookup_prompt)
    audit.prompt = list(loaded.prompt)
    p1 = first_token_law(loaded, sampling)
    cells, frequent = two_token_law(loaded, sampling, n)
    level = FAMILY_LEVEL / 2
    samples, audit.error, audit.seconds = _run(engine.sample, loaded, sampling, n, seed)
    if samples is not None:
        audit.checks += _checks(samples, "engine", p1, cells, frequent, level)
    if control and samples is not None:
        controls, error, audit.control_seconds = _run(engine.control, loaded, sampling, n, seed + 10**6)
        if error:
            audit.error = f"the control raised {error}"
        else:
            audit.checks += _checks(controls, "control", p1, cells, frequent, level)
    return audit


def _label(sampling: Sampling) -> str:
    parts = [f"T={sampling.temperature:g}"]
    if sampling.top_k is not None:
        parts.append(f"top-k {sampling.top_k}")
    if sampling.top_p is not None:
        parts.append(f"top-p {sampling.top_p:g}")
    return " ".join(parts)
