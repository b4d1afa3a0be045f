"""``specmath bench [--pair NAME] [--prompts-file FILE] [--gamma N|auto] [--temperature T] [--k-table] [--json]``.

One run, same models, prompts and seed: tokens/s of plain decoding, specmath's speculative decoding
and Hugging Face ``generate(assistant_model=...)`` (or ``prompt_lookup_num_tokens``); acceptance per
draft position alpha_i, the measured costs c (draft step), k(gamma) (target pass over gamma + 1 tokens
/ over 1 token) and overheads, and the predicted speedup twice, with k = 1 (verification free, the
premise of Leviathan et al.) and with the measured costs (``specmath.lm.bench.bench_pair``), next to the
measured one. ``--k-table`` prints k(gamma) (in a round, and with the target alone), c and the round
overhead for gamma 1..8 without decoding (``specmath.lm.cost_measure``).
``--prompts-file``: JSON Lines, one user message per line (chat template applied for chat models).
``--verify block`` verifies each drafted block jointly (``specmath.lm.block_verify``). ``--compile`` runs
the passes compiled on a static KV cache (``specmath.lm.compiled_steps``; the default on a CUDA device,
``drafts.compiles_by_default``); ``--repeats N`` interleaves N
repeats and reports the median ratios and their spread; ``--clock cpu`` times them by the process's CPU time
(one torch thread on a CPU: a ratio that holds beside other CPU-bound processes). ``--json`` prints
``BenchResult.to_json`` for each pair (its fields are documented in ``specmath.lm.bench_result``).
Imports torch only when run; the choices come from ``specmath.choices``. Notation: p target, q draft,
gamma drafts per round, alpha = sum min(p, q).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace

from specmath.choices import BENCH_CLOCKS, BENCH_PAIRS, DTYPES, GAMMA_AUTO, LEAN, PAIR_FORMS, VERIFY
from specmath.cli import IntegerValue, RealValue
from specmath.validation import InvalidArgument, check_clock


class _GammaValue(IntegerValue):
    """``--gamma``: draft tokens per round, an int >= 1, or ``auto``."""

    def check(self, text: str, name: str) -> int | str:
        if text == GAMMA_AUTO:
            return text
        try:
            return super().check(text, name)
        except InvalidArgument:
            shown = text if text.lstrip("-").isdigit() else repr(text)
            raise InvalidArgument(f"{name} must be an int >= 1 or {GAMMA_AUTO!r}, got {shown}") from None


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pair", metavar="NAME", action="append", help=f"{PAIR_FORMS} (repeatable; default: {' and '.join(BENCH_PAIRS)})")
    parser.add_argument("--gamma", metavar="N|auto", action=_GammaValue, min_value=1, default=4,
                        help=f"draft tokens per round, an int >= 1, or {GAMMA_AUTO!r} (a short calibration picks it; default 4)")
    parser.add_argument("--max-new-tokens", metavar="N", action=IntegerValue, min_value=1, default=64,
                        help="tokens generated per prompt, an int >= 1 (default 64; a chat model may stop earlier at its eos token)")
    parser.add_argument("--prompts-file", metavar="FILE", default=None, help="JSON Lines file, one JSON string (user message) per line")
    parser.add_argument("--prompts", metavar="N", action=IntegerValue, min_value=1, default=None,
                        help="time only the first N >= 1 prompts (default: 4 of the pair's own, all of a file)")
    parser.add_argument("--temperature", metavar="T", action=RealValue, min_value=0, default=1.0,
                        help="temperature T >= 0 of p and q (0 = greedy; default 1)")
    parser.add_argument("--top-k", metavar="K", action=IntegerValue, min_value=1, default=None,
                        help="keep the K >= 1 most likely tokens of p and q (default: all)")
    parser.add_argument("--top-p", metavar="P", action=RealValue, min_value=0, max_value=1, open_min=True, default=None,
                        help="keep the most likely tokens up to mass P in (0, 1] (default: all)")
    parser.add_argument("--seed", action=IntegerValue, min_value=0, default=0,
                        help="seed of every decoder's torch.Generator, an int >= 0 (default 0)")
    parser.add_argument("--device", metavar="DEVICE", default=None, help="cpu, cuda or cuda:N (default: cuda if available)")
    parser.add_argument("--dtype", default=DTYPES[0], choices=DTYPES, help=f"dtype the models run in (default {DTYPES[0]})")
    parser.add_argument("--pack-weights", action="store_true",
                        help="pack the Linear weights once for oneDNN (needs --dtype bfloat16 on a CPU with AMX or AVX-512 BF16; "
                             "specmath.lm.packed_linear): k(gamma) ~ 1; plain, speculative and HF decoding all run the packed models")
    parser.add_argument("--lean", default=LEAN[0], choices=LEAN,
                        help="run the model draft ('draft') or the target too ('all') through specmath.lm.lean_llama, the same Llama "
                             "forward without HF's per-call wrapper; HF assisted generation runs the models as loaded")
    parser.add_argument("--verify", default=VERIFY[0], choices=VERIFY,
                        help="how speculative decoding verifies a drafted block: token by token (Leviathan et al.; default) or "
                             "jointly ('block', Sun et al. 2024: never fewer accepted tokens, as lossless); HF always verifies token by token")
    parser.add_argument("--threads", metavar="N", action=IntegerValue, min_value=1, default=None, help="torch CPU threads, an int >= 1")
    parser.add_argument("--no-hf", action="store_true", help="skip HF assisted generation")
    parser.add_argument("--k-table", action="store_true", help="print k(gamma), c and o_round for gamma 1..8 (no decoding runs)")
    parser.add_argument("--draft-threshold", metavar="X", action=RealValue, min_value=0, max_value=1, default=0.0,
                        help="a model draft stops a row when max_x q(x) falls below this threshold in [0, 1] "
                             "(lossless: depends on q only; default 0)")
    parser.add_argument("--profile", action="store_true",
                        help="also time the parts of a round (draft, target, accept/reject, cache, other) and print ms per round")
    parser.add_argument("--compile", action=argparse.BooleanOptionalAction, default=None,
                        help="run plain and speculative decoding on a static KV cache with compiled passes (torch.compile on a CPU, "
                             "CUDA graphs on a GPU; specmath.lm.compiled_steps): the first runs compile, reported as warm-up apart "
                             "from the timed runs (default: compiled on a CUDA device for Llama-architecture pairs, where it wins, "
                             "eager on a CPU, where compiling costs more than a bench saves)")
    parser.add_argument("--repeats", metavar="N", action=IntegerValue, min_value=1, default=3,
                        help="interleaved repeats of plain, speculative and HF decoding and of the cost measurement, an int >= 1; "
                             "the medians and the spread of the ratios are reported (default 3)")
    parser.add_argument("--clock", default=BENCH_CLOCKS[0], choices=BENCH_CLOCKS,
                        help="time the runs and the costs by the wall (default) or by this process's CPU time ('cpu': with "
                             "--threads 1 on a CPU, a ratio that holds beside other CPU-bound processes, which take a share of "
                             "the cores the wall clock counts; specmath.lm.stopwatch)")
    parser.add_argument("--json", action="store_true", help="print one JSON list instead of a table")


def _table(r) -> str:
    """A ``BenchResult`` in six lines."""
    rate = r.tokens_per_s
    alphas = " ".join("-" if a is None else f"{a:.2f}" for a in r.acceptance_by_position)
    model = r.model
    lines = [
        f"pair {r.pair} on {r.device} ({r.dtype}, {r.threads} threads), gamma={r.gamma}, "
        f"{r.prompts} prompts x <= {r.max_new_tokens} tokens, T={r.sampling.temperature}, {r.options.verify} verification",
        f"  tokens/s   plain {rate.plain:.1f}   speculative {rate.speculative:.1f}   HF assisted "
        + ("-" if rate.hf_assisted is None else f"{rate.hf_assisted:.1f}"),
        f"  alpha {r.alpha:.3f}   alpha_i {alphas}   tokens/round {r.mean_tokens_per_round:.2f} (model {r.predicted_tokens_per_round:.2f})",
        f"  rounds: {r.drafts_per_round:.2f} drafts each; continuation a_i " + " ".join(f"{a:.2f}" for a in r.continuation_by_position),
        f"  costs (target 1-token pass = 1, mean over the rounds): c {model.c:.3f}   k {model.k:.2f}   o_round {model.o_round:.3f}"
        f"   o_plain {model.o_plain:.3f}   prefill {model.prefill:.1f} + draft {model.draft_prefill:.1f}",
        f"  speedup   predicted k=1 {r.predicted_speedup_k1:.2f}x   predicted measured-cost {r.predicted_speedup:.2f}x"
        f"   measured {r.measured_speedup_vs_plain:.2f}x"
        + (f"   vs HF assisted {r.speedup_vs_hf_assisted:.2f}x" if r.speedup_vs_hf_assisted else ""),
    ]
    if r.repeats:
        data = r.to_json()
        measured, predicted = data["measured_speedup"], data["predicted_speedup_repeats"]
        loads = [x for t in r.repeats for x in t.load_average if x is not None]
        lines.append(f"  {len(r.repeats)} interleaved repeats{' (CPU time)' if r.clock == 'cpu' else ''}: measured {measured['median']:.2f}x "
                     f"[{measured['min']:.2f}, {measured['max']:.2f}]   predicted {predicted['median']:.2f}x "
                     f"[{predicted['min']:.2f}, {predicted['max']:.2f}]   model error {100 * data['model_error']:+.0f}%"
                     + (f"   load average {min(loads):.1f}-{max(loads):.1f}" if loads else "")
                     + (f"   compiled, warm-up {r.warmup_seconds:.1f} s" if r.options.compile else ""))
    if r.roofline is not None:
        roof = r.roofline
        lines.append(f"  roofline: {roof.weight_bytes / 1e6:.1f} MB of weights a pass, bandwidth {roof.bandwidth / 1e9:.1f} GB/s "
                     f"(copy loop) -> floor {roof.floor_tokens_per_s:.1f} tok/s; plain decoding at {100 * roof.fraction:.0f}% of it")
    if r.profile is not None:
        parts = r.profile.to_json()["ms_per_round"]
        lines.append("  ms per round  " + "   ".join(f"{k} {v:.2f}" for k, v in parts.items()))
    return "\n".join(lines)


def _k_table(name: str, costs, gammas, clock: str) -> str:
    lines = [f"pair {name}: costs in target 1-token passes ({costs.t1 * 1e3:.1f} ms{' of CPU time' if clock == 'cpu' else ''}), "
             f"cache at {costs.context} tokens, o_plain {costs.o_plain:.3f}",
             "  gamma   k(gamma) in a round   k alone   c      o_round"]
    lines += [f"  {g:>5}   {costs.k(g):19.2f}   {costs.k_alone(g):7.2f}   {costs.c(g):.3f}  {costs.o_round(g):.3f}" for g in gammas]
    return "\n".join(lines)


def _checked_inputs(args: argparse.Namespace):
    """The pair names parsed and the prompts read, every mistake named before torch is imported."""
    from specmath.lm.pair_names import check_device, parse_pair_name
    from specmath.lm.workloads import read_prompts_file

    pairs = [parse_pair_name(name) for name in args.pair or BENCH_PAIRS]
    if args.device is not None:
        check_device(args.device, "--device")
        for pair in pairs:
            pair.check_device(args.device)
    check_clock(args.clock, args.threads, args.device)
    if args.pack_weights and args.dtype != "bfloat16":
        raise InvalidArgument(f"--pack-weights packs bfloat16 models: add --dtype bfloat16 (got --dtype {args.dtype})")
    texts = read_prompts_file(args.prompts_file) if args.prompts_file else None
    return pairs, texts


def run(args: argparse.Namespace) -> int:
    pairs, texts = _checked_inputs(args)
    import torch

    from specmath.lm.bench import DecodeOptions, bench_pair
    from specmath.lm.cost_measure import GAMMAS, measure_costs, workload_context
    from specmath.lm.drafts import compiles_by_default
    from specmath.lm.pairs import load_named_pair
    from specmath.lm.stopwatch import timed_by
    from specmath.sampling_options import SamplingOptions

    if args.device is not None and args.device.startswith("cuda") and not torch.cuda.is_available():
        raise InvalidArgument(f"--device {args.device}: torch finds no CUDA device here; use --device cpu")
    if args.threads:
        torch.set_num_threads(args.threads)
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    auto = args.gamma == GAMMA_AUTO  # the calibration sets gamma
    options = DecodeOptions(gamma=DecodeOptions.gamma if auto else args.gamma,
                            sampling=SamplingOptions(args.temperature, args.top_k, args.top_p), verify=args.verify,
                            draft_threshold=args.draft_threshold, seed=args.seed)  # compile: per pair, below
    count = args.prompts or (None if texts else 4)
    results = []
    for name in pairs:
        pair = load_named_pair(name.text, dtype=getattr(torch, args.dtype), device=device, texts=texts,
                               pack_weights=args.pack_weights, lean=args.lean)
        prompts = pair.prompts[:count]
        compile_pair = args.compile if args.compile is not None else compiles_by_default(device, pair.target, pair.draft)
        options = replace(options, compile=compile_pair)
        if args.k_table:
            with timed_by(args.clock):
                costs = measure_costs(pair.target, pair.draft, prompts[0], GAMMAS, options=options,
                                      context=workload_context(prompts, args.max_new_tokens))
            results.append({"pair": pair.name, "sampling": {"temperature": args.temperature}, "clock": args.clock,
                            **costs.to_json(GAMMAS)})
            if not args.json:
                print(_k_table(pair.name, costs, GAMMAS, args.clock), flush=True)
            continue
        result = bench_pair(pair, prompts, args.max_new_tokens, options, calibrate_gamma=auto, hf=not args.no_hf,
                            progress=not args.json, profile=args.profile, repeats=args.repeats, clock=args.clock)
        results.append(result.to_json())
        if not args.json:
            print(_table(result), flush=True)
    if args.json:
        print(json.dumps(results, indent=2))
    return 0
