"""The audit report: a table a reader can paste into a README, and the full JSON.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

One row per case: N rounds run, the test with the smallest p-value (joint or position i), its G
statistic, degrees of freedom and p-value, the smallest TV distance of the *round law* the joint test
detects with probability >= the settings' power (0.99) at this N (``detectable TV``), the edge probes (u = 0 and u = max; passed / run), the
exact replay (matches / replayed, with float-rounding disagreements counted apart), and the verdict:
pass, FAIL (a loss: the first reason) or ERROR (the sampler raised: its exception).
The header states the adapter, versions, the family level and the per-test level (Bonferroni).

``failure_text`` says, per failing case, what points at the bug: each rejecting test with its worst
cells (observed against expected counts; the bonus position named as such), each failed edge probe
with its drafts and the uniform placed at which draw, each replay mismatch with its draws; and,
when the sampler wrote into its inputs, where.
"""

from __future__ import annotations

import json
import math

from specmath import tables
from specmath.audit.power import json_of
from specmath.audit.rounds.runner import AuditReport, CaseResult

__all__ = ["table", "markdown_table", "to_json", "write_json", "failure_text", "writes_text"]

COLUMNS = ("case", "gamma", "V", "N", "worst test", "G", "dof", "p-value", "detectable TV", "probes", "replay", "verdict")


def _row(c: CaseResult) -> list[str]:
    worst = min(c.tests, key=lambda t: t.p_value) if c.tests else None
    joint = c.tests[0] if c.tests else None
    replay = c.replay_counts()
    replayed = sum(replay.values())
    replay_text = "-" if not replayed else f"{replay.get('match', 0)}/{replayed}" + (
        f" ({replay['rounding']} rounding)" if replay.get("rounding") else "")
    probes_ok = sum(1 for p in c.probes if not p["problem"])
    if c.errors:
        verdict = "ERROR: " + c.errors[0]
    else:
        verdict = "pass" if c.passed else "FAIL: " + c.reasons[0]
    dtv = joint.detectable_tv if joint is not None else None
    return [
        c.case, str(c.gamma), str(c.vocab_size), str(c.n),
        worst.name if worst else "-",
        "-" if worst is None else ("inf" if math.isinf(worst.statistic) else f"{worst.statistic:.1f}"),
        "-" if worst is None else str(worst.dof),
        "-" if worst is None else f"{worst.p_value:.2g}",
        "-" if dtv is None or math.isinf(dtv) else f"{dtv:.3f}",
        f"{probes_ok}/{len(c.probes)}", replay_text, verdict[:110],
    ]


def _header(report: AuditReport) -> list[str]:
    versions = ", ".join(f"{k} {v}" for k, v in report.versions.items())
    settings = report.settings
    mode = "sequential (looks at N/16..N, stop at the first failure)" if settings.sequential else "fixed N"
    return [
        f"audit of {report.adapter}: {report.description}",
        f"versions: {versions}",
        f"{mode}; N = {settings.n} rounds per case; family level {settings.family_level:g} "
        f"(float rounding slack {report.rounding_slack:.2g}, per test {report.test_level:.3g}, Bonferroni); "
        f"detectable TV at power {settings.power:g}",
    ]


def _footer(report: AuditReport, seconds: bool = True) -> str:
    failed = sum(not c.passed for c in report.cases)
    tail = f"; not run (sequential stop): {', '.join(report.not_run)}" if report.not_run else ""
    took = f", {report.seconds:.1f} s" if seconds else ""
    if report.errored:
        errored = sum(bool(c.errors) for c in report.cases)
        first = next(c for c in report.cases if c.errors)
        return (f"ERROR: the sampler raised in {errored} of {len(report.cases)} cases (first, {first.case}: "
                f"{first.errors[0][:200]}); no verdict on its law{took}{tail}")
    verdict = "PASS" if report.passed else "FAIL"
    writes = f"\n{writes_text(report)}" if report.input_writes else ""
    return f"{verdict}: {len(report.cases) - failed} of {len(report.cases)} cases pass{took}{tail}{writes}"


