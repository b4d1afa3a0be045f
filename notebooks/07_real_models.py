# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 07 · Real models: speculative decoding in torch, checked against the exact law
#
# **What you will learn**
#
# * how the exact round of notebook 04 runs on real transformer models in torch (`specmath.lm`):
#   a draft proposes $\gamma$ tokens, the target checks them all in **one** forward pass, and both
#   KV caches are rolled back to the accepted prefix;
# * how to check that real speculative samples follow the target law $p$: the exact law of the first
#   (and first two) tokens comes from target forward passes, the samples from the decoder, and a
#   G-test with its **power** (the smallest deviation it would catch) decides;
# * that the test can fail: a lossy rule from the bug zoo is rejected at the same N;
# * where the speedup comes from: acceptance $\alpha$, the cost ratio $c$, and the cost $k(\gamma)$ of a target
#   forward over $\gamma + 1$ tokens, read from committed measurements on a CPU and on a GPU, each with its machine named.
#
# Notation as everywhere: $p$ = target law, $q$ = draft law, $\gamma$ = draft tokens per round,
# $\alpha = \sum_x \min(p(x), q(x))$.
#
# We use the **bundled pair** (`specmath.lm.bundled`): a 32-layer character-level target and a
# 1-layer draft distilled from it, trained by `scripts/train_bundled_pair.py` and shipped as
# safetensors. They were trained on English legal prose: eight FSF licence texts (GPL 1-3, LGPL 2-3,
# GFDL 1.2-1.3, shipped in `data/fsf-licenses/`; the model card is `specmath/lm/bundled/README.md`), one
# character per token, so expect "software", "License" and "the Program" rather than Dickens. Its
# 100-symbol vocabulary keeps histograms readable.
#
# **What runs live and what is read from files.** Everything that checks *correctness* runs here, small
# enough to take seconds: exact laws, greedy equality, histograms at a modest N with their power printed.
# *Timing* depends on the machine and on whatever else runs on it, so the timing sections show
# committed measurements (a figure made on a quiet CPU, the JSON of a run on an NVIDIA H200 in
# `data/measurements/`), each naming its machine. One cell at the end times the pair on the machine
# running this notebook, labelled as such; its output is not kept in the committed notebook.

# %% tags=["remove-cell"]
import matplotlib.pyplot as plt
import torch

from specmath import show
from specmath.laws import Law, tv_distance
from specmath.lm.accept_reject import accept_reject
from specmath.lm.decode_options import DecodeOptions
from specmath.lm.histogram import first_token_law, histogram_check, sample_prefixes, two_token_law
from specmath.lm.lossy_controls import residual_softmax_accept_reject
from specmath.lm.pairs import load_named_pair
from specmath.lm.plain_decode import plain_generate
from specmath.lm.speculative_decode import speculative_generate
from specmath.plots.lm_plots import draw_histogram
from specmath.sampling_options import SamplingOptions
from specmath.speculative import acceptance_rate
from specmath.theory import speedup

# %%
# one thread: these are small models, and two OpenMP threads on a machine that is busy with other work
# wait for each other at every operation (many times slower); one thread is never much slower here
torch.set_num_threads(1)
SEED = 0
pair = load_named_pair("bundled")
target, draft, tok = pair.target, pair.draft, pair.tokenizer
prompt_text = "It was the best of times, "
prompt = tok(prompt_text, add_special_tokens=False)["input_ids"]
print(f"target {sum(p.numel() for p in target.parameters()):,} parameters, "
      f"draft {sum(p.numel() for p in draft.model.parameters()):,}; vocabulary {len(tok)}")

# %% [markdown]
# ## p and q for one prompt, as exact laws
#
# A real model's next-token law is its softmax. `first_token_law` turns the float32 probabilities
# into an exact `Law` (each float converted exactly, then renormalised), so the exact core's
# functions apply: `acceptance_rate(p, q)` is $\alpha$ for this context.

