"""Measurement pages and the README's headline table, written from the committed raw results.

    python scripts/measurement_tables.py           # write every page and the README's headline table
    python scripts/measurement_tables.py --check   # write nothing; exit 1 naming each file that differs

Raw results live in ``data/measurements/<name>/`` exactly as the command that measured them wrote them
(``scripts/gpu_check.py``: ``environment.json`` naming the machine and the commit, one ``<run>.json``
per run). The page ``docs/measurements/<name>.md`` is its template ``<name>.md.tmpl`` (Markdown with
``$placeholders``, ``string.Template``) filled from that folder: the tables and every number in the
prose come from the JSON through the functions below, so a page cannot say what its files do not.
``make docs`` runs this script first; ``tests/docs/test_measurement_pages.py`` fails when a committed
page or the README's table differs from what the script writes.

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)),
t_1 = one cached target pass over 1 token, k(gamma) = (target pass over gamma + 1 tokens) / t_1,
c = a draft proposal per drafted token / t_1 (``specmath.lm.bench_result.BenchResult`` documents every
JSON field).
"""

from __future__ import annotations

import argparse
import json
import math
import string
import sys
from pathlib import Path

from specmath.course.measurements import Measurement, load_measurement
from specmath.tables import markdown_table as table

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "measurements"
PAGES = ROOT / "docs" / "measurements"
README = ROOT / "README.md"
#: the measurement whose bench runs make the README's headline table
HEADLINE = "gpu_h200_2026-11-30"
HEADLINE_BEGIN = "<!-- headline speed table: written by scripts/measurement_tables.py -->"
HEADLINE_END = "<!-- end of headline speed table -->"
GAMMAS = [str(g) for g in range(1, 9)]


def bench_runs(m: Measurement) -> list[dict]:
    """The bench runs, by pair, float32 before other dtypes, token-wise before block, then by name."""
    runs = [r for r in m.runs.values() if r["run"].startswith("bench-") and r["ok"]]
    return sorted(runs, key=lambda r: (r["pair"].split(":")[0], r["dtype"] != "float32", r["verify"] != "token", r["run"]))


def hist_runs(m: Measurement) -> list[dict]:
    return [r for r in m.runs.values() if r["run"].startswith("hist-") and r["ok"]]


def same_plain_work(runs: list[dict]) -> list[list[dict]]:
    """Bench runs grouped by the plain decoding they did: same target, dtype, sampling and plain tokens, hence the same
    work (same prompts and seed), whatever the draft."""
    groups: dict[tuple, list[dict]] = {}
    for r in runs:
        groups.setdefault((r["pair"].split(":")[0], r["dtype"], json.dumps(r["sampling"]), r["new_tokens"]["plain"]), []).append(r)
    return list(groups.values())


def failed_runs(m: Measurement) -> list[dict]:
    return [r for r in m.runs.values() if not r["ok"]]


def load(name: str) -> Measurement:
    """The folder read as the course reads it (``specmath.course.measurements``)."""
    return load_measurement(name, DATA)


# -- formatting: one place for the precision of each kind of number ---------------------------------------

def ratio(x: float) -> str:
    return f"{x:.2f}x"


def rate(x: float) -> str:
    return f"{x:.1f}"


def ms(seconds: float) -> str:
    return f"{1000 * seconds:.1f}"


def two(x: float) -> str:
    return f"{x:.2f}"


def three(x: float) -> str:
    return f"{x:.3f}"


def p_value(x: float) -> str:
    return "0" if x == 0 else f"{x:.3g}"


def statistic(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.1f}"


def temperature(run: dict) -> str:
    t = run["sampling"]["temperature"]
    return "0 (greedy)" if t == 0 else f"{t:g}"


# -- tables -------------------------------------------------------------------------------------------------

