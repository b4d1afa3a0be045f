"""Figures for real models (specmath.lm): empirical vs exact histograms, acceptance per position, timing.

They use the bundled pair (``specmath.lm.bundled``), small enough to stay under a minute on a CPU.
torch is imported inside the functions, so registering these figures does not import it.
Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p, q).
"""

from __future__ import annotations

import matplotlib.pyplot as plt

from specmath.figures import figure

PROMPT = "It was the best of times, "
SEED = 0


def _label(tokenizer, token) -> str:
    if tokenizer is None:
        return str(token)
    ids = list(token) if isinstance(token, tuple) else [token]
    return repr(tokenizer.decode(ids))[1:-1] or f"<{ids}>"


def histogram_bars(check, draft_law=None, top: int = 12) -> list[tuple[object, float, float, float | None]]:
    """(outcome, empirical, exact p, draft q or None) for the ``top`` likeliest outcomes, then "other".

    The "other" bar holds everything else: the remaining mass of p and q, and every sample outside the
    top outcomes, including samples the target law gives probability 0 (a lossy rule's tell-tale).
    """
    order = sorted(check.law, key=lambda x: -check.law[x])[:top]
    rows = [(x, check.counts.get(x, 0) / check.n, float(check.law[x]), None if draft_law is None else float(draft_law.prob(x)))
            for x in order]
    shown = set(order)
    other_emp = sum(c for x, c in check.counts.items() if x not in shown) / check.n
    other_p = 1.0 - sum(r[2] for r in rows)
    other_q = None if draft_law is None else 1.0 - sum(r[3] for r in rows)
    rows.append(("other", other_emp, max(other_p, 0.0), None if other_q is None else max(other_q, 0.0)))
    return rows


def draw_histogram(ax, check, draft_law=None, tokenizer=None, top: int = 12) -> None:
    """Bars: empirical frequency and exact target probability of the top outcomes and "other", draft q beside."""
    rows = histogram_bars(check, draft_law, top)
    xs = range(len(rows))
    ax.bar([i - 0.27 for i in xs], [r[1] for r in rows], 0.27, label=f"speculative, N={check.n}")
    ax.bar(list(xs), [r[2] for r in rows], 0.27, label="exact target p")
    if draft_law is not None:
        ax.bar([i + 0.27 for i in xs], [r[3] for r in rows], 0.27, label="draft q", color="gray", alpha=0.6)
    labels = [_label(tokenizer, r[0]) for r in rows[:-1]] + ["other"]
    ax.set_xticks(list(xs), labels, rotation=60, fontsize=8)
    ax.set_ylabel("probability")
    ax.set_title(f"{check.name}: G={check.statistic:.1f} (dof {check.dof}), p={check.p_value:.3f}, "
                 f"TV={check.measured_tv:.3f} (detectable {check.detectable_tv:.3f})", fontsize=9)
    ax.legend(fontsize=8)


@figure("lm_first_token_histogram.png")
def plot_lm_first_token_histogram(n: int = 6000, gamma: int = 4):
    """Bundled pair: N speculative first tokens vs the exact target law, with the draft law beside."""
    from specmath.lm.decode_options import DecodeOptions
    from specmath.lm.histogram import first_token_law, histogram_check, sample_prefixes, two_token_law
    from specmath.lm.pairs import load_named_pair
    from specmath.sampling_options import SamplingOptions

    pair = load_named_pair("bundled")
    prompt = pair.tokenizer(PROMPT, add_special_tokens=False)["input_ids"]
    sampling = SamplingOptions(top_k=20)
    samples = sample_prefixes(pair.target, pair.draft, prompt, n, 2, DecodeOptions(gamma=gamma, sampling=sampling, seed=SEED),
                              batch_size=n)
    first = histogram_check("first token", [s[0] for s in samples], first_token_law(pair.target, prompt, sampling))
    two = histogram_check("first two tokens", samples, two_token_law(pair.target, prompt, sampling))
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    draw_histogram(axes[0], first, first_token_law(pair.draft.model, prompt, sampling), pair.tokenizer)
    draw_histogram(axes[1], two, None, pair.tokenizer)
    fig.suptitle(f"Bundled pair after {PROMPT!r}, top-k 20, gamma={gamma}: speculative samples follow p, not q")
    fig.tight_layout()
    return fig


