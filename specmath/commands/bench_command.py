"""``specmath bench [--pair NAME] [--prompts-file FILE] [--gamma N|auto] [--temperature T] [--k-table] [--json]``.

One run, same models, prompts and seed: tokens/s of plain decoding, specmath's speculative decoding
and Hugging Face ``generate(assistant_model=...)`` (or ``prompt_lookup_num_tokens``); acceptance per
draft position alpha_i, the measured costs c (draft step), k(gamma) (target pass over gamma + 1 tokens
/ over 1 token) and overheads, and the predicted speedup twice, with k = 1 (verification free, the
premise of Leviathan et al.) and with the measured costs (``specmath.lm.timing``), next to the
measured one. ``--k-table`` prints k(gamma) (in a round, and with the target alone), c and the round
overhead for gamma 1..8 without decoding.
``--prompts-file``: JSON Lines, one user message per line (chat template applied for chat models).
``--verify block`` verifies each drafted block jointly (``specmath.lm.block_verify``). Imports torch only when run. Notation: p target, q draft, gamma drafts per round, alpha = sum min(p, q).
"""

from __future__ import annotations

import argparse
import json


def _gamma(value: str) -> int | str:
    if value == "auto":
        return value
    try:
        gamma = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"gamma must be an integer >= 1 or 'auto', got {value!r}") from None
    if gamma < 1:
        raise argparse.ArgumentTypeError(f"gamma must be an integer >= 1 or 'auto', got {value!r}")
    return gamma


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pair", action="append", help="bundled, smollm2[:int8|lookup|skipK|trained[=PATH]|ngram[=PATH]|lookup+ngram[=PATH]] or TARGET,DRAFT (repeatable; default: bundled and smollm2)")
    parser.add_argument("--gamma", type=_gamma, default=4, help="draft tokens per round, or 'auto' (a short calibration picks it; default 4)")
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--prompts-file", default=None, help="JSON Lines file, one JSON string (user message) per line")
    parser.add_argument("--prompts", type=int, default=None, help="time only the first N prompts (default: 4 of the pair's own, all of a file)")
    parser.add_argument("--temperature", type=float, default=1.0, help="0 = greedy")
    parser.add_argument("--top-k", type=int, default=None)
    parser.add_argument("--top-p", type=float, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default=None, help="cpu or cuda (default: cuda if available)")
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    parser.add_argument("--pack-weights", action="store_true",
                        help="pack the Linear weights once for oneDNN (needs --dtype bfloat16 on a CPU with AMX or AVX-512 BF16; "
                             "specmath.lm.packed_linear): k(gamma) ~ 1; plain, speculative and HF decoding all run the packed models")
    # pairs.LEAN_CHOICES, written out: importing specmath.lm.pairs here would import torch for --help
    parser.add_argument("--lean", default="none", choices=["none", "draft", "all"],
                        help="run the model draft ('draft') or the target too ('all') through specmath.lm.lean_llama, the same Llama "
                             "forward without HF's per-call wrapper; HF assisted generation runs the models as loaded")
    # block_verify.VERIFIERS, written out for the same reason
    parser.add_argument("--verify", default="token", choices=["token", "block"],
                        help="how speculative decoding verifies a drafted block: token by token (Leviathan et al.; default) or "
                             "jointly ('block', Sun et al. 2024: never fewer accepted tokens, as lossless); HF always verifies token by token")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--no-hf", action="store_true", help="skip HF assisted generation")
    parser.add_argument("--k-table", action="store_true", help="print k(gamma), c and o_round for gamma 1..8 (no decoding runs)")
    parser.add_argument("--draft-threshold", type=float, default=0.0,
                        help="a model draft stops a row when max_x q(x) falls below this (lossless: depends on q only)")
    parser.add_argument("--profile", action="store_true",
                        help="also time the parts of a round (draft, target, accept/reject, cache, other) and print ms per round")
    parser.add_argument("--json", action="store_true", help="print one JSON list instead of a table")


def _table(r: dict) -> str:
    rate = r["tokens_per_s"]
    alphas = " ".join("-" if a is None else f"{a:.2f}" for a in r["acceptance_by_position"])
    lines = [
        f"pair {r['pair']} on {r['device']} ({r['dtype']}, {r['threads']} threads), gamma={r['gamma']}, "
        f"{r['prompts']} prompts x <= {r['max_new_tokens']} tokens, T={r['sampling']['temperature']}, {r['verify']} verification",
        f"  tokens/s   plain {rate['plain']:.1f}   speculative {rate['speculative']:.1f}   HF assisted "
        + ("-" if rate["hf_assisted"] is None else f"{rate['hf_assisted']:.1f}"),
        f"  alpha {r['alpha']:.3f}   alpha_i {alphas}   tokens/round {r['mean_tokens_per_round']:.2f} (model {r['predicted_tokens_per_round']:.2f})",
        f"  rounds: {r['drafts_per_round']:.2f} drafts each; continuation a_i "
        + " ".join(f"{a:.2f}" for a in r["continuation_by_position"]),
        f"  costs (target 1-token pass = 1, mean over the rounds): c {r['cost_ratio_c']:.3f}   k {r['k']:.2f}   o_round {r['o_round']:.3f}"
        f"   o_plain {r['o_plain']:.3f}   prefill {r['prefill_units']['target']:.1f} + draft {r['prefill_units']['draft']:.1f}",
        f"  speedup   predicted k=1 {r['predicted_speedup_k1']:.2f}x   predicted measured-cost {r['predicted_speedup']:.2f}x"
        f"   measured {r['measured_speedup_vs_plain']:.2f}x"
        + (f"   vs HF assisted {r['speedup_vs_hf_assisted']:.2f}x" if r["speedup_vs_hf_assisted"] else ""),
    ]
    return "\n".join(lines)


