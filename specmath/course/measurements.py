"""The committed measurements as the course shows them: Markdown tables read from ``data/measurements/``.

A measurement is a folder ``data/measurements/<machine>_<date>/`` written by the command that measured
it (``scripts/gpu_check.py``): ``environment.json`` names the machine and the commit, and each
``<run>.json`` is one run, a bench (``BenchResult.to_json``, whose docstring defines every field) or
a histogram check (``HistogramCheck.to_json`` per check). Notebook 07 shows timings only through this
module, so what it prints is what the files say, whatever machine runs the notebook and however busy
it is; nothing here measures anything.

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)),
c = a draft proposal per drafted token / one target pass over 1 token, k = target pass over gamma + 1
tokens / over 1 token. The model's prediction is ``cost_model_speedup`` with the run's measured costs.

A speedup the course states in prose is written with two decimals and an x ("2.09x") or as a range of
two ("2.09x-2.34x"). ``committed_speedups`` collects every one the committed measurements hold: the
speedups in the JSON of ``data/measurements/`` and what the dated pages of ``docs/measurements/`` state
(the CPU notes among them were recorded from printed output, and are the record of those runs); a
series on a page ("2.09x, 2.24x, 2.30x, 2.34x and 2.17x") also stands for the range of its smallest and
largest. ``disagreeing_speedups(text)`` names each speedup in a text that none of them is.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from specmath.tables import markdown_table
from specmath.validation import InvalidFile, check_choice

__all__ = ["MEASUREMENTS", "MEASUREMENT_PAGES", "Measurement", "BenchRow", "CommittedSpeedups", "load_measurement",
           "bench_table", "histogram_table", "model_gap_line", "stated_speedups", "committed_speedups", "disagreeing_speedups"]

#: the committed raw results, one folder per machine and date
MEASUREMENTS = Path(__file__).resolve().parents[2] / "data" / "measurements"
#: the dated measurement pages of the docs (command, commit, machine, every run)
MEASUREMENT_PAGES = Path(__file__).resolve().parents[2] / "docs" / "measurements"


@dataclass(frozen=True)
class BenchRow:
    """What the course shows of one bench run (the JSON fields of the same names)."""

    run: str
    pair: str
    dtype: str
    verify: str  # "token" or "block"
    temperature: float
    gamma: int
    prompts: int
    max_new_tokens: int
    plain_tokens_per_s: float
    speculative_tokens_per_s: float
    alpha: float
    c: float  # cost_ratio_c
    k: float
    predicted_k1: float  # the model with k = 1 and no overheads (Leviathan et al.'s premise)
    predicted: float  # the model with the measured costs, for the workload as run
    measured: float  # speculative tokens/s over plain tokens/s

    @classmethod
    def from_json(cls, run: dict) -> BenchRow:
        return cls(run["run"], run["pair"], run["dtype"], run["verify"], float(run["sampling"]["temperature"]),
                   int(run["gamma"]), int(run["prompts"]), int(run["max_new_tokens"]), run["tokens_per_s"]["plain"],
                   run["tokens_per_s"]["speculative"], run["alpha"], run["cost_ratio_c"], run["k"],
                   run["predicted_speedup_k1"], run["predicted_speedup"], run["measured_speedup_vs_plain"])

    @property
    def gap(self) -> float:
        """measured / predicted - 1: how far the measurement lies from the model with measured costs."""
        return self.measured / self.predicted - 1


@dataclass(frozen=True)
class Measurement:
    """One folder of raw results: the machine it ran on and every run, by run name."""

    name: str
    environment: dict
    runs: dict[str, dict]

    @property
    def machine(self) -> str:
        """One line naming the machine, the software and the commit, from ``environment.json``."""
        env = self.environment
        device = env.get("device") or "CPU"
        parts = [device + (f" (CUDA {env['cuda']}, driver {env['driver']})" if env.get("cuda") else "")]
        parts.append(", ".join(f"{name} {env[name]}" for name in ("torch", "transformers", "python") if env.get(name)))
        if env.get("cpu_threads"):
            parts.append(f"{env['cpu_threads']} CPU threads")
        return "; ".join(parts) + f"; commit {str(env.get('commit', '?'))[:7]}, {env.get('date', '?')}"

    @property
    def bench(self) -> list[BenchRow]:
        """The bench runs that finished, in run-name order."""
        return [BenchRow.from_json(r) for name, r in sorted(self.runs.items()) if name.startswith("bench-") and r.get("ok")]

    def histograms(self, name: str) -> dict[str, dict]:
        """The checks of one histogram run (``hist-<pair>``), by check name."""
        check_choice(name, f"histogram run of {self.name}", sorted(n for n in self.runs if n.startswith("hist-")))
        return self.runs[name]["checks"]


def load_measurement(name: str, root: str | Path = MEASUREMENTS) -> Measurement:
    """Read ``<root>/<name>/``: ``environment.json`` and every other ``*.json`` as a run named by its stem."""
    root = Path(root)
    measured = sorted(p.parent.name for p in root.glob("*/environment.json"))
    folder = root / check_choice(name, f"measurement in {root}", measured)
    runs = {}
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise InvalidFile(f"{path}: not JSON ({error.msg}, line {error.lineno})") from None
        if path.stem != "environment":
            runs[path.stem] = data
    return Measurement(name, json.loads((folder / "environment.json").read_text(encoding="utf-8")), runs)


def bench_table(rows: list[BenchRow]) -> str:
    """A Markdown table, one bench run per row: tokens/s, alpha, costs, the model, the measurement, gap = measured / model - 1."""
    header = ["run", "dtype", "verify", "T", "gamma", "plain tok/s", "speculative tok/s", "alpha", "c", "k", "model, k = 1",
              "model, measured costs", "**measured**", "gap"]
    return markdown_table(header, [
        [r.run.removeprefix("bench-"), r.dtype, r.verify, f"{r.temperature:g}", r.gamma, f"{r.plain_tokens_per_s:.1f}",
         f"{r.speculative_tokens_per_s:.1f}", f"{r.alpha:.2f}", f"{r.c:.3f}", f"{r.k:.2f}", f"{r.predicted_k1:.2f}x",
         f"{r.predicted:.2f}x", f"**{r.measured:.2f}x**", f"{r.gap:+.0%}"] for r in rows])


def model_gap_line(rows: list[BenchRow], within: float = 0.10) -> str:
    """One sentence: on how many runs the measurement lies within ``within`` of the model, and the largest gap."""
    close = [r for r in rows if abs(r.gap) <= within]
    worst = max(rows, key=lambda r: abs(r.gap))
    return (f"measured within {within:.0%} of the model with measured costs: {len(close)} of {len(rows)} runs "
            f"({', '.join(r.run.removeprefix('bench-') for r in close) or 'none'}); largest gap "
            f"{worst.gap:+.0%} ({worst.run.removeprefix('bench-')})")


def histogram_table(checks: dict[str, dict]) -> str:
    """A Markdown table of histogram checks: G, dof, p-value, TV with its 99% bound, and the power."""
    header = ["check", "N", "G", "dof", "p-value", "TV (99% upper bound)", "smallest TV detected (level 1e-6, power 0.99)"]
    return markdown_table(header, [
        [c["what"], c["n"], f"{c['G']:.1f}", c["dof"], f"{c['p_value']:.3g}", f"{c['tv']:.4f} ({c['tv_upper_99']:.4f})",
         f"{c['detectable_tv_at_1e-6_power_0.99']:.4f}"] for c in checks.values()])


#: a speedup as the course writes one, "2.09x", or a range of two, "2.09x-2.34x" (not part of a longer number)
SPEEDUP = re.compile(r"(?<![\d.])(\d+\.\d\d)x(?:-(\d+\.\d\d)x)?(?![\d.])")
#: three or more speedups in a row ("1.97x, 1.99x, 1.93x, 1.97x and 1.74x"): a series of runs
SERIES = re.compile(r"\d+\.\d\dx(?:(?:, and |, | and )\d+\.\d\dx){2,}")


@dataclass(frozen=True)
class CommittedSpeedups:
    """Every speedup the committed measurements state: single values ("2.09") and ranges (("2.09", "2.34"))."""

    values: frozenset
    ranges: frozenset


def stated_speedups(text: str) -> list[str]:
    """The speedups and ranges ``text`` states, as written ("2.73x", "2.09x-2.34x")."""
    return [m.group(0) for m in SPEEDUP.finditer(text)]


def _json_speedups(value, key: str = "") -> list[float]:
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in _json_speedups(v, k)]
    if isinstance(value, list):
        return [x for v in value for x in _json_speedups(v, key)]
    return [float(value)] if "speedup" in key and isinstance(value, (int, float)) and not isinstance(value, bool) else []


def committed_speedups(root: str | Path = MEASUREMENTS, pages: str | Path = MEASUREMENT_PAGES) -> CommittedSpeedups:
    """What ``data/measurements/*/*.json`` (every field named ``*speedup*``) and ``docs/measurements/*.md`` state."""
    values: set[str] = set()
    ranges: set[tuple[str, str]] = set()
    for path in sorted(Path(root).glob("*/*.json")):
        values |= {f"{x:.2f}" for x in _json_speedups(json.loads(path.read_text(encoding="utf-8")))}
    for path in sorted(Path(pages).glob("*.md")) if Path(pages).is_dir() else []:
        text = path.read_text(encoding="utf-8")
        for m in SPEEDUP.finditer(text):
            values.add(m.group(1))
            if m.group(2):
                values.add(m.group(2))
                ranges.add((m.group(1), m.group(2)))
        for m in SERIES.finditer(text):
            series = sorted(float(x) for x in re.findall(r"(\d+\.\d\d)x", m.group(0)))
            ranges.add((f"{series[0]:.2f}", f"{series[-1]:.2f}"))
    return CommittedSpeedups(frozenset(values), frozenset(ranges))


def disagreeing_speedups(text: str, committed: CommittedSpeedups | None = None) -> list[str]:
    """The speedups ``text`` states that no committed measurement holds: a value none states, or a range that
    is neither stated as such nor the smallest and largest of a stated series."""
    committed = committed or committed_speedups()
    bad = []
    for m in SPEEDUP.finditer(text):
        ok = (m.group(1), m.group(2)) in committed.ranges if m.group(2) else m.group(1) in committed.values
        if not ok:
            bad.append(m.group(0))
    return bad
