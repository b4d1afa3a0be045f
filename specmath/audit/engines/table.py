"""The options table and a single audit, as text: for the terminal, the how-to page and the measurements page.

Notation: N = generate calls; "detectable TV" = the smallest TV the test detects with probability 0.99 at its
level (``specmath.audit.engines.checks``); "measured TV" = 1/2 sum over cells |frequency - law| (sampling
noise included).

``options_table`` turns the records of ``specmath.audit.engines.table_runs.run_options_table`` (as committed under
``data/measurements/``) into one Markdown table: engine x option x {engine, control}, with N, the power,
the verdict and the seconds. ``describe_audit`` prints one audit, check by check.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from specmath.audit.engines.checks import ENGINE_CHECKS, VERDICTS, in_verdict_words
from specmath.tables import markdown_table

__all__ = ["options_table", "engine_summary", "describe_audit", "fmt", "verdict_of"]


def fmt(x, spec: str = ".3f") -> str:
    """A number for a table: '-' for None or NaN, 'inf' for infinity (strings pass through)."""
    if isinstance(x, str):
        return x
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return "inf" if math.isinf(x) else format(x, spec)


def verdict_of(record: dict) -> str:
    """The verdict word of a record (``VERDICTS``; an earlier record's word read as the set's), "not run" for an
    engine that could not run."""
    verdict = record["verdict"]
    if verdict is None:
        return "not run"
    verdict = in_verdict_words(verdict)
    return next((w for w in VERDICTS if verdict.startswith(w)), verdict.split(":")[0].split(" (")[0])


def _check(record: dict, role: str, name: str) -> dict | None:
    return next((c for c in record["checks"] if c["role"] == role and c["name"] == name), None)


def _p(check: dict | None) -> str:
    return "-" if check is None else f"{check['p_value']:.2g}"


def options_table(records: Iterable[dict]) -> str:
    """A Markdown table, one line per engine x option x role."""
    header = ["engine", "option", "role", "N", "p first / two", "detectable TV first / two",
              "measured TV two", "seconds", "verdict"]
    rows = []
    for r in records:
        for role in ("engine", "control"):
            first, two = _check(r, role, "first token"), _check(r, role, "first two tokens")
            if role == "control" and first is None:
                continue
            seconds = r["seconds"] if role == "engine" else r["control_seconds"]
            if role == "engine":
                verdict = verdict_of(r)
            else:
                verdict = ("caught" if not (first["passed"] and two["passed"]) else "not caught") if first else "-"
            detectable = f"{fmt(first and first['detectable_tv'])} / {fmt(two and two['detectable_tv'])}"
            rows.append([
                r["engine"] if role == "engine" else "", r["row"] if role == "engine" else "",
                role if role == "engine" else f"control: {r['control']}", str(r["n"]), f"{_p(first)} / {_p(two)}",
                detectable, fmt(two and two.get("measured_tv")), fmt(seconds, ".0f"), verdict])
    return markdown_table(header, rows)


def engine_summary(records: Iterable[dict]) -> str:
    """A Markdown table, one line per engine: N, samples per second, drafts accepted, quantisation, pathwise."""
    by_engine: dict[str, list[dict]] = {}
    for r in records:
        by_engine.setdefault(r["engine"], []).append(r)
    header = ["engine", "N per row", "samples per s: engine / control", "drafted tokens kept", "quantisation TV (first token)",
              "pathwise (T=1, seeds x tokens)", "verdicts"]
    lines = []
    for name, rows in by_engine.items():
        calls = sum(r["n"] for r in rows)
        drafted = sum(r["drafted"] or 0 for r in rows)
        accepted = sum(r["accepted"] or 0 for r in rows)
        tvs = [r["quantisation_tv"] for r in rows if r["quantisation_tv"] is not None]
        pathwise = next((r["pathwise"] for r in rows if r["pathwise"]), None)
        if pathwise is None:
            paths = "-"
        else:
            promise = "promised" if pathwise["promised"] else "not promised"
            paths = (f"{pathwise['observed_differences']} of {pathwise['seeds']} seeds x {pathwise['max_new_tokens']} "
                     f"tokens differ ({promise})")
        verdicts: dict[str, int] = {}
        for r in rows:
            key = verdict_of(r)
            verdicts[key] = verdicts.get(key, 0) + 1
        lines.append([
            name, _n_range([r["n"] for r in rows]),
            f"{_rate(calls, sum(r['seconds'] for r in rows))} / {_rate(calls, sum(r['control_seconds'] for r in rows))}",
            f"{accepted} of {drafted}" if drafted else "-",
            f"{min(tvs):.4f} to {max(tvs):.4f}" if tvs else "-", paths,
            ", ".join(f"{v} {k}" for k, v in verdicts.items())])
    return markdown_table(header, lines)


def _rate(calls: int, seconds: float) -> str:
    """Generate calls (samples) per second of wall-clock time, "-" where none ran."""
    return f"{calls / seconds:.1f}" if seconds > 0 else "-"


def _n_range(ns: list[int]) -> str:
    """N of an engine's rows: one number, or "least to most" where each row chose its own."""
    return str(ns[0]) if min(ns) == max(ns) else f"{min(ns)} to {max(ns)}"


def describe_audit(audit) -> str:
    """One audit (``GenerateAudit``), check by check, as the terminal shows it."""
    out = [f"audit-generate {audit.engine} on {audit.pair}, {audit.config}: N = {audit.n} generate calls per sampler, "
           f"prompt ids {audit.prompt}"]
    if audit.checks:
        first = audit.checks[0]
        out.append(f"engine {audit.seconds:.1f} s, control {audit.control_seconds:.1f} s; each test at level "
                   f"{first.level:.2g} (family {first.level * ENGINE_CHECKS:g}), detectable TV at power {first.power:g}")
    if audit.control:
        out.append(f"control: {audit.control}")
    for c in audit.checks:
        extra = f"  impossible {list(c.impossible)}" if c.impossible else ""
        out.append(f"  {c.role:8s} {c.name:17s} G = {fmt(c.statistic, '.1f'):>8s}  dof {c.dof:3d}  p = {c.p_value:.3g}  "
                   f"detectable TV {fmt(c.detectable_tv)}  measured TV {fmt(c.measured_tv)}  "
                   f"{'pass' if c.passed else 'REJECTED'}{extra}")
    if audit.drafted is not None:
        out.append(f"drafted {audit.drafted} tokens, accepted {audit.accepted}")
    if audit.quantisation_tv is not None:
        out.append(f"quantisation: TV(first token's law from the engine's logits, from transformers' dequantised "
                   f"forward) = {audit.quantisation_tv:.4f}")
    if audit.pathwise:
        pw = audit.pathwise
        promise = "promised" if pw["promised"] else "not promised (reported, not a failure)"
        out.append(f"pathwise ({promise}): speculative vs plain over {pw['seeds']} seeds x {pw['max_new_tokens']} tokens: "
                   f"{pw['observed_differences']} seeds differ"
                   + (f", first: seed {pw['first']['seed']} at token {pw['first']['position']} "
                      f"({pw['first']['speculative']} vs {pw['first']['plain']}); seeds {pw['differing_seeds']}"
                      if pw["first"] else ""))
    out.append(audit.verdict)
    return "\n".join(out)
