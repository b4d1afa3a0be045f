"""Train the bundled character-level draft/target pair (specmath/lm/bundled/) on the FSF licence texts.

Run from the repository root (about 10 minutes of one CPU core; the measured wall and CPU seconds of
the committed run are in specmath/lm/bundled/metrics.json and README.md)::

    .venv/bin/python scripts/train_bundled_pair.py --out specmath/lm/bundled

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)).

Why this shape. At batch 1 on a CPU the cost of one forward pass of a tiny model is mostly per-layer
overhead, so the draft must have far fewer layers than the target for the cost ratio
c = t_draft / t_target to be small (a deep, narrow target of 32 layers of width 64; a draft of 1 layer of width 256); and
it must agree with the target often, so the draft is distilled from the target's soft predictions
(Hinton et al. 2015), half the time on the target's own samples, and in the second half also on total
variation directly, since alpha = 1 - TV(p, q) (Zhou et al. 2024, DistillSpec). The speedup model of
Leviathan et al. (2023), eq. (1) and Thm 3.8: speedup = (1 - alpha^(gamma+1)) / ((1 - alpha)(gamma c + 1)).

Steps: (1) a fixed character tokenizer (PreTrainedTokenizerFast, WordLevel over '\n' and the 95
printable ASCII characters + 4 specials); (2) the target trained on corpus windows; (3) the draft
distilled from the frozen target; (4) both saved as fp16 safetensors, the tokenizer beside each;
(5) c, alpha and the predicted speedups measured on the saved weights, written to metrics.json.
One thread by default: on a shared machine a second thread mostly spins (and the thread count is
part of what makes a run reproducible).

References: Leviathan, Kalman, Matias 2023 (arXiv:2211.17192); Chen et al. 2023 (arXiv:2302.01318);
Zhou et al. 2024, DistillSpec (arXiv:2310.08461); karpathy/nanoGPT (char-level training loop).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from bundled_pair_metrics import (
    alpha_on_target_samples,
    cost_ratio,
    greedy_continuation,
    held_out_metrics,
    predicted_speedup,
    target_samples,
)

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


def _adamw(model, lr: float, weight_decay: float) -> torch.optim.AdamW:
    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay, betas=(0.9, 0.95))


def _step(model, optimizer, loss: torch.Tensor) -> None:
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()


class _Log:
    """Prints and keeps a JSON line every `every` steps, with wall and CPU seconds (the machine may be shared)."""

    def __init__(self, every: int):
        self.every, self.rows, self.t0, self.cpu0 = every, [], time.perf_counter(), time.process_time()

    def __call__(self, phase: str, step: int, last: int, loss: torch.Tensor) -> None:
        if step % self.every == 0 or step == last:
            row = {"phase": phase, "step": step, "loss": round(loss.item(), 4), "seconds": round(time.perf_counter() - self.t0, 1),
                   "cpu_seconds": round(time.process_time() - self.cpu0, 1)}
            self.rows.append(row)
            print(json.dumps(row), flush=True)


def train_target(args, target, train_ids: torch.Tensor, gen: torch.Generator, log: _Log) -> None:
    """Phase 1: next-character cross-entropy -sum_t log p(x_{t+1} | x_{<=t}) on corpus windows."""
    opt = _adamw(target, args.lr, 0.1)
    target.train()
    for step in range(args.target_steps):
        for group in opt.param_groups:
            group["lr"] = learning_rate(step, args.target_steps, args.lr)
        x, y = batch(train_ids, args.batch, args.seq, gen)
        loss = F.cross_entropy(target(x).logits.flatten(0, 1), y.flatten())  # logits (B, T, V)
        _step(target, opt, loss)
        log("target", step, args.target_steps - 1, loss)
    target.eval().requires_grad_(False)


def distill_draft(args, target, draft, train_ids: torch.Tensor, gen: torch.Generator, log: _Log) -> None:
    """Phase 2: the draft learns q from the final target's p: KL(p || q), then KL + TV in the second half.

    Even steps use corpus windows, odd steps the target's own samples (on-policy contexts, the ones
    speculative decoding meets; DistillSpec, Zhou et al. 2024).
    """
    pool = target_samples(target, train_ids, args.pool, 16, args.seq, gen)
    opt = _adamw(draft, args.lr, 0.0)
    draft.train()
    for step in range(args.distill_steps):
        for group in opt.param_groups:
            group["lr"] = learning_rate(step, args.distill_steps, args.lr)
        if step % 2 == 0:
            x, _ = batch(train_ids, args.batch, args.seq, gen)
        else:
            x = pool[torch.randint(0, len(pool), (args.batch,), generator=gen)]
        p = F.softmax(target(x).logits, dim=-1)  # (B, T, V), no gradient: the target is frozen
        tv_weight = args.tv_weight if 2 * step >= args.distill_steps else 0.0
        loss = distill_loss(draft(x).logits, p, tv_weight)
        _step(draft, opt, loss)
        log("draft", step, args.distill_steps - 1, loss)
    draft.eval().requires_grad_(False)


def train(args, target, draft, train_ids: torch.Tensor) -> dict:
    """Phase 1 (target), then phase 2 (draft distilled from the final target); one seeded generator for both."""
    gen = torch.Generator().manual_seed(args.seed)
    log = _Log(args.log_every)
    train_target(args, target, train_ids, gen, log)
    distill_draft(args, target, draft, train_ids, gen, log)
    return {"train_seconds": round(time.perf_counter() - log.t0, 1),
            "train_cpu_seconds": round(time.process_time() - log.cpu0, 1), "log": log.rows}


def _shown(value):
    """Paths inside the repository relative to it (metrics.json is committed), other values as they are."""
    if isinstance(value, Path):
        value = value.resolve()
        return str(value.relative_to(REPO)) if value.is_relative_to(REPO) else str(value)
    return value


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=REPO / "specmath" / "lm" / "bundled")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--target-steps", type=int, default=500, help="steps of phase 1 (the target)")
    ap.add_argument("--distill-steps", type=int, default=600, help="steps of phase 2 (the draft)")
    ap.add_argument("--pool", type=int, default=512, help="target samples for on-policy distillation")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--tv-weight", type=float, default=1.0)
    ap.add_argument("--target-layers", type=int, default=32)
    ap.add_argument("--target-hidden", type=int, default=64)
    ap.add_argument("--draft-hidden", type=int, default=256)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--timing-repeats", type=int, default=300)
    ap.add_argument("--alpha-samples", type=int, default=32, help="target continuations for alpha_target_samples")
    ap.add_argument("--log-every", type=int, default=25)
    args = ap.parse_args(argv)
    if min(args.target_steps, args.distill_steps, args.pool, args.batch, args.seq, args.timing_repeats, args.alpha_samples) < 1:
        ap.error("--target-steps, --distill-steps, --pool, --batch, --seq, --timing-repeats and --alpha-samples must be positive")
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
    report = train(args, target, draft, train_ids)

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
    report.update(metrics=metrics, args={k: _shown(v) for k, v in vars(args).items()},
                  torch=torch.__version__, threads=torch.get_num_threads())
    (args.out / "metrics.json").write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(metrics, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
