"""Train the bundled character-level draft/target pair (specmath/lm/bundled/) on the FSF licence texts.

Run from the repository root (about 10 minutes on 2 CPU cores)::

    .venv/bin/python scripts/train_bundled_pair.py --out specmath/lm/bundled

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)).

Why this shape. At batch 1 on a CPU the cost of one forward pass of a tiny model is mostly per-layer
overhead, so the draft must have far fewer layers than the target for the cost ratio
c = t_draft / t_target to be small (a deep target of 16 layers, a draft of 1 layer); and it must agree
with the target often, so the draft is trained by distillation on the target's soft predictions
(Hinton et al. 2015) and, at the end, on total variation directly, since alpha = 1 - TV(p, q)
(Zhou et al. 2024, DistillSpec). The speedup model of Leviathan et al. (2023), eq. (1) and Thm 3.8:
speedup = (1 - alpha^(gamma+1)) / ((1 - alpha)(gamma c + 1)).

Steps: (1) a fixed character tokenizer (PreTrainedTokenizerFast, WordLevel over 96 printable
characters + 4 specials); (2) target and draft trained together, the draft on the target's current
soft labels; (3) the draft alone on the final target (KL + TV); (4) both saved as fp16 safetensors
with the tokenizer beside; (5) c, alpha and the predicted speedups measured on the saved weights,
written to metrics.json.

References: Leviathan, Kalman, Matias 2023 (arXiv:2211.17192); Chen et al. 2023 (arXiv:2302.01318);
Zhou et al. 2024, DistillSpec (arXiv:2310.08461); karpathy/nanoGPT (char-level training loop).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

REPO = Path(__file__).resolve().parent.parent
CORPUS_DIR = REPO / "data" / "fsf-licenses"
CORPUS_FILES = ["GPL-1", "GPL-2", "GPL-3", "LGPL-2", "LGPL-2.1", "LGPL-3", "GFDL-1.2", "GFDL-1.3"]
SPECIALS = ["<pad>", "<unk>", "<bos>", "<eos>"]
HELD_OUT_FRACTION = 0.1
GREEDY_PROMPT = "This License applies to "


def char_tokenizer():
    """A character tokenizer transformers loads offline: ids 0-3 specials, then '\\n' and chr(32)..chr(126)."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {token: i for i, token in enumerate(SPECIALS + ["\n"] + [chr(i) for i in range(32, 127)])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.normalizer = normalizers.Sequence([normalizers.Replace("\x0c", "\n"), normalizers.Replace("\t", "    ")])
    # every character is its own word; decoding concatenates them back
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tok.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", unk_token="<unk>", bos_token="<bos>", eos_token="<eos>"
    )


def load_corpus(tokenizer) -> tuple[torch.Tensor, torch.Tensor]:
    """(train ids, held-out ids): the last 10% of each licence file is held out, the rest is trained on."""
    train, held = [], []
    for name in CORPUS_FILES:
        path = CORPUS_DIR / f"{name}.txt"
        if not path.is_file():
            raise ValueError(f"corpus file missing: {path}")
        ids = tokenizer(path.read_text(encoding="ascii"), add_special_tokens=False).input_ids
        if tokenizer.unk_token_id in ids:
            raise ValueError(f"{path} has characters outside the tokenizer's vocabulary")
        cut = int(len(ids) * (1 - HELD_OUT_FRACTION))
        train += ids[:cut] + tokenizer("\n\n").input_ids
        held += ids[cut:] + tokenizer("\n\n").input_ids
    return torch.tensor(train), torch.tensor(held)