# %%
sampling = SamplingOptions(top_k=20)  # the same warp is applied to p and to q
p1 = first_token_law(target, prompt, sampling)
q1 = first_token_law(draft.model, prompt, sampling)
vocab = set(p1) | set(q1)
p1v = Law({x: p1.prob(x) for x in vocab})  # list both supports, so p and q share one vocabulary
q1v = Law({x: q1.prob(x) for x in vocab})
alpha = acceptance_rate(p1v, q1v)
print(f"alpha after {prompt_text!r} = {float(alpha):.4f}   TV(p, q) = {float(tv_distance(p1v, q1v)):.4f} = 1 - alpha")
assert alpha == 1 - tv_distance(p1v, q1v)  # exact identity: sum min(p, q) = 1 - TV(p, q)

# %% [markdown]
# ## Decoding: greedy speculative equals greedy plain, token for token
#
# With temperature 0 both laws are one-hot, so a lossless decoder must reproduce plain greedy decoding
# exactly. A batch of prompts of different lengths checks the cache bookkeeping: every row accepts a
# different number of drafts per round.

# %%
greedy = SamplingOptions(temperature=0)
prompts = pair.prompts
plain = plain_generate(target, prompts, 40, DecodeOptions(sampling=greedy))
spec = speculative_generate(target, draft, prompts, 40, DecodeOptions(gamma=4, sampling=greedy))
assert spec.tokens == plain.tokens
for p_ids, row in zip(prompts, spec.tokens, strict=True):
    print(repr(tok.decode(p_ids) + tok.decode(row)))
print(f"{spec.rounds} rounds for {len(prompts)} x 40 tokens; rows accepted 0..4 drafts: {spec.accepted_hist}")

# %% [markdown]
# ## The accept/reject step, in torch
#
# The decoder's rule is the exact step of notebook 01, vectorised over a batch and over the $\gamma$
# draft positions: accept draft $x_i$ while $u_i\, q(x_i) < p(x_i)$ (no division), and at the first
# rejection draw from $\text{norm}(\max(0, p - q))$. This is the function whose samples are tested below:

# %%
show(accept_reject)

# %% [markdown]
# ## Histograms against the exact law, with the power stated
#
# N speculative samples (one batch of identical prompts) of the first token and of the first two
# tokens, $T = 1$, top-k 20. The exact law of two tokens is $p(x_1)\, p(x_2 \mid x_1)$, from one batched target
# forward over the 20 possible $x_1$. The G-test pools cells to expected count $\ge 5$; `detectable_tv`
# is the smallest TV distance that the test at level $10^{-6}$ detects with probability 0.99 at this $N$.
# $N$ is kept small so the cell runs in seconds; the power printed beside each line says what such an $N$
# can and cannot see.

# %%
N = 1000
law1, law2 = first_token_law(target, prompt, sampling), two_token_law(target, prompt, sampling)
options = DecodeOptions(gamma=4, sampling=sampling, seed=SEED)  # how the decoder runs: gamma, the warp, the seed
good = sample_prefixes(target, draft, prompt, N, 2, options, batch_size=500)
bad = sample_prefixes(target, draft, prompt, N, 2, options.replace(seed=SEED + 1), batch_size=500,
                      accept_reject=residual_softmax_accept_reject)
checks = {
    "first token": histogram_check("first token", [s[0] for s in good], law1),
    "first two tokens": histogram_check("first two tokens", good, law2),
    "control, first token": histogram_check("lossy residual-softmax, first token", [s[0] for s in bad], law1),
}
for name, c in checks.items():
    print(f"{name:22s} G={c.statistic:8.1f} dof={c.dof:3d} p={c.p_value:.3g}  TV={c.measured_tv:.4f} (99% bound {c.tv_upper_99:.4f}); "
          f"detects TV >= {c.detectable_tv:.4f} w.p. 0.99")