def bench_table(m: Measurement) -> str:
    """Every bench run: the measured speedups first, then what ran and the three decoders' rates."""
    header = ["run", "**measured**", "vs HF", "pair", "dtype", "verify", "T", "gamma", "plain tok/s",
              "speculative tok/s", "HF tok/s", "seconds"]
    rows = []
    for r in bench_runs(m):
        tps = r["tokens_per_s"]
        rows.append([r["run"], f"**{ratio(r['measured_speedup_vs_plain'])}**", ratio(r["speedup_vs_hf_assisted"]),
                     f"`{r['pair']}`", r["dtype"], r["verify"], temperature(r), str(r["gamma"]),
                     rate(tps["plain"]), rate(tps["speculative"]), rate(tps["hf_assisted"]), f"{r['seconds']:.0f}"])
    return table(header, rows)


def model_table(m: Measurement) -> str:
    """Every bench run beside the model: the measurement, the two predictions, acceptance and measured costs."""
    header = ["run", "**measured**", "predicted, measured costs", "predicted, k = 1", "alpha", "tokens/round",
              "t_1 (ms)", "c", "k", "o_round", "o_plain"]
    rows = []
    for r in bench_runs(m):
        rows.append([r["run"], f"**{ratio(r['measured_speedup_vs_plain'])}**", ratio(r["predicted_speedup"]),
                     ratio(r["predicted_speedup_k1"]), two(r["alpha"]), two(r["mean_tokens_per_round"]),
                     ms(r["costs"]["target_1_token_s"]), three(r["cost_ratio_c"]), two(r["k"]), three(r["o_round"]),
                     three(r["o_plain"])])
    return table(header, rows)


def k_table(m: Measurement) -> str:
    """k(gamma) for gamma 1..8 from each run's calibration (the target pass timed right after a proposal)."""
    header = ["run", "t_1 (ms)"] + [f"k({g})" for g in GAMMAS] + ["c(1)", "c(8)"]
    rows = []
    for r in bench_runs(m):
        cal = r["gamma_calibration"]
        rows.append([r["run"], ms(cal["target_1_token_s"])] + [two(cal["k"][g]) for g in GAMMAS]
                    + [three(cal["c"]["1"]), three(cal["c"]["8"])])
    return table(header, rows)


def hist_table(m: Measurement) -> str:
    """Every histogram check: G-test against the exact law, its power, and the negative control."""
    header = ["run", "check", "p-value", "G", "dof", "N", "TV (99% upper bound)",
              "smallest TV detected (level 1e-6, power 0.99)"]
    rows = []
    for r in hist_runs(m):
        for check in r["checks"].values():
            rows.append([r["run"], check["what"], p_value(check["p_value"]), statistic(check["G"]), str(check["dof"]),
                         str(check["n"]), f"{check['tv']:.4f} ({check['tv_upper_99']:.3f})",
                         three(check["detectable_tv_at_1e-6_power_0.99"])])
    return table(header, rows)


def machine_line(m: Measurement) -> str:
    e = m.environment
    return (f"one {e['device']} (driver {e['driver']}, CUDA {e['cuda']}), torch {e['torch']}, transformers "
            f"{e['transformers']}, Python {e['python']}, {e['cpu_threads']} CPU threads; commit "
            f"`{e['commit'][:7]}`, {e['date']}")


def headline_table(m: Measurement) -> str:
    """The README's table: tokens/s of each bench run and its speedups, with the machine line under it."""
    header = ["pair (draft)", "verify", "T", "gamma", "plain tok/s", "speculative tok/s", "HF tok/s",
              "**speedup over plain**", "over HF"]
    rows = []
    for r in bench_runs(m):
        tps = r["tokens_per_s"]
        pair = f"`{r['pair']}`" + (f" {r['dtype']}" if r["dtype"] != "float32" else "")
        rows.append([pair, r["verify"], temperature(r), str(r["gamma"]), rate(tps["plain"]),
                     rate(tps["speculative"]), rate(tps["hf_assisted"]),
                     f"**{ratio(r['measured_speedup_vs_plain'])}**", ratio(r["speedup_vs_hf_assisted"])])
    return table(header, rows)


# -- the numbers the prose names ---------------------------------------------------------------------------