@figure("lm_acceptance_by_position.png")
def plot_lm_acceptance_by_position(gamma: int = 6, tokens: int = 40):
    """Bundled pair: P(draft position i accepted | positions before it accepted), and alpha."""
    from specmath.lm.decode_options import DecodeOptions
    from specmath.lm.pairs import load_named_pair
    from specmath.lm.speculative_decode import speculative_generate

    pair = load_named_pair("bundled")
    out = speculative_generate(pair.target, pair.draft, pair.prompts * 4, tokens, DecodeOptions(gamma=gamma, seed=SEED))
    rates = out.acceptance_by_position
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    ax.bar(range(1, gamma + 1), rates, label="measured acceptance at position i")
    ax.axhline(out.alpha_mean, color="black", ls="--", label=f"mean alpha = sum min(p, q) = {out.alpha_mean:.3f}")
    ax.set_xlabel("draft position i")
    ax.set_ylabel("P(accepted | reached)")
    ax.set_ylim(0, 1.05)
    ax.set_title(f"Bundled pair, T=1, {len(pair.prompts) * 4} rows x {tokens} tokens: "
                 f"{out.tokens_per_round:.2f} tokens per round", fontsize=9)
    ax.legend(fontsize=8, loc="lower left")
    return fig


@figure("lm_timing.png")
def plot_lm_timing(gammas=(1, 2, 4, 6), tokens: int = 48, prompts: int = 4):
    """Bundled pair on this machine: measured k(gamma), and the measured-cost speedup model vs measured speedups.

    Every number comes from ``specmath.lm.bench.bench_pair``: one run with ``calibrate_gamma=True`` gives the
    calibration (alpha_i from a run at gamma 8, the costs for gamma 1..8) and the prefill, then one run
    per gamma in ``gammas`` gives a measured speedup and the model at that run's own acceptance.
    Left: k(gamma) = target pass over gamma + 1 tokens / over 1 token (timed in a round, and alone),
    against the premise k = 1. Right: the model's speedup over gamma 1..8 with k = 1 and with the
    measured costs, the measured speedups, and the model at each measured run's own acceptance.
    """
    import torch

    from specmath.lm.bench import bench_pair
    from specmath.lm.cost_measure import GAMMAS
    from specmath.lm.decode_options import DecodeOptions
    from specmath.lm.pairs import load_named_pair
    from specmath.theory import RoundCosts, cost_model_speedup

    pair = load_named_pair("bundled")
    chosen = pair.prompts[:prompts]

    def bench(gamma: int | None):
        options = DecodeOptions(gamma=gamma or DecodeOptions.gamma, seed=SEED)
        return bench_pair(pair, chosen, tokens, options, calibrate_gamma=gamma is None, hf=False, progress=False)

    auto = bench(None)
    calibration, prefill, draft_prefill = auto.calibration, auto.model.prefill, auto.model.draft_prefill
    costs = calibration.costs
    # plain and speculative interleaved per prompt inside each run, so a change of machine load hits both alike;
    # the model at the run's own acceptance separates the noise of a few hundred tokens' alpha_i from an
    # error of the cost model
    runs = {g: bench(g) for g in gammas}
    measured = {g: r.measured_speedup_vs_plain for g, r in runs.items()}
    own = {g: r.predicted_speedup for g, r in runs.items()}

    def model(g: int, costs_g: RoundCosts) -> float:
        return cost_model_speedup(calibration.continuation, g, costs_g, new_tokens=tokens)

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8))
    left.plot(GAMMAS, [costs.k(g) for g in GAMMAS], "o-", label="measured k(gamma), in a round (after the draft)")
    left.plot(GAMMAS, [costs.k_alone(g) for g in GAMMAS], "s:", label="measured, the target alone")
    left.axhline(1, color="gray", ls="--", label="k = 1: verification as cheap as one token")
    left.set_xlabel("gamma")
    left.set_ylabel("target pass over gamma + 1 tokens / over 1")
    left.set_title(f"Target pass cost, cache at {costs.context} tokens, 1 token = {costs.t1 * 1e3:.1f} ms", fontsize=9)
    left.legend(fontsize=8)
    right.plot(GAMMAS, [model(g, RoundCosts(costs.c(g))) for g in GAMMAS], "--", color="gray",
               label="model with k = 1, no overheads")
    right.plot(GAMMAS, [model(g, costs.model(g, prefill=prefill, draft_prefill=draft_prefill)) for g in GAMMAS], "-",
               label="model with measured k(gamma), c, overheads, prefill")
    right.plot(list(measured), list(measured.values()), "o", color="black", label="measured (plain time / speculative time)")
    right.plot(list(own), list(own.values()), "x", color="tab:red", ms=9, label="model at the run's own acceptance")
    right.axhline(1, color="gray", lw=0.8)
    right.set_xlabel("gamma (draft tokens per round)")
    right.set_ylabel("speedup over plain decoding")
    right.set_title(f"Bundled pair, T=1, {len(chosen)} prompts x {tokens} tokens, CPU {torch.get_num_threads()} threads", fontsize=9)
    right.legend(fontsize=8)
    fig.tight_layout()
    return fig