assert checks["first token"].p_value > 1e-6 and checks["first two tokens"].p_value > 1e-6
assert checks["control, first token"].p_value < 1e-6  # the test can fail, and does for a lossy rule
outside = sum(c for x, c in checks["control, first token"].counts.items() if law1.prob(x) == 0)
print(f"control: {outside} of {N} first tokens have p = 0 (outside the target's top 20); lossless run: "
      f"{sum(c for x, c in checks['first token'].counts.items() if law1.prob(x) == 0)}")
assert outside > 0

# %% [markdown]
# Left, the speculative samples against the target law $p$ (bars: counts / $N$; the draft's $q$ beside them);
# right, the lossy control at the same $N$:

# %% tags=["hide-input"]
fig, axes = plt.subplots(1, 2, figsize=(12, 3.6))
draw_histogram(axes[0], checks["first token"], q1, tok)
draw_histogram(axes[1], checks["control, first token"], q1, tok)
fig.tight_layout()
plt.show()

# %% [markdown]
# The left panel: speculative samples sit on the target bars, not on the draft's. The right panel:
# the residual-softmax bug (`specmath.bugzoo`) gives every rejected row a near-uniform redraw over the
# vocabulary, so tokens outside the target's top 20 appear (probability 0 under $p$). They land in the
# **other** bar at the right end, which collects everything past the 12 tallest tokens: for the exact $p$
# only the rest of its top 20, for the buggy sampler that plus the tokens $p$ never emits, so its bar
# stands above $p$'s. A single sample where $p$ is 0 makes $G$ infinite, so the p-value printed above is 0.
#
# The same check at $N = 20000$ was run on a GPU by `python scripts/gpu_check.py --n 20000` (the
# committed result, read from `data/measurements/`; the machine is named below the table). Twenty times
# the samples buy about $\sqrt{20} \approx 4.5$ times the power on the first token (the detectable TV shrinks
# as $1/\sqrt{N}$ over a fixed set of cells; for two tokens the larger $N$ also keeps more cells apart):

# %% tags=["hide-input"]
from IPython.display import Markdown, display  # noqa: E402

from specmath.course.measurements import histogram_table, load_measurement  # noqa: E402

gpu = load_measurement("gpu_h200_2026-11-30")
display(Markdown(histogram_table(gpu.histograms("hist-bundled")) + f"\n\nMachine: {gpu.machine}."))

# %% [markdown]
# ## Acceptance per position
#
# Under the i.i.d. model each drafted position is accepted with probability $\alpha$. Real acceptance
# varies with the context; here is the measured rate at each of $\gamma = 6$ positions (given the earlier
# ones were accepted), $T = 1$.

# %%
run = speculative_generate(target, draft, prompts * 4, 32, DecodeOptions(gamma=6, seed=SEED))
rates = run.acceptance_by_position
print("acceptance by position:", [f"{r:.3f}" for r in rates], f" mean alpha {run.alpha_mean:.3f}")
print(f"tokens per round {run.tokens_per_round:.2f}; i.i.d. model (1 - alpha^7)/(1 - alpha) = "
      f"{speedup(run.alpha_mean, 6, 0.0):.2f}")

# %% tags=["hide-input"]
plt.figure(figsize=(5, 2.8))
plt.bar(range(1, 7), rates)
plt.axhline(run.alpha_mean, color="k", ls="--", label="mean alpha")
plt.xlabel("draft position")
plt.ylabel("P(accepted | reached)")
plt.legend()
plt.show()