def span(values: list[float], fmt) -> str:
    """'a-b' for the smallest and largest value, or one value when they print alike."""
    low, high = fmt(min(values)), fmt(max(values))
    return low if low == high else f"{low}-{high}"


def fields(m: Measurement) -> dict[str, str]:
    """Every placeholder a template may use: the tables, the machine, and named numbers of the runs."""
    env = m.environment
    out = {
        "name": m.name, "machine": machine_line(m), "device": env["device"], "commit": env["commit"],
        "commit_short": env["commit"][:7], "date": env["date"], "torch": env["torch"],
        "transformers": env["transformers"],
        "bench_table": bench_table(m), "model_table": model_table(m), "k_table": k_table(m), "hist_table": hist_table(m),
        "failed_runs": ", ".join(r["run"] for r in failed_runs(m)) or "none",
    }
    out.update(speed_fields(m))
    out.update(gpu_speed_fields(m))
    for r in hist_runs(m):
        key = r["run"].replace("-", "_")
        for name, check in r["checks"].items():
            out[f"{key}_{name}_p"] = p_value(check["p_value"])
            out[f"{key}_{name}_detectable"] = three(check["detectable_tv_at_1e-6_power_0.99"])
        out[f"{key}_n"] = str(r["n"])
    bench = bench_runs(m)
    if not bench:
        return out
    t1 = [r["costs"]["target_1_token_s"] for r in bench]
    out["bench_prompts"] = span([r["prompts"] for r in bench], str)
    out["bench_max_new_tokens"] = span([r["max_new_tokens"] for r in bench], str)
    out["t1_span_ms"] = span(t1, ms)
    out["t1_calibration_span_ms"] = span([r["gamma_calibration"]["target_1_token_s"] for r in bench], ms)
    out["k_calibration_span"] = span([v for r in bench for v in r["gamma_calibration"]["k"].values()], two)
    out["k_run_span"] = span([r["k"] for r in bench], two)
    # plain decoding per token, against the cost measurement's plain step t_1 (1 + o_plain)
    slowdown = [1 / r["tokens_per_s"]["plain"] / (r["costs"]["target_1_token_s"] * (1 + r["o_plain"])) for r in bench]
    out["plain_over_model_span"] = span(slowdown, ratio)
    gaps = {r["run"]: r["measured_speedup_vs_plain"] / r["predicted_speedup"] - 1 for r in bench}
    out["within_10_percent"] = ", ".join(f"{run} ({gap:+.0%})" for run, gap in gaps.items() if abs(gap) <= 0.10)
    out["beyond_10_percent"] = ", ".join(f"{run} ({gap:+.0%})" for run, gap in gaps.items() if abs(gap) > 0.10)
    for r in bench:
        key = r["run"].replace("-", "_")
        tps = r["tokens_per_s"]
        out[f"{key}_measured"] = ratio(r["measured_speedup_vs_plain"])
        out[f"{key}_predicted"] = ratio(r["predicted_speedup"])
        out[f"{key}_predicted_k1"] = ratio(r["predicted_speedup_k1"])
        out[f"{key}_vs_hf"] = ratio(r["speedup_vs_hf_assisted"])
        out[f"{key}_plain"] = rate(tps["plain"])
        out[f"{key}_plain_ms"] = f"{1000 / tps['plain']:.1f}"
        out[f"{key}_t1_ms"] = ms(r["costs"]["target_1_token_s"])
        out[f"{key}_alpha"] = two(r["alpha"])
        out[f"{key}_c"] = three(r["cost_ratio_c"])
        out[f"{key}_gamma"] = str(r["gamma"])
        out[f"{key}_new_tokens"] = str(r["new_tokens"]["plain"])
    repeated = [g for g in same_plain_work(bench) if len(g) > 1]
    out["same_plain_work"] = "; ".join(
        f"{len(g)} runs of `{g[0]['pair'].split(':')[0]}` {g[0]['dtype']} at T = {g[0]['sampling']['temperature']:g}, "
        f"{g[0]['new_tokens']['plain']} tokens each: " + ", ".join(rate(r["tokens_per_s"]["plain"]) for r in g) + " tok/s"
        for g in repeated) or "none"
    return out