def writes_text(report: AuditReport) -> str:
    """A plain sentence on the sampler writing into its inputs (empty when it did not)."""
    if not report.input_writes:
        return ""
    return (f"note: the sampler wrote into its inputs in {len(report.input_writes)} case(s), first in "
            f"{report.input_writes[0]}. Each call was handed fresh copies, so the verdict is unaffected; an "
            "engine that reads these arrays again after sampling (for logprobs, or the next step) would see them changed.")


def _cells_text(cells: tuple) -> list[str]:
    return [f"      {x!r}: observed {o}, expected {e:.1f}" + (" (impossible)" if e == 0 else "") for x, o, e in cells]


def _case_failure(c: CaseResult) -> list[str]:
    lines = [f"  {c.case} (gamma = {c.gamma}, V = {c.vocab_size}, N = {c.n}): {c.description}"]
    if c.error:
        lines.append(f"    ERROR: {c.error}")
    for t in c.tests:
        if t.rejects:
            lines.append(f"    {t.name}: G = {t.statistic:.1f}, p = {t.p_value:.3g} < {t.level:.3g}; worst cells "
                         "(observed vs expected count):")
            lines += _cells_text(t.worst_cells)
    lines += [f"    {p['problem']}" for p in c.probes if p["problem"]]
    for f in c.replay_failures[:3]:
        draws = f" (drafts {f['drafts']}, uniforms {f['uniforms']})" if "uniforms" in f else ""
        lines.append(f"    replay mismatch in {f['where']}{draws}: the exact algorithm emits {f['expected']}, the sampler {f['emitted']}")
    return lines


def failure_text(report: AuditReport, most: int = 4) -> str:
    """What points at the bug in the first ``most`` failing cases (see the module docstring)."""
    failing = [c for c in report.cases if not c.passed]
    lines = [line for c in failing[:most] for line in _case_failure(c)]
    if len(failing) > most:
        lines.append(f"  ... and {len(failing) - most} more failing case(s): {', '.join(c.case for c in failing[most:])}")
    return "\n".join(lines)


def table(report: AuditReport, seconds: bool = True) -> str:
    """A fixed-width text table with a header and a one-line verdict (with the run time unless ``seconds=False``,
    e.g. in a committed notebook, whose outputs must not depend on the machine)."""
    lines = _header(report) + ["", tables.text_table(COLUMNS, [_row(c) for c in report.cases])]
    return "\n".join(lines + ["", _footer(report, seconds)])


def markdown_table(report: AuditReport) -> str:
    """The same table in GitHub Markdown (for the README)."""
    lines = [f"*{line}*  " for line in _header(report)] + [""]
    lines.append(tables.markdown_table(COLUMNS, [_row(c) for c in report.cases], escape=True))
    return "\n".join(lines + ["", _footer(report)])


def to_json(report: AuditReport) -> dict:
    """Everything: header fields, and per case its tests, probes, replay counts and failures."""
    return {
        "adapter": report.adapter, "description": report.description, "versions": report.versions,
        "rounds_per_case": report.settings.n, "sequential": report.settings.sequential,
        "family_level": report.settings.family_level, "rounding_slack": report.rounding_slack,
        "test_level": report.test_level, "power": report.settings.power, "passed": report.passed,
        "errored": report.errored, "seconds": report.seconds, "not_run": report.not_run,
        "input_writes": report.input_writes,
        "cases": [
            {
                "case": c.case, "description": c.description, "gamma": c.gamma, "vocab_size": c.vocab_size,
                "n": c.n, "passed": c.passed, "verdict": c.verdict, "reasons": c.reasons, "error": c.error,
                "errors": c.errors, "invalid_output": c.invalid_output, "input_writes": c.input_writes,
                "seconds": c.seconds,
                "tests": [json_of(t) for t in c.tests], "probes": c.probes,
                "replay": c.replay_counts(), "replay_failures": c.replay_failures,
            }
            for c in report.cases
        ],
    }


def write_json(report: AuditReport, path: str) -> None:
    """Write ``to_json(report)`` to ``path`` (inf as the string "inf", so the file is strict JSON)."""

    def clean(x):
        if isinstance(x, float) and math.isinf(x):
            return "inf"
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        if isinstance(x, list):
            return [clean(v) for v in x]
        return x

    with open(path, "w") as f:
        json.dump(clean(to_json(report)), f, indent=2)