def llama(vocab: int, layers: int, hidden: int, intermediate: int, heads: int):
    """A LlamaForCausalLM with tied input/output embeddings (standard HF class: loads with from_pretrained)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=vocab, hidden_size=hidden, intermediate_size=intermediate, num_hidden_layers=layers,
        num_attention_heads=heads, num_key_value_heads=heads, max_position_embeddings=2048,
        tie_word_embeddings=True, pad_token_id=0, bos_token_id=2, eos_token_id=3,
    )
    return LlamaForCausalLM(config)


def batch(ids: torch.Tensor, size: int, length: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """size random windows of length+1 characters: inputs (B, T) and next-character labels (B, T)."""
    starts = torch.randint(0, len(ids) - length - 1, (size,), generator=gen)
    windows = torch.stack([ids[s : s + length + 1] for s in starts.tolist()])
    return windows[:, :-1], windows[:, 1:]


def learning_rate(step: int, total: int, peak: float, warmup: int = 30) -> float:
    """Linear warm-up, then cosine decay to peak/10."""
    if step < warmup:
        return peak * (step + 1) / warmup
    t = (step - warmup) / max(1, total - warmup)
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t)))


def distill_loss(draft_logits: torch.Tensor, p: torch.Tensor, tv_weight: float) -> torch.Tensor:
    """KL(p || q) (soft cross-entropy up to a constant) + tv_weight * TV(p, q); alpha = 1 - TV."""
    log_q = F.log_softmax(draft_logits, dim=-1)
    soft_ce = -(p * log_q).sum(-1).mean()
    if tv_weight == 0:
        return soft_ce
    # TV(p, q) = 1/2 sum_x |p(x) - q(x)| = 1 - sum_x min(p(x), q(x))
    tv = 0.5 * (p - log_q.exp()).abs().sum(-1).mean()
    return soft_ce + tv_weight * tv


def train(args, target, draft, train_ids, held_ids) -> dict:
    """Phase 1: target on data, draft on the target's soft labels; phase 2: draft alone on the final target."""
    gen = torch.Generator().manual_seed(args.seed)
    opt_t = torch.optim.AdamW(target.parameters(), lr=args.lr, weight_decay=0.1, betas=(0.9, 0.95))
    opt_d = torch.optim.AdamW(draft.parameters(), lr=args.lr, weight_decay=0.0, betas=(0.9, 0.95))
    total_d = args.target_steps + args.distill_steps
    log = []
    t0, cpu0 = time.perf_counter(), time.process_time()
    for step in range(total_d):
        joint = step < args.target_steps
        x, y = batch(train_ids, args.batch, args.seq, gen)
        for group in opt_d.param_groups:
            group["lr"] = learning_rate(step, total_d, args.lr)
        if joint:
            for group in opt_t.param_groups:
                group["lr"] = learning_rate(step, args.target_steps, args.lr)
            target.train()
            logits_t = target(x).logits  # (B, T, V)
            loss_t = F.cross_entropy(logits_t.flatten(0, 1), y.flatten())
            opt_t.zero_grad(set_to_none=True)
            loss_t.backward()
            torch.nn.utils.clip_grad_norm_(target.parameters(), 1.0)
            opt_t.step()
            p = F.softmax(logits_t.detach(), dim=-1)
        else:
            target.eval()
            with torch.no_grad():
                p = F.softmax(target(x).logits, dim=-1)
            loss_t = torch.tensor(float("nan"))
        loss_d = distill_loss(draft(x).logits, p, 0.0 if joint else args.tv_weight)
        opt_d.zero_grad(set_to_none=True)
        loss_d.backward()
        torch.nn.utils.clip_grad_norm_(draft.parameters(), 1.0)
        opt_d.step()
        if step % args.log_every == 0 or step == total_d - 1:
            row = {"step": step, "target_loss": round(loss_t.item(), 4), "draft_loss": round(loss_d.item(), 4),
                   "seconds": round(time.perf_counter() - t0, 1), "cpu_seconds": round(time.process_time() - cpu0, 1)}
            log.append(row)
            print(json.dumps(row), flush=True)
    return {"train_seconds": round(time.perf_counter() - t0, 1), "train_cpu_seconds": round(time.process_time() - cpu0, 1),
            "log": log}


@torch.no_grad()
def held_out_metrics(target, draft, held_ids: torch.Tensor, seq: int) -> dict:
    """Per-character cross-entropy of each model and alpha = E[sum_x min(p(x), q(x))] over held-out contexts."""
    target.eval(), draft.eval()
    n = (len(held_ids) - 1) // seq
    x = held_ids[: n * seq].view(n, seq)
    y = held_ids[1 : n * seq + 1].view(n, seq)
    lt, ld = target(x).logits.float(), draft(x).logits.float()
    p, q = F.softmax(lt, -1), F.softmax(ld, -1)
    return {
        "held_out_chars": n * seq,
        "target_nats_per_char": F.cross_entropy(lt.flatten(0, 1), y.flatten()).item(),
        "draft_nats_per_char": F.cross_entropy(ld.flatten(0, 1), y.flatten()).item(),
        # alpha = sum_x min(p(x), q(x)), averaged over every held-out context
        "alpha_held_out": torch.minimum(p, q).sum(-1).mean().item(),
    }


@torch.no_grad()
def alpha_on_target_samples(target, draft, held_ids: torch.Tensor, n: int, prompt: int, new: int, seed: int) -> float:
    """alpha along the target's own T = 1 continuations of held-out prompts: the contexts speculative decoding sees."""
    from transformers import DynamicCache

    gen = torch.Generator().manual_seed(seed)
    starts = torch.randint(0, len(held_ids) - prompt, (n,), generator=gen)
    ids = torch.stack([held_ids[s : s + prompt] for s in starts.tolist()])  # (n, prompt)
    cache = DynamicCache(config=target.config)
    logits = target(ids, past_key_values=cache, use_cache=True).logits[:, -1]
    for _ in range(new):  # ancestral sampling from p at T = 1, with a KV cache
        token = torch.multinomial(F.softmax(logits.float(), -1), 1, generator=gen)  # (n, 1)
        ids = torch.cat([ids, token], dim=1)
        logits = target(token, past_key_values=cache, use_cache=True).logits[:, -1]
    p = F.softmax(target(ids).logits[:, prompt - 1 : -1].float(), -1)
    q = F.softmax(draft(ids).logits[:, prompt - 1 : -1].float(), -1)
    return torch.minimum(p, q).sum(-1).mean().item()