def against(value: float, goal: float, at_least: bool = True) -> str:
    """'met' or 'missed' for a measured ``value`` against ``goal`` (at least it, or at most it); a missed lower
    bound says by how much of the goal."""
    if (value >= goal) if at_least else (value <= goal):
        return "met"
    return f"missed by {100 * (1 - value / goal):.0f}%" if at_least else "missed"


def speed_fields(m: Measurement) -> dict[str, str]:
    """The placeholders of an eager-against-compiled folder (``benchmarks/decode_speed.py``'s ``speed-*`` runs and
    ``specmath bench --json`` runs saved as ``cli-bench-*``): a table per kind of run and named numbers of each."""
    out: dict[str, str] = {}
    # benchmarks/decode_speed.py's records (eager and compiled in one interleaved run), not gpu_check.py's bench runs
    speed = {r["run"]: r for r in m.runs.values() if r["run"].startswith("speed-") and r["ok"] and "compiled_over_eager_plain" in r}
    cli = {r["run"]: r for r in m.runs.values() if r["run"].startswith("cli-bench-") and r["ok"]}
    for name, r in speed.items():
        key = name.replace("-", "_")
        rows = []
        for i, rep in enumerate(r["repeats"], 1):
            tps, t1 = rep["tokens_per_s"], rep["one_token_pass_s"]
            spec = "speculative_over_plain_compiled" in rep  # a --plain-only run has no speculative columns
            rows.append([str(i), span(rep["load_average"], lambda x: f"{x:.1f}"), rate(tps["plain_eager"]),
                         rate(tps["plain_compiled"]), rate(tps["speculative_eager"]) if spec else "-",
                         rate(tps["speculative_compiled"]) if spec else "-",
                         f"{ms(t1['eager'])} / {ms(t1['compiled'])} ms", two(rep["compiled_over_eager_plain"]),
                         two(rep["speculative_over_plain_compiled"]) if spec else "-"])
        out[f"{key}_table"] = table(["repeat", "load avg", "plain eager", "plain compiled", "spec. eager", "spec. compiled",
                                     "1-token pass eager / compiled", "compiled / eager plain", "spec. / compiled plain"], rows)
        for ratio_name in ("compiled_over_eager_plain", "speculative_over_plain_compiled", "speculative_over_plain_eager",
                           "compiled_over_eager_speculative"):
            if ratio_name not in r:
                continue
            spread = r[ratio_name]
            out[f"{key}_{ratio_name}"] = two(spread["median"])
            out[f"{key}_{ratio_name}_range"] = f"{two(spread['min'])}-{two(spread['max'])}"
        out[f"{key}_compile_s"] = f"{r['compile_s']:.0f}"
        out[f"{key}_command"] = r["command"]
        out[f"{key}_loads"] = span([x for rep in r["repeats"] for x in rep["load_average"]], lambda x: f"{x:.0f}")
        out[f"{key}_t1_eager_ms"] = span([rep["one_token_pass_s"]["eager"] for rep in r["repeats"]], ms)
        out[f"{key}_bandwidth"] = span([rep["bandwidth_GB_per_s"] for rep in r["repeats"]], lambda x: f"{x:.1f}")
        roof = r["roofline"]
        out[f"{key}_weight_mb"] = f"{roof['plain_eager']['weight_bytes'] / 1e6:.1f}"
        out[f"{key}_floor"] = rate(roof["plain_eager"]["floor_tokens_per_s"])
        out[f"{key}_fraction_eager"] = f"{100 * roof['plain_eager']['fraction']:.0f}%"
        out[f"{key}_fraction_compiled"] = f"{100 * roof['plain_compiled']['fraction']:.0f}%"
        out[f"{key}_plain_goal"] = against(r["compiled_over_eager_plain"]["median"], 2.5)
        if "speculative_over_plain_compiled" in r:
            out[f"{key}_spec_goal"] = against(r["speculative_over_plain_compiled"]["median"], 2.0)
        out[f"{key}_fraction_goal"] = against(roof["plain_compiled"]["fraction"], 0.5)
        out[f"{key}_t1_compiled_ms"] = span([rep["one_token_pass_s"]["compiled"] for rep in r["repeats"]], ms)
        out[f"{key}_floor_ms"] = ms(roof["plain_eager"]["weight_bytes"] / (roof["plain_eager"]["bandwidth_GB_per_s"] * 1e9))
        if "pass_fraction" in r:  # runs from before the pass fraction and the linear sweep were recorded lack them
            out[f"{key}_pass_fraction_eager"] = f"{100 * r['pass_fraction']['eager']:.0f}%"
            out[f"{key}_pass_fraction_compiled"] = f"{100 * r['pass_fraction']['compiled']:.0f}%"
            sweep = r["linear_sweep"]
            out[f"{key}_linear_rate"] = span([rep["linear_GB_per_s"] for rep in r["repeats"]], lambda x: f"{x:.1f}")
            out[f"{key}_linear_over_copy"] = f"{100 * sweep['over_copy_loop']:.0f}%"
            out[f"{key}_linear_mb"] = f"{sweep['weight_bytes'] / 1e6:.1f}"
        if "decode_roofline" in r:  # plain decoding less its prompts' prefill, against the same floor
            decode = r["decode_roofline"]
            for mode in ("eager", "compiled"):
                out[f"{key}_decode_rate_{mode}"] = rate(decode[mode]["plain_tokens_per_s"])
                out[f"{key}_decode_fraction_{mode}"] = f"{100 * decode[mode]['fraction']:.0f}%"
                out[f"{key}_prefill_{mode}_ms"] = span([rep["prefill_s"][mode] for rep in r["repeats"]], ms)
            out[f"{key}_decode_fraction_goal"] = against(decode["compiled"]["fraction"], 0.5)
        if "streamed_sweep" in r:  # the products as a compiled one-token pass computes them (streamed_products)
            out[f"{key}_streamed_rate"] = span([rep["streamed_GB_per_s"] for rep in r["repeats"]], lambda x: f"{x:.1f}")
            out[f"{key}_streamed_over_copy"] = f"{100 * r['streamed_sweep']['over_copy_loop']:.0f}%"
            out[f"{key}_streamed_ms"] = ms(r["linear_sweep"]["weight_bytes"] / (r["streamed_sweep"]["GB_per_s"] * 1e9))
    for name, r in cli.items():
        key = name.replace("-", "_")
        rows = [[str(i), span(rep["load_average"], lambda x: f"{x:.1f}"), two(rep["measured_speedup"]),
                 two(rep["predicted_speedup"]), f"{rep['bandwidth_GB_per_s']:.1f} GB/s"]
                for i, rep in enumerate(r["repeats"], 1)]
        out[f"{key}_table"] = table(["repeat", "load avg", "measured speedup", "predicted (costs of the same repeat)",
                                     "bandwidth"], rows)
        measured, predicted = r["measured_speedup"], r["predicted_speedup_repeats"]
        out[f"{key}_measured"] = two(measured["median"])
        out[f"{key}_measured_range"] = f"{two(measured['min'])}-{two(measured['max'])}"
        out[f"{key}_measured_relative_range"] = f"{100 * measured['relative_range']:.0f}%"
        out[f"{key}_predicted"] = two(predicted["median"])
        out[f"{key}_predicted_range"] = f"{two(predicted['min'])}-{two(predicted['max'])}"
        out[f"{key}_model_error"] = f"{100 * r['model_error']:+.0f}%"
        out[f"{key}_model_goal"] = against(abs(r["model_error"]), 0.15, at_least=False)
        out[f"{key}_loads"] = span([x for rep in r["repeats"] for x in rep["load_average"]], lambda x: f"{x:.0f}")
        out[f"{key}_plain"] = rate(r["tokens_per_s"]["plain"])
        out[f"{key}_speculative"] = rate(r["tokens_per_s"]["speculative"])
        out[f"{key}_t1_ms"] = ms(r["costs"]["target_1_token_s"])
        out[f"{key}_warmup_s"] = f"{r['warmup_s']:.0f}"
        out[f"{key}_c"] = three(r["cost_ratio_c"])
        out[f"{key}_o_round"] = two(r["o_round"])
        out[f"{key}_o_plain"] = two(r["o_plain"])
        out[f"{key}_tokens_per_round"] = two(r["mean_tokens_per_round"])
        out[f"{key}_k"] = two(r["k"])
        out[f"{key}_fraction"] = f"{100 * r['roofline']['fraction']:.0f}%"
    return out