# %% [markdown]
# ## Is verification free? $k(\gamma)$, measured
#
# Leviathan et al.'s speedup
#
# $$\text{speedup} = \frac{1 - \alpha^{\gamma+1}}{(1 - \alpha)(\gamma c + 1)}$$
#
# assumes that the target's pass over $\gamma + 1$ tokens costs what a pass over one token costs: at batch 1
# a GPU spends the time reading weights, not multiplying. Measure it instead,
#
# $$k(\gamma) = \frac{\text{target pass over } \gamma + 1 \text{ tokens}}{\text{target pass over 1 token}},$$
#
# and put it, with the overheads $o_\text{round}$ (warps, accept/reject, rollback) and $o_\text{plain}$, into the
# model (`specmath.theory.cost_model_speedup`):
#
# $$\text{speedup} = \frac{E[\text{tokens per round}]\,(1 + o_\text{plain})}{\gamma c + k(\gamma) + o_\text{round}}.$$
#
# **On a CPU.** `figures/lm_timing.png`, made by `specmath figures --only lm_timing.png` on the 2-core
# x86-64 CPU of the project's CPU measurements (AVX-512 BF16 and AMX, model not recorded; 2 threads,
# quiet; `docs/measurements/cpu_2026-11-30_bench.md` lists every run). Left, $k(\gamma)$ for $\gamma$ = 1..8,
# timed in a round (right after the draft's proposal) and for the target alone; right, the model with
# $k = 1$ and with the measured costs, the measured speedups, and the model at each measured run's own
# acceptance.
#
# There $k(\gamma)$ was 1.07-1.25 for the bundled pair, whose cost is per-layer overhead, but
# 1.04-1.8 for SmolLM2-135M in float32, whose matrix products with a few rows are compute-bound on that CPU.

# %% tags=["hide-input"]
from pathlib import Path  # noqa: E402

from IPython.display import Image  # noqa: E402

import specmath  # noqa: E402

Image(filename=str(Path(specmath.__file__).resolve().parents[1] / "figures" / "lm_timing.png"), width=900)

# %% [markdown]
# **On a GPU.** `python scripts/gpu_check.py` ran `bench_pair` on one NVIDIA H200 for the bundled pair
# (float32 and bfloat16, token-wise and block verification) and for SmolLM2-135M with prompt lookup,
# the n-gram table and a layer-skip draft (4 prompts x 64 tokens each). The table is read from the
# committed JSON (`BenchResult`'s fields); *gap* is measured / model - 1, and the line below it counts
# the runs where the model with measured costs holds.

# %% tags=["hide-input"]
from specmath.course.measurements import bench_table, model_gap_line  # noqa: E402

display(Markdown(bench_table(gpu.bench) + f"\n\nMachine: {gpu.machine}.\n\nOn the {gpu.environment['device']}, {model_gap_line(gpu.bench)}."))

# %% [markdown]
# Read the gap column before trusting a prediction. The model takes its costs from passes timed apart
# from the decoding; where the measured speedup parts from it, those costs did not hold while the
# decoders ran. A model is a check on a measurement, not a replacement for one.
#
# ### Making verification nearly free on a CPU
#
# SmolLM2's large $k(\gamma)$ is not a law of nature. Stock `torch.nn.functional.linear` in float32 runs
# a product with 2-9 rows far below the rate of a single row on that CPU. In bfloat16, oneDNN runs the
# product on the CPU's AMX tiles, whose cost hardly depends on the number of rows. But
# `nn.functional.linear` reorders the weight into oneDNN's layout on every call.
# `specmath.lm.packed_linear.pack_linears(target, draft)` reorders each weight once, as PyTorch's
# own CPU compiler does for frozen weights (`specmath bench --dtype bfloat16 --pack-weights`).
#
# A packed model is a model of its own: plain and speculative decoding both run it, so their comparison stays
# fair. Measured on the CPU named above by `specmath bench --threads 2 --k-table --pair smollm2:lookup
# --prompts-file data/prompts/edit.jsonl`, with `--dtype bfloat16 --pack-weights` for the second row:
#
# | $\gamma$ | 1 | 2 | 4 | 8 |
# |---|---|---|---|---|
# | float32, stock (1 pass = 50.0 ms) | 1.07 | 1.07 | 1.49 | 1.73 |
# | bfloat16, packed (1 pass = 43.0 ms) | 1.05 | 1.05 | 1.11 | 1.08 |
#
# The 1-token pass costs about the same, so plain decoding is no slower, and verifying 9 tokens costs
# little more than generating 1. On that CPU, prompt lookup on the edit prompts at $T = 0$ went from 1.56x
# to 2.66x over plain decoding. At $T = 1$ a draft must still cost nothing: prompt lookup, falling back
# to one token from a table of SmolLM2's own mean next-token laws (`specmath.lm.ngram_draft`, $\alpha$ = 0.25
# where it knows the context), reached 1.25x on the same prompts.

