"""The real-model goals, measured in one command: every row of the README's timing table.

    PYTHONPATH=. python benchmarks/lm_goals.py --json lm_goals.json [--threads 2] [--runs 5] [--quick]
        [--dtype bfloat16 --pack-weights] [--lean all] [--bundled-lean draft] [--verify block]

Rows (each one ``specmath.lm.bench.bench_pair`` run: plain, speculative and HF assisted decoding
interleaved per prompt, the measured-cost speedup model beside the measured speedup):

1. SmolLM2-135M-Instruct + prompt lookup on the copy-heavy edit set (``data/prompts/edit.jsonl``),
   T = 0 (greedy), gamma chosen by ``--gamma auto``; goal >= 1.5x over plain, >= 1.2x over HF prompt lookup;
2. SmolLM2 at T = 1 on the edit set with each offline draft (int8 self-draft, prompt lookup, prompt
   lookup with the n-gram table of ``scripts/build_smollm2_ngram.py`` where lookup finds no match, the
   early-exit draft trained by ``scripts/train_smollm2_draft.py``; the last two also on the open set);
   goal: the best >= 1.2x over plain and over HF assisted generation / HF prompt lookup with the same
   draft (HF has no n-gram table: its counterpart of lookup + table is prompt lookup alone);
3. SmolLM2 + prompt lookup on the open-ended set (``data/prompts/open.jsonl``), T = 0: the contrast;
4. the bundled pair, T = 1, gamma from ``--bundled-gamma`` (default auto: each run calibrates), ``--runs``
   consecutive runs; goal >= 2x over plain in each.

``--lean`` / ``--bundled-lean`` run models through ``specmath.lm.lean_llama`` (the same Llama forward
without HF's per-call wrapper): ``draft`` the model draft only (plain decoding and verification run the
target as loaded), ``all`` the target too (plain and speculative decoding then both run the lean
target); HF assisted generation always runs the models as loaded. ``--verify block`` verifies every
drafted block jointly (``specmath.lm.block_verify``, Sun et al. 2024); HF verifies token by token.

Absolute tokens/s depend on the machine and its load; the ratios are what the goals name. The JSON
holds every run (not only the best), the goals with their thresholds, and the machine.
Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import torch

from specmath.choices import GAMMA_AUTO, LEAN, MEASURED_DTYPES, VERIFY
from specmath.lm.bench import DecodeOptions, bench_pair
from specmath.lm.pairs import load_named_pair
from specmath.lm.workloads import read_prompts_file, shipped_prompts_file
from specmath.sampling_options import SamplingOptions


def _row(pair_name: str, prompt_set: str | None, temperature: float, gamma, max_new_tokens: int, prompts: int | None,
         dtype: torch.dtype, pack: bool, lean: str = "none", verify: str = "token", hf: bool = True) -> dict:
    texts = read_prompts_file(shipped_prompts_file(prompt_set)) if prompt_set else None
    pair = load_named_pair(pair_name, dtype=dtype, texts=texts, pack_weights=pack, lean=lean)
    start = time.perf_counter()
    r = bench_pair(pair, prompts=pair.prompts[:prompts] if prompts else None, max_new_tokens=max_new_tokens, gamma=gamma,
                   sampling=SamplingOptions(temperature), options=DecodeOptions(verify=verify), hf=hf, progress=False)
    row = {**r.to_json(), "prompt_set": prompt_set or "pair's own", "lean": lean, "wall_s": time.perf_counter() - start}
    print(f"{r.pair:>16} {row['prompt_set']:>10} T={temperature} gamma={r.gamma} {verify}: measured {r.measured_speedup_vs_plain:.2f}x, "
          f"predicted {r.predicted_speedup:.2f}x (k=1: {r.predicted_speedup_k1:.2f}x), vs HF "
          f"{r.speedup_vs_hf_assisted or float('nan'):.2f}x, alpha {r.alpha:.2f}, k {r.model.k:.2f}, c {r.model.c:.3f}",
          flush=True)
    return row


def _goal(name: str, value: float, threshold: float) -> dict:
    return {"goal": name, "measured": value, "threshold": threshold, "met": bool(value >= threshold)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default="lm_goals.json", help="output file")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    parser.add_argument("--dtype", default="float32", choices=MEASURED_DTYPES, help="of the SmolLM2 rows (default float32; the bundled pair always runs float32)")
    parser.add_argument("--pack-weights", action="store_true",
                        help="pack SmolLM2's Linear weights for oneDNN (bfloat16 only; specmath.lm.packed_linear); skips the int8 row")
    parser.add_argument("--lean", default="none", choices=LEAN,
                        help="SmolLM2 rows: run the model draft ('draft') or target and draft ('all') through specmath.lm.lean_llama")
    parser.add_argument("--bundled-lean", default="none", choices=LEAN, help="the same for the bundled runs")
    parser.add_argument("--verify", default="token", choices=VERIFY,
                        help="speculative decoding's verifier in every row: token by token (default) or block (Sun et al. 2024)")
    parser.add_argument("--runs", type=int, default=5, help="consecutive runs of the bundled pair")
    parser.add_argument("--max-new-tokens", type=int, default=128, help="per SmolLM2 answer (answers stop at eos)")
    parser.add_argument("--bundled-gamma", default=GAMMA_AUTO, type=lambda v: v if v == GAMMA_AUTO else int(v),
                        help="gamma of the bundled runs: an int, or auto (each run calibrates; default)")
    parser.add_argument("--rows", nargs="*", default=None, help="only these rows (default: all; 'bundled' for the bundled runs)")
    parser.add_argument("--prompts", type=int, default=None, help="only the first N prompts of each set (default: all)")
    parser.add_argument("--quick", action="store_true", help="3 prompts per set, 2 bundled runs: checks the command, not the goals")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    prompts = 3 if args.quick else args.prompts
    runs = 2 if args.quick else args.runs
    n = args.max_new_tokens
    start = time.perf_counter()
    plan = {
        "smollm2_lookup_edit_T0": ("smollm2:lookup", "edit", 0.0, "auto"),
        "smollm2_int8_edit_T1": ("smollm2:int8", "edit", 1.0, 4),
        "smollm2_lookup_edit_T1": ("smollm2:lookup", "edit", 1.0, "auto"),
        "smollm2_lookupngram_edit_T1": ("smollm2:lookup+ngram", "edit", 1.0, "auto"),
        "smollm2_lookupngram_open_T1": ("smollm2:lookup+ngram", "open", 1.0, "auto"),
        "smollm2_trained_edit_T1": ("smollm2:trained", "edit", 1.0, "auto"),
        "smollm2_trained_open_T1": ("smollm2:trained", "open", 1.0, "auto"),
        "smollm2_lookup_open_T0": ("smollm2:lookup", "open", 0.0, "auto"),
    }
    chosen = args.rows or [*plan, "bundled"]
    unknown = set(chosen) - {*plan, "bundled"}
    if unknown:
        raise SystemExit(f"unknown rows {sorted(unknown)}: choose from {[*plan, 'bundled']}")
    dtype = getattr(torch, args.dtype)
    if args.pack_weights:  # an int8 dynamic-quantised draft is a float32 model: nothing to pack
        plan.pop("smollm2_int8_edit_T1")
    rows = {key: _row(*plan[key], n, prompts, dtype, args.pack_weights, args.lean, args.verify) for key in plan if key in chosen}
    # the bundled pair stays float32: its matrices are 64 wide, too small for packing to pay (a packed
    # bfloat16 pass takes about twice the float32 one on this CPU)
    bundled = ([_row("bundled", None, 1.0, args.bundled_gamma, 64, None, torch.float32, False, args.bundled_lean, args.verify)
                for _ in range(runs)]
               if "bundled" in chosen else [])
    goals = []
    if "smollm2_lookup_edit_T0" in rows:
        r = rows["smollm2_lookup_edit_T0"]
        goals += [_goal("SmolLM2 + prompt lookup, edit set, T = 0: speedup over plain", r["measured_speedup_vs_plain"], 1.5),
                  _goal("SmolLM2 + prompt lookup, edit set, T = 0: speedup over HF prompt lookup", r["speedup_vs_hf_assisted"], 1.2)]
    t1_rows = [k for k in ("smollm2_int8_edit_T1", "smollm2_lookup_edit_T1", "smollm2_lookupngram_edit_T1",
                           "smollm2_trained_edit_T1") if k in rows]
    if t1_rows:
        t1 = max(t1_rows, key=lambda k: rows[k]["measured_speedup_vs_plain"])
        goals += [_goal(f"SmolLM2, T = 1, best offline draft ({rows[t1]['pair']}): speedup over plain",
                        rows[t1]["measured_speedup_vs_plain"], 1.2),
                  _goal(f"SmolLM2, T = 1, {rows[t1]['pair']}: speedup over HF with the same draft", rows[t1]["speedup_vs_hf_assisted"], 1.2)]
    if bundled:
        goals.append(_goal(f"bundled pair: speedup over plain in each of {runs} consecutive runs",
                           min(r["measured_speedup_vs_plain"] for r in bundled), 2.0))
    model_errors = [abs(r["predicted_speedup"] / r["measured_speedup_vs_plain"] - 1) for r in [*rows.values(), *bundled]]
    report = {
        "machine": {"processor": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
                    "threads": torch.get_num_threads(), "torch": torch.__version__, "dtype": args.dtype,
                    "packed_weights": args.pack_weights, "lean": args.lean, "bundled_lean": args.bundled_lean,
                    "verify": args.verify,
                    "load_average_at_end": os.getloadavg()},
        "rows": rows,
        "bundled_runs": bundled,
        "bundled_speedups": [r["measured_speedup_vs_plain"] for r in bundled],
        "goals": goals,
        "model_relative_error_max": max(model_errors),
        "seconds": time.perf_counter() - start,
    }
    with open(args.json, "w") as f:
        json.dump(report, f, indent=2)
    for g in goals:
        print(f"{'MET ' if g['met'] else 'MISSED'} {g['goal']}: {g['measured']:.2f}x (goal {g['threshold']}x)")
    print(f"bundled runs: {', '.join(f'{s:.2f}x' for s in report['bundled_speedups']) or 'none'}; largest model error "
          f"{100 * report['model_relative_error_max']:.0f}%; wrote {args.json} in {report['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