#: the GPU measurement whose plain decoding the compiled passes' goal (10 times) is measured against, and its runs:
#: same pair and dtype, plain decoding at batch 1 on the pair's own prompts
GPU_BASELINE = "gpu_h200_2026-11-30"
GPU_BASELINE_RUNS = {("smollm2", "bfloat16"): "bench-smollm2-lookup-T0", ("bundled", "float32"): "bench-bundled-token",
                     ("bundled", "bfloat16"): "bench-bundled-bf16-block"}


def gpu_speed_fields(m: Measurement) -> dict[str, str]:
    """The placeholders of ``scripts/gpu_check.py --speed``'s folder: one bench run per pair, dtype and eager or compiled
    passes (``speed-<pair>[-bf16]-<eager|compiled>``), as a table, and each compiled run against the eager run of the
    same folder and against the plain decoding of ``GPU_BASELINE``."""
    runs = sorted((r for r in m.runs.values() if r["run"].startswith("speed-") and r.get("ok") and "measured_speedup_vs_plain" in r),
                  key=lambda r: (r["pair"].split(":")[0], r["dtype"] != "float32", r["compile"]))
    if not runs:
        return {}
    baseline = load(GPU_BASELINE)
    out: dict[str, str] = {}
    rows = []
    for r in runs:
        tps, spread, roof = r["tokens_per_s"], r["measured_speedup"], r["roofline"]
        rows.append([f"`{r['pair']}`", r["dtype"], "compiled (CUDA graphs)" if r["compile"] else "eager",
                     ms(r["costs"]["target_1_token_s"]), rate(tps["plain"]), rate(tps["speculative"]),
                     f"**{ratio(spread['median'])}** ({two(spread['min'])}-{two(spread['max'])})", ratio(r["predicted_speedup"]),
                     two(r["alpha"]), f"{r['warmup_s']:.0f}", f"{roof['bandwidth_GB_per_s']:.0f}",
                     f"{roof['floor_tokens_per_s']:.0f}", f"{100 * roof['fraction']:.2f}%"])
        key = r["run"].replace("-", "_")
        out[f"{key}_plain"] = rate(tps["plain"])
        out[f"{key}_speculative"] = rate(tps["speculative"])
        out[f"{key}_measured"] = ratio(spread["median"])
        out[f"{key}_t1_ms"] = ms(r["costs"]["target_1_token_s"])
        out[f"{key}_warmup_s"] = f"{r['warmup_s']:.0f}"
        out[f"{key}_fraction"] = f"{100 * roof['fraction']:.1f}%"
        out[f"{key}_floor"] = f"{roof['floor_tokens_per_s']:.0f}"
        out[f"{key}_floor_us"] = f"{1e6 / roof['floor_tokens_per_s']:.0f}"
        out[f"{key}_bandwidth"] = f"{roof['bandwidth_GB_per_s']:.0f}"
        out[f"{key}_spec_goal"] = "met" if spread["median"] > 1 else "missed"
        out[f"{key}_c"] = three(r["cost_ratio_c"])
        out[f"{key}_k"] = two(r["k"])
        out[f"{key}_o_round"] = two(r["o_round"])
        out[f"{key}_round_overhead_ms"] = ms(r["o_round"] * r["costs"]["target_1_token_s"])
        out[f"{key}_predicted"] = ratio(r["predicted_speedup"])
        if r["compile"]:
            eager = next((e for e in runs if not e["compile"] and (e["pair"], e["dtype"]) == (r["pair"], r["dtype"])), None)
            if eager is not None:
                out[f"{key}_over_eager"] = f"{tps['plain'] / eager['tokens_per_s']['plain']:.1f}x"
            before = baseline.runs[GPU_BASELINE_RUNS[(r["pair"].split(":")[0], r["dtype"])]]["tokens_per_s"]["plain"]
            out[f"{key}_baseline"] = rate(before)
            out[f"{key}_over_baseline"] = f"{tps['plain'] / before:.1f}x"
            out[f"{key}_baseline_goal"] = against(tps["plain"] / before, 10.0)
    out["gpu_speed_table"] = table(["pair", "dtype", "passes", "1-token pass (ms)", "plain tok/s", "speculative tok/s",
                                    "speculative / plain, median (range)", "model", "alpha", "warm-up (s)",
                                    "copy loop (GB/s)", "floor (tok/s)", "of the floor"], rows)
    out["gpu_speed_prompts"] = span([r["prompts"] for r in runs], str)
    out["gpu_speed_max_new_tokens"] = span([r["max_new_tokens"] for r in runs], str)
    out["gpu_speed_gamma"] = span([r["gamma"] for r in runs], str)
    out["gpu_speed_width"] = span([r["gamma"] + 1 for r in runs], str)
    out["gpu_speed_repeats"] = span([len(r["repeats"]) for r in runs], str)
    out["gpu_speed_commands"] = "\n".join(f"      {c}" for c in m.environment.get("commands", []))  # a list item's code
    out["gpu_calls"] = m.environment.get("calls", "")
    out["gpu_clocks_before"] = m.environment.get("gpu_clocks_before", "")
    out["gpu_baseline"] = GPU_BASELINE
    drift = [[r["tokens_per_s"]["plain"] for r in g] for g in same_plain_work(bench_runs(baseline))]
    out["gpu_baseline_drift"] = f"{max(max(g) / min(g) for g in drift):.1f}"
    return out