# %% [markdown]
# ### Making a small draft nearly free
#
# The draft is run $\gamma$ times a round, so its cost $c$ counts $\gamma$ times. A small model's pass on a
# CPU is mostly fixed cost per call: the bundled 1-layer draft's Hugging Face forward spends about
# half its time in `LlamaModel`'s wrapper (argument handling, the causal-mask builder, the rotary
# module, one Python module call per projection).
#
# `specmath.lm.lean_llama.LeanLlama(model)` runs the
# same weights through the same arithmetic in one function per layer, with q/k/v stacked into one
# matrix product and gate/up into another (each output is the same dot product). As a draft it is
# lossless whatever its rounding, because accept/reject uses the $q$ it sampled from; and its logits
# equal Hugging Face's up to summation order, which this cell checks on the prompt:

# %%
from specmath.lm.lean_llama import LeanLlama  # noqa: E402

lean_draft = LeanLlama(draft.model)
ids = torch.tensor([prompt])
with torch.no_grad():
    ours, theirs = lean_draft(ids, use_cache=False).logits, draft.model(input_ids=ids).logits
# the same dot products summed in another order: float32 rounding of logits of size ~10 stays far below
# 1e-3, while a wrong mask, position or rotation moves them by more than 1e-2
torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-3)
print(f"largest |lean - Hugging Face| over {ours.numel():,} logits: {(ours - theirs).abs().max().item():.1e}")

# %% [markdown]
# `specmath bench --pair bundled --lean draft` runs the pair this way: plain decoding and verification
# still run the target exactly as loaded; only the draft is lean. On the CPU named above that lowered $c$
# at $\gamma = 5$ from 0.109 to 0.075 (the bench's $c$ also counts the draft's sampling and rollback). Five
# consecutive runs of the bundled pair, token by token, went from 1.74x-1.99x over plain decoding (Hugging
# Face's forward, and a cache rollback that still read the device) to 2.09x-2.34x.
#
# `--lean all` runs the target lean too, in plain and speculative decoding alike. Its pass shrank from
# 11.7 ms to 8.0 ms and both decoders got faster, but the ratio *fell* (1.57x-2.10x token by token):
# the round's fixed work (sampling, accept/reject, rollback) stays while the passes shrink. A faster
# target is good news for the user and bad news for the speedup ratio.

# %% [markdown]
# ### Judging the block jointly: block verification
#
# Token-by-token verification stops at the first rejected draft, even when the drafts after it are
# ones the target likes. Block verification (Sun et al. 2024, proved lossless exactly in notebook 05)
# keeps a running weight along the drafted block,
#
# $$w_0 = 1, \qquad w_{i+1} = \min\Big(1, \frac{w_i\, p_i(x_i)}{q_i(x_i)}\Big),$$
#
# and decides from the end how much of the block to keep: the whole block with probability $h_n = w_n$,
# else the first $i$ tokens with
#
# $$h_i = \frac{|r_i|}{|r_i| + 1 - w_i}, \qquad r_i = \max(0,\; w_i\, p_i - q_i),$$
#
# where $r_i$ is the target mass the draft under-covers. After keeping $\tau$ tokens it draws from
# $\text{norm}(r_\tau)$, or the bonus token from $p_n$. With one draft it is the token-wise step.
#
# It takes the same arguments as `accept_reject` and returns the same result, so the decoder takes it as a
# drop-in: `DecodeOptions(verify="block")` (`specmath bench --verify block`).
# The part that differs is `block_stop_probabilities`, whose $w$, $h$ and $r$ the tests compare with the exact
# verifier of notebook 05. Its source follows here; the slides leave it out, as it is longer than a slide.