#: the committed measurement ``plot_pass_time`` draws (``benchmarks/decode_speed.py`` wrote it)
DECODE_SPEED = "cpu_2026-12-06_decode_speed"


def pass_time_parts(run: dict) -> dict[str, dict[str, float]]:
    """Seconds of one cached 1-token target pass, eager and compiled, split into the weights' floor and the rest.

    ``run``: one ``benchmarks/decode_speed.py`` JSON. weights = W / B (every weight byte read once at the
    measured copy bandwidth: the roofline); the rest = the measured pass minus that: per-call dispatch
    (Python, the framework, kernel launches) and arithmetic above the memory time. Compiling removes
    dispatch, not weights, so the rest is what shrinks.
    """
    roof = run["roofline"]["plain_eager"]
    floor = roof["weight_bytes"] / (roof["bandwidth_GB_per_s"] * 1e9)
    return {kind: {"weights": min(floor, t), "rest": max(t - floor, 0.0), "total": t}
            for kind, t in run["one_token_pass_s"].items()}


@figure("lm_pass_time.png")
def plot_pass_time(measurement: str = DECODE_SPEED):
    """Where a 1-token pass's time goes (weights at the bandwidth floor vs the rest), eager and compiled, per pair.

    Every number is read from ``data/measurements/<measurement>/`` (``specmath.course.measurements``):
    nothing is measured here. Left: the pass split by ``pass_time_parts``. Right: plain decoding's tokens/s,
    eager and compiled, against the roofline B / W of its pair and dtype.
    """
    from specmath.course.measurements import load_measurement

    found = load_measurement(measurement)
    # the runs on the machine as it was (the -busy runs repeat them beside CPU-bound processes)
    runs = {name: run for name, run in sorted(found.runs.items())
            if "one_token_pass_s" in run and not run.get("busy_processes")}
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.6))
    labels, weights, rest = [], [], []
    for run in runs.values():
        for kind, part in pass_time_parts(run).items():
            labels.append(f"{run['pair']} {run['dtype']}\n{kind}")
            weights.append(1e3 * part["weights"])
            rest.append(1e3 * part["rest"])
    y = range(len(labels))
    left.barh(y, weights, color="tab:blue", label="weights: W / B (the bandwidth floor)")
    left.barh(y, rest, left=weights, color="tab:orange", label="the rest: dispatch and compute above it")
    left.set_yticks(list(y), labels, fontsize=8)
    left.set_xlabel("ms per cached 1-token target pass")
    left.set_title(f"Where a pass's time goes ({found.environment.get('machine', measurement)})", fontsize=9)
    left.legend(fontsize=8)
    names = list(runs)
    for i, name in enumerate(names):
        run = runs[name]
        floor = run["roofline"]["plain_eager"]["floor_tokens_per_s"]
        right.bar([3 * i, 3 * i + 1], [run["tokens_per_s"]["plain_eager"], run["tokens_per_s"]["plain_compiled"]],
                  color=["tab:gray", "tab:green"], label=None if i else "plain decoding: eager, compiled")
        right.hlines(floor, 3 * i - 0.5, 3 * i + 1.5, colors="black", linestyles="--",
                     label=None if i else "roofline B / W (memory-bound floor)")
    right.set_xticks([3 * i + 0.5 for i in range(len(names))], [f"{runs[n]['pair']} {runs[n]['dtype']}" for n in names],
                     fontsize=8)
    right.set_yscale("log")
    right.set_ylabel("tokens/s (log)")
    right.set_title("Plain decoding against the bandwidth floor", fontsize=9)
    right.legend(fontsize=8)
    fig.tight_layout()
    return fig