def _k_table(name: str, costs: dict) -> str:
    lines = [f"pair {name}: costs in target 1-token passes ({costs['target_1_token_s'] * 1e3:.1f} ms), "
             f"cache at {costs['context_tokens']} tokens, o_plain {costs['o_plain']:.3f}",
             "  gamma   k(gamma) in a round   k alone   c      o_round"]
    lines += [f"  {g:>5}   {costs['k'][g]:19.2f}   {costs['k_alone'][g]:7.2f}   {costs['c'][g]:.3f}  {costs['o_round'][g]:.3f}"
              for g in costs["k"]]
    return "\n".join(lines)


def _profile(pair, prompts, args, sampling, gamma: int) -> dict:
    """Milliseconds per round of each part of ``speculative_generate`` (profile=True), over the prompts."""
    from specmath.lm.block_verify import verifier
    from specmath.lm.speculative_decode import PROFILE_PARTS, speculative_generate

    seconds = dict.fromkeys(PROFILE_PARTS, 0.0)
    rounds = 0
    for i, prompt in enumerate(prompts):
        gen = speculative_generate(pair.target, pair.draft, [prompt], args.max_new_tokens, gamma, sampling, args.seed + i,
                                   pair.eos_token_id, pair.vocab_size, draft_threshold=args.draft_threshold, profile=True,
                                   accept_reject=verifier(args.verify))
        rounds += gen.rounds
        for part in PROFILE_PARTS:
            seconds[part] += gen.profile[part]
    per_round = {part: 1e3 * seconds[part] / max(rounds, 1) for part in PROFILE_PARTS if part != "prefill"}
    return {"rounds": rounds, "prefill_ms": 1e3 * seconds["prefill"], "ms_per_round": per_round}


def run(args: argparse.Namespace) -> int:
    import torch

    from specmath.lm.block_verify import verifier
    from specmath.lm.pairs import load_named_pair
    from specmath.lm.timing import GAMMAS, bench_pair, measure_costs
    from specmath.lm.warps import Sampling
    from specmath.lm.workloads import read_prompts_file

    if args.threads:
        torch.set_num_threads(args.threads)
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    dtype = getattr(torch, args.dtype)
    sampling = Sampling(args.temperature, args.top_k, args.top_p)
    texts = read_prompts_file(args.prompts_file) if args.prompts_file else None
    count = args.prompts or (None if texts else 4)
    results = []
    for name in args.pair or ["bundled", "smollm2"]:
        pair = load_named_pair(name, dtype=dtype, device=device, texts=texts, pack_weights=args.pack_weights,
                               lean=args.lean)
        prompts = pair.prompts[:count]
        if args.k_table:
            context = round(sum(map(len, prompts)) / len(prompts)) + args.max_new_tokens // 2
            costs = measure_costs(pair.target, pair.draft, prompts[0], GAMMAS, sampling, context,
                                  verify=verifier(args.verify)).to_json(GAMMAS)
            results.append({"pair": pair.name, "sampling": {"temperature": args.temperature}, **costs})
            if not args.json:
                print(_k_table(pair.name, costs), flush=True)
            continue
        options = {"draft_threshold": args.draft_threshold} if args.draft_threshold else None
        results.append(bench_pair(pair.name, pair.target, pair.draft, prompts, args.max_new_tokens, args.gamma,
                                  sampling, args.seed, pair.vocab_size, hf=not args.no_hf, progress=not args.json,
                                  eos_token_id=pair.eos_token_id, decode_options=options, verify=args.verify))
        if args.profile:
            results[-1]["profile"] = _profile(pair, prompts, args, sampling, results[-1]["gamma"])
        if not args.json:
            print(_table(results[-1]), flush=True)
            if args.profile:
                parts = results[-1]["profile"]["ms_per_round"]
                print("  ms per round  " + "   ".join(f"{k} {v:.2f}" for k, v in parts.items()), flush=True)
    if args.json:
        print(json.dumps(results, indent=2))
    return 0