# %% slideshow={"slide_type": "skip"}
from specmath.lm.block_verify import block_stop_probabilities, expected_accepted  # noqa: E402

show(block_stop_probabilities)

# %% [markdown]
# Lossless on the real pair too: the histogram test of the first two tokens, with block verification
# (same N, same power as above).

# %%
blocky = sample_prefixes(target, draft, prompt, N, 2, options.replace(seed=SEED + 2, verify="block"), batch_size=500)
check = histogram_check("first two tokens, block verification", blocky, law2)
print(f"G={check.statistic:.1f} dof={check.dof} p={check.p_value:.3g}; detects TV >= {check.detectable_tv:.4f} w.p. 0.99")
assert check.p_value > 1e-6

# %% [markdown]
# How many more tokens a round? For one drafted block, $E[\text{accepted} \mid \text{block}]$ is a formula under
# either verifier: the products $\prod_{j \le i} \min(1, p_j/q_j)$ summed along the block for token-wise,
# $\sum_i i\, P(\tau = i)$ for block (`expected_accepted`). Scoring the *same* blocks both ways measures the
# difference with little noise. Sun et al. prove that, averaged over blocks drawn from $q$, the block verifier keeps at least as many
# tokens (a single block may go either way). The decoder below runs token-wise and scores every block it
# drafts; a few hundred blocks from one short run are a small sample, and the gains measured over many
# runs follow below it:

# %%
for gamma in (2, 5, 8):
    scored = []

    def scoring(p, q, drafts, generator, lengths=None, scored=scored):
        scored.append(torch.stack(expected_accepted(p, q, drafts, lengths), dim=1))
        return accept_reject(p, q, drafts, generator, lengths)

    speculative_generate(target, draft, prompts * 4, 48, DecodeOptions(gamma=gamma, seed=SEED), accept_reject=scoring)
    token_wise, block = (1 + torch.cat(scored)).mean(0).tolist()
    print(f"gamma {gamma}: {len(torch.cat(scored))} blocks scored; tokens per round {token_wise:.2f} token-wise, "
          f"{block:.2f} block ({100 * (block / token_wise - 1):+.1f}%)")

# %% [markdown]
# Over many runs the gain grows with $\gamma$: a longer block holds more drafts after a first doubtful
# one, which token-wise verification throws away and block verification may keep.
# `python scripts/block_vs_token.py --pair bundled --threads 2` scored 48 runs of 64 tokens on the CPU
# named above: +2.7% tokens per round at $\gamma = 3$, +6.5% at 5 and +10.2% at 8 (paired standard errors
# 0.4-1.1 points), so with block verification `--gamma auto` picks $\gamma$ = 7-8.
#
# With the lean draft, that took the bundled pair from 2.09x-2.34x over plain decoding token by token to
# 2.32x-2.63x with block verification, five consecutive runs each, on that CPU; the H200's bundled rows are
# in the table above.

# %% [markdown]
# ## Where a pass's time goes: dispatch, weights, compute
#
# At batch 1 a pass reads every weight once: $W$ bytes. A machine that moves $B$ bytes per second cannot
# do it faster than
#
# $$t_\text{pass} \ge \frac{W}{B}, \qquad \text{so plain decoding} \le \frac{B}{W} \text{ tokens/s (the roofline).}$$
#
# The rest of a pass, $t_\text{pass} - W/B$, is dispatch (Python, checks, one kernel launch per operation)
# and arithmetic above the memory time. `DecodeOptions(compile=True)` runs the passes on a static KV
# cache through `torch.compile`, one graph per width (CUDA graphs on a GPU): it removes dispatch, not
# weights. The figure and the numbers below are read from the committed run
# `data/measurements/cpu_2026-12-06_decode_speed/` (`scripts/measure_decode_speed.py`, a 2-core CPU, 1 thread).