#: the committed GPU measurement ``plot_pass_time_gpu`` draws (``scripts/gpu_check.py --speed`` wrote it)
GPU_SPEED = "gpu_h200_2026-12-04"


def bench_pass_parts(run: dict) -> dict[str, float]:
    """Seconds of one cached 1-token target pass of a bench run (``BenchResult.to_json``), split as ``pass_time_parts``
    splits it: weights = W / B at the copy loop's bandwidth, the rest = the measured pass minus that."""
    roof = run["roofline"]
    floor = roof["weight_bytes"] / (roof["bandwidth_GB_per_s"] * 1e9)
    t = run["costs"]["target_1_token_s"]
    return {"weights": min(floor, t), "rest": max(t - floor, 0.0), "total": t}


@figure("lm_pass_time_gpu.png")
def plot_pass_time_gpu(measurement: str = GPU_SPEED):
    """``lm_pass_time.png`` for a GPU: each pair's 1-token pass eager and compiled (CUDA graphs), and plain decoding
    against its roofline, read from the bench runs of ``data/measurements/<measurement>/`` (nothing is measured here)."""
    from specmath.course.measurements import load_measurement

    found = load_measurement(measurement)
    runs = [run for _, run in sorted(found.runs.items()) if run.get("ok") and "roofline" in run and "costs" in run]
    runs.sort(key=lambda r: (r["pair"], r["dtype"], r["compile"]))
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.6))
    labels = [f"{r['pair']} {r['dtype']}\n{'compiled' if r['compile'] else 'eager'}" for r in runs]
    parts = [bench_pass_parts(r) for r in runs]
    y = range(len(runs))
    left.barh(y, [1e3 * p["weights"] for p in parts], color="tab:blue", label="weights: W / B (the bandwidth floor)")
    left.barh(y, [1e3 * p["rest"] for p in parts], left=[1e3 * p["weights"] for p in parts], color="tab:orange",
              label="the rest: kernel launches, dispatch, compute")
    left.set_yticks(list(y), labels, fontsize=8)
    left.set_xlabel("ms per cached 1-token target pass")
    left.set_title(f"Where a pass's time goes ({found.environment.get('device', measurement)})", fontsize=9)
    left.legend(fontsize=8, loc="center right")
    colours = ["tab:green" if r["compile"] else "tab:gray" for r in runs]
    right.bar(range(len(runs)), [r["tokens_per_s"]["plain"] for r in runs], color=colours)
    for i, r in enumerate(runs):
        right.hlines(r["roofline"]["floor_tokens_per_s"], i - 0.4, i + 0.4, colors="black", linestyles="--",
                     label=None if i else "roofline B / W (memory-bound floor)")
    short = [f"{r['pair'].split(':')[0]}\n{r['dtype'].replace('bfloat16', 'bf16')}\n{'compiled' if r['compile'] else 'eager'}"
             for r in runs]
    right.set_xticks(list(range(len(runs))), short, fontsize=7)
    right.set_yscale("log")
    right.set_ylabel("plain decoding, tokens/s (log)")
    right.set_title("Plain decoding at batch 1 (grey eager, green CUDA graphs) against the floor", fontsize=9)
    right.legend(fontsize=8)
    fig.tight_layout()
    return fig