# -- writing ------------------------------------------------------------------------------------------------

GENERATED = "<!-- written by scripts/measurement_tables.py from data/measurements/{name}/ and {template}: edit those -->\n"


def page(template: Path) -> str:
    name = template.name.removesuffix(".md.tmpl")
    text = string.Template(template.read_text()).substitute(fields(load(name)))
    return GENERATED.format(name=name, template=template.relative_to(ROOT).as_posix()) + text


def readme_with_headline(readme: str) -> str:
    """README text with the block between the headline markers replaced by the table and its machine line."""
    if HEADLINE_BEGIN not in readme or HEADLINE_END not in readme:
        raise ValueError(f"README.md lacks the markers {HEADLINE_BEGIN!r} ... {HEADLINE_END!r}")
    before, rest = readme.split(HEADLINE_BEGIN, 1)
    _, after = rest.split(HEADLINE_END, 1)
    m = load(HEADLINE)
    block = (f"\n{headline_table(m)}\n\nMachine: {machine_line(m)}; batch 1, each pair's own prompts, "
             f"every run in [docs/measurements/{HEADLINE}.md](docs/measurements/{HEADLINE}.md).\n")
    return before + HEADLINE_BEGIN + block + HEADLINE_END + after


def outputs() -> dict[Path, str]:
    """Every file this script writes, with the text it should hold."""
    out = {t.with_name(t.name.removesuffix(".tmpl")): page(t) for t in sorted(PAGES.glob("*.md.tmpl"))}
    out[README] = readme_with_headline(README.read_text())
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file differs")
    args = parser.parse_args(argv)
    stale = []
    for path, text in outputs().items():
        if path.exists() and path.read_text() == text:
            continue
        stale.append(path.relative_to(ROOT).as_posix())
        if not args.check:
            path.write_text(text)
    if args.check and stale:
        print("out of date (run python scripts/measurement_tables.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    for name in stale:
        print(f"wrote {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