# %% tags=["hide-input"]
from specmath.plots.lm_plots import DECODE_SPEED, plot_pass_time  # noqa: E402

speed = load_measurement(DECODE_SPEED).runs["speed-bundled-float32"]
plot_pass_time()
plt.show()
roof, ratio = speed["roofline"]["plain_compiled"], speed["compiled_over_eager_plain"]
load = [x for r in speed["repeats"] for x in r["load_average"]]
display(Markdown(f"W = {roof['weight_bytes'] / 1e6:.1f} MB, B = {roof['bandwidth_GB_per_s']:.1f} GB/s (copy loop, load average "
                 f"{min(load):.0f}-{max(load):.0f}): compiled plain decoding {ratio['median']:.2f} times eager (repeats {ratio['min']:.2f}-{ratio['max']:.2f}), "
                 f"at {100 * roof['fraction']:.0f}% of its roofline."))

# %% [markdown]
# On a GPU the same split is starker. The run below is the committed `data/measurements/gpu_h200_2026-12-04/`
# (`scripts/gpu_check.py --speed` on one H200): eagerly a 1-token pass of these small models costs tens of
# milliseconds of launches and Python while their weights take microseconds to read; CUDA graphs remove most of
# that, and what is left is still far above $W/B$.

# %% tags=["hide-input"]
from specmath.plots.lm_plots import GPU_SPEED, bench_pass_parts, plot_pass_time_gpu  # noqa: E402

plot_pass_time_gpu()
plt.show()
gpu_speed = load_measurement(GPU_SPEED)
eager, compiled = (gpu_speed.runs[f"speed-smollm2-bf16-{kind}"] for kind in ("eager", "compiled"))
parts = bench_pass_parts(compiled)
display(Markdown(f"SmolLM2 in bfloat16 on the {gpu_speed.environment['device']}: a 1-token pass {1e3 * eager['costs']['target_1_token_s']:.1f} ms "
                 f"eager, {1e3 * parts['total']:.2f} ms with CUDA graphs, of which the weights' floor W / B is {1e6 * parts['weights']:.0f} us; "
                 f"plain decoding {eager['tokens_per_s']['plain']:.0f} then {compiled['tokens_per_s']['plain']:.0f} tokens/s, "
                 f"{100 * compiled['roofline']['fraction']:.1f}% of its roofline."))

# %% [markdown]
# ## Timing on this machine, now
#
# `bench_pair` (also `specmath bench --pair bundled`) times plain and speculative decoding on the same
# prompts and seed, interleaved per prompt, and measures $\alpha$, $c$ = (one draft step) / (one target pass
# over 1 token), $k(\gamma)$ and the overheads. The cell below runs it briefly (2 prompts x 32 tokens,
# $\gamma = 4$, one thread) on the machine running this notebook. What it prints is this machine, now: it
# moves with whatever else runs beside it, so compare its numbers with each other, not with the
# measurements above. Its output is not kept in the committed notebook (the cell is tagged
# `machine-dependent`).

# %% tags=["machine-dependent"]
import os  # noqa: E402

from specmath.lm.bench import bench_pair  # noqa: E402

r = bench_pair(pair, prompts[:2], 32, DecodeOptions(gamma=4), hf=False, progress=False)
load = f"load average {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else "load not known"
print(f"this machine, now ({os.cpu_count()} CPUs, {load}, {torch.get_num_threads()} torch thread):")
print(f"  tokens/s plain {r.tokens_per_s.plain:.1f}, speculative {r.tokens_per_s.speculative:.1f}: "
      f"{r.measured_speedup_vs_plain:.2f}x; alpha {r.alpha:.3f}, c {r.model.c:.3f}, k(4) {r.model.k:.2f}")

# %% [markdown]
# **Explorer:** [08 · 4. One round of a real model pair](08_explorers.ipynb#4.-One-round-of-a-real-model-pair): type a prompt and see $p$ and $q$ bars and the acceptance of each draft token of one round.