@torch.no_grad()
def greedy_continuation(model, tokenizer, prompt: str, new: int) -> str:
    """argmax_x p(x | context), appended `new` times (no cache: the reference the tests compare with)."""
    ids = tokenizer(prompt, return_tensors="pt", add_special_tokens=False).input_ids  # (1, T)
    for _ in range(new):
        ids = torch.cat([ids, model(ids).logits[:, -1:].argmax(-1)], dim=1)
    return tokenizer.decode(ids[0, -new:])


@torch.no_grad()
def cost_ratio(target, draft, prompt: torch.Tensor, repeats: int) -> dict:
    """c = median time of a 1-token draft forward with KV cache / the same for the target (interleaved)."""
    from transformers import DynamicCache

    target.eval(), draft.eval()
    times: dict[str, list[float]] = {"target": [], "draft": []}
    caches = {}
    for name, model in (("target", target), ("draft", draft)):
        caches[name] = DynamicCache(config=model.config)
        model(prompt, past_key_values=caches[name], use_cache=True)
    token = prompt[:, -1:]
    for i in range(repeats + 10):
        for name, model in (("target", target), ("draft", draft)):
            t0 = time.perf_counter()
            model(token, past_key_values=caches[name], use_cache=True)
            if i >= 10:  # the first calls warm up the allocator
                times[name].append(time.perf_counter() - t0)
    t_target, t_draft = statistics.median(times["target"]), statistics.median(times["draft"])
    return {"target_ms": 1e3 * t_target, "draft_ms": 1e3 * t_draft, "c": t_draft / t_target}


def predicted_speedup(alpha: float, gamma: int, c: float) -> float:
    """Leviathan et al. eq. (1)/Thm 3.8: (1 - alpha^(gamma+1)) / ((1 - alpha)(gamma c + 1))."""
    return (1 - alpha ** (gamma + 1)) / ((1 - alpha) * (gamma * c + 1))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=REPO / "specmath" / "lm" / "bundled")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--target-steps", type=int, default=500, help="steps of phase 1 (target + draft)")
    ap.add_argument("--distill-steps", type=int, default=250, help="steps of phase 2 (draft alone)")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--tv-weight", type=float, default=1.0)
    ap.add_argument("--target-layers", type=int, default=16)
    ap.add_argument("--target-hidden", type=int, default=64)
    ap.add_argument("--draft-hidden", type=int, default=192)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--timing-repeats", type=int, default=300)
    ap.add_argument("--alpha-samples", type=int, default=32, help="target continuations for alpha_target_samples")
    ap.add_argument("--log-every", type=int, default=25)
    args = ap.parse_args(argv)
    if min(args.target_steps, args.batch, args.seq, args.timing_repeats, args.alpha_samples) < 1:
        ap.error("--target-steps, --batch, --seq, --timing-repeats and --alpha-samples must be positive")
    if args.distill_steps < 0:
        ap.error("--distill-steps must be >= 0")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    tokenizer = char_tokenizer()
    train_ids, held_ids = load_corpus(tokenizer)
    vocab = len(tokenizer)
    target = llama(vocab, args.target_layers, args.target_hidden, 3 * args.target_hidden, heads=4)
    draft = llama(vocab, 1, args.draft_hidden, 3 * args.draft_hidden, heads=4)
    print(f"corpus: {len(train_ids)} train / {len(held_ids)} held-out chars, vocab {vocab}; "
          f"target {sum(p.numel() for p in target.parameters())} params, "
          f"draft {sum(p.numel() for p in draft.parameters())} params", flush=True)
    report = train(args, target, draft, train_ids, held_ids)

    # fp16 storage halves the files; the measurements below use the saved (rounded) weights
    for name, model in (("target", target), ("draft", draft)):
        model.to(torch.float16).save_pretrained(args.out / name, safe_serialization=True)
        tokenizer.save_pretrained(args.out / name)
    from transformers import AutoModelForCausalLM

    target, draft = (AutoModelForCausalLM.from_pretrained(args.out / n, dtype=torch.float32, use_safetensors=True)
                     for n in ("target", "draft"))
    metrics = held_out_metrics(target, draft, held_ids, args.seq)
    metrics["alpha_target_samples"] = alpha_on_target_samples(target, draft, held_ids, args.alpha_samples, 32, 64, args.seed)
    metrics["greedy"] = {"prompt": GREEDY_PROMPT, "target": greedy_continuation(target, tokenizer, GREEDY_PROMPT, 40),
                         "draft": greedy_continuation(draft, tokenizer, GREEDY_PROMPT, 40)}
    metrics.update(cost_ratio(target, draft, held_ids[:64].view(1, -1), args.timing_repeats))
    metrics["predicted_speedup"] = {
        f"gamma={g}": {k: predicted_speedup(metrics[k], g, metrics["c"]) for k in ("alpha_held_out", "alpha_target_samples")}
        for g in range(2, 7)
    }
    report.update(metrics=metrics, args={k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
                  torch=torch.__version__, threads=torch.get_num_threads())
    (args.out / "metrics.json").write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(metrics, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
