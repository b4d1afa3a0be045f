"""Measurements of a draft/target pair for the bundled pair's model card (used by train_bundled_pair.py).

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)),
c = (time of one draft forward) / (time of one target forward), both with a KV cache and 1 new token.

* ``held_out_metrics``: cross-entropy per character of each model, alpha averaged over held-out contexts.
* ``alpha_on_target_samples``: alpha along the target's own T = 1 samples (what speculative decoding meets).
* ``cost_ratio``: c as a ratio of medians, target and draft calls interleaved so both see the same load.
* ``predicted_speedup``: Leviathan et al. (2023) eq. (1), from ``specmath.theory.speedup``.
"""

from __future__ import annotations

import statistics
import time

import torch
import torch.nn.functional as F

from specmath.theory import speedup as predicted_speedup  # noqa: F401  (re-exported for the training script)


@torch.no_grad()
def target_samples(target, ids: torch.Tensor, n: int, prompt: int, new: int, gen: torch.Generator) -> torch.Tensor:
    """(n, prompt + new): corpus prompts continued by ancestral sampling from p at T = 1, with a KV cache."""
    from transformers import DynamicCache

    rows = []
    for _ in range(0, n, 64):
        starts = torch.randint(0, len(ids) - prompt, (min(64, n - len(rows) * 64),), generator=gen)
        seqs = torch.stack([ids[s : s + prompt] for s in starts.tolist()])  # (b, prompt)
        cache = DynamicCache(config=target.config)
        logits = target(seqs, past_key_values=cache, use_cache=True).logits[:, -1]
        for _ in range(new):
            token = torch.multinomial(F.softmax(logits.float(), -1), 1, generator=gen)  # (b, 1)
            seqs = torch.cat([seqs, token], dim=1)
            logits = target(token, past_key_values=cache, use_cache=True).logits[:, -1]
        rows.append(seqs)
    return torch.cat(rows)


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
    ids = target_samples(target, held_ids, n, prompt, new, torch.Generator().manual_seed(seed))
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