# %% [markdown]
# ## Summary
#
# * `speculative_generate` runs the round of notebook 04 on real models: $\gamma$ drafts, one target
#   forward, $\min(1, p/q)$, the residual $\text{norm}(\max(0, p - q))$, the bonus token, and caches cropped to the
#   accepted prefix (rows with fewer accepted tokens keep masked holes).
# * The exact law of the first tokens of a real model is computed from target forward passes; $N$
#   speculative samples pass a G-test whose power is stated, and a lossy rule fails it at the same $N$.
#   Twenty times the samples (the committed $N = 20000$ run) buy about $\sqrt{20} \approx 4.5$ times the power on the first token.
# * Speedup = (tokens per round) / (cost per round). Leviathan's $(1 - \alpha^{\gamma+1}) / ((1 - \alpha)(\gamma c + 1))$
#   assumes $k(\gamma) = 1$; measured on a quiet 2-core CPU, $k(\gamma)$ is near 1 for the bundled pair but up
#   to 1.8 for SmolLM2-135M in float32. The model $E[\text{tokens}]\,(1 + o_\text{plain}) / (\gamma c + k(\gamma) + o_\text{round})$
#   with measured costs is a check on a measured speedup, which the committed GPU run shows where it holds
#   and where it does not. Packing the weights for the CPU's matrix units (bfloat16) brought $k(8)$ down to
#   about 1.1 on that CPU.
# * A small model's pass on a CPU is mostly fixed cost per call. Running the same weights without the
#   framework's per-call wrapper (`LeanLlama`, the same logits up to summation order) cut the bundled
#   draft's $c$ by a third; the same trick on the *target* speeds up plain decoding as much as speculative
#   decoding and lowers the ratio.
# * Block verification judges the drafted block jointly: the same output law, at least as many tokens per
#   round on average, and a gain that grows with $\gamma$.
# * Timings are measurements of a machine at a moment: the committed ones name their machine, and a live
#   one is only this machine, now.
#
# ## Exercises
#
# 1. Raise $N$ until `detectable_tv` is below 0.01. How does it scale with $N$? Check your answer against
#    the committed $N = 20000$ table.
# 2. Swap the negative control for `accept_reject=target_resample_accept_reject` (resample from $p$). Compute its exact TV from $p$
#    with `specmath.speculative.step_law` and the laws `p1`, `q1` above: at which $N$ will the test reject it?
# 3. Set `SamplingOptions(temperature=0.5)` for both laws. How do $\alpha$ and the speedup change, and why?
# 4. Find the $\gamma$ that maximises the predicted speedup for the measured $\alpha$ and $c$, then measure it.
# 5. With the measured $k(\gamma)$ of SmolLM2 on the CPU above ($k(2) = 1.1$, $k(4) = 1.5$) and a draft with $c = 0.1$,
#    what $\alpha$ does a 1.2x speedup need at $\gamma = 2$? Compare it with the alphas in the GPU table.
# 6. Redo exercise 5 with the packed bfloat16 costs ($k(\gamma)$ about 1.05-1.1 for every $\gamma$ up to 8).
#    Which $\gamma$ does the model now pick for prompt lookup at $\alpha_1 = 0.5$, $\alpha_i = 0.9$ after it?
# 7. Measure $c$ with `draft.model` and with `LeanLlama(draft.model)` at $\gamma = 5$, put both into the
#    model with $\alpha = 0.83$ and $k = 1.15$, and predict the speedup. Then do the same for a lean target
#    (its pass about 8.0 ms, the round's fixed work unchanged at about 0.6 ms): why does the ratio fall?
# 8. Block verification at $\gamma = 1$ is the token-wise step. Check it on the bundled pair: score the
#    blocks of a $\gamma = 1$ run with `expected_accepted` and compare the two columns. Then find the
#    smallest $\gamma$ where block verification adds 5% to the tokens per round.
