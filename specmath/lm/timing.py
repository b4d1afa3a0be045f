"""Timing in one run on the same models, prompts and seed: plain, speculative, HF assisted generation.

The speedup model (Leviathan et al. 2023, Theorem 3.8 with the verify forward costing one target
forward): with acceptance alpha, gamma drafts per round and cost ratio c = (time of one draft
forward) / (time of one target forward),

    expected tokens per round = (1 - alpha^(gamma+1)) / (1 - alpha)
    predicted speedup         = (1 - alpha^(gamma+1)) / ((1 - alpha) (gamma c + 1))

It assumes the target forward over gamma + 1 tokens costs what a forward over 1 token costs
(decoding is memory-bound: the weights are read once either way); ``forward_cost`` measures that
ratio on this machine, and ``bench`` prints the predicted speedup next to the measured one.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import torch
from tqdm.auto import tqdm

from specmath.lm.cache import RowCache
from specmath.lm.drafts import ModelDraft, PromptLookupDraft
from specmath.lm.plain_decode import plain_generate
from specmath.lm.speculative_decode import speculative_generate
from specmath.lm.warps import DEFAULT_SAMPLING, Sampling
from specmath.theory import speedup as predicted_speedup  # (1 - alpha^(gamma+1)) / ((1 - alpha)(gamma c + 1))

__all__ = ["predicted_speedup", "forward_cost", "bench_pair"]


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


@torch.no_grad()
def forward_cost(model: torch.nn.Module, prompt: Sequence[int], n_tokens: int, repeats: int = 10) -> float:
    """Seconds for one cached forward of ``n_tokens`` new tokens after ``prompt`` (median of repeats)."""
    cache = RowCache(model, 1)
    cache.feed([list(prompt)])
    base = cache.lengths[0]
    times = []
    for _ in range(repeats + 1):
        _sync(cache.device)
        start = time.perf_counter()
        cache.feed([list(prompt[-n_tokens:]) if len(prompt) >= n_tokens else [0] * n_tokens])
        _sync(cache.device)
        times.append(time.perf_counter() - start)
        cache.keep([base])
    return sorted(times[1:])[len(times[1:]) // 2]


def _timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


@torch.no_grad()
def _hf_assisted(target, draft, ids: list[int], max_new_tokens: int, gamma: int, sampling: Sampling, seed: int) -> int:
    """HF generate(assistant_model=...) (or prompt_lookup_num_tokens for a prompt-lookup draft); returns new tokens."""
    device = next(target.parameters()).device
    x = torch.tensor([ids], device=device)
    kwargs = dict(max_new_tokens=max_new_tokens, min_new_tokens=max_new_tokens, pad_token_id=0)
    if sampling.greedy:
        kwargs.update(do_sample=False)
    else:
        kwargs.update(do_sample=True, temperature=sampling.temperature, top_k=sampling.top_k or 0, top_p=sampling.top_p or 1.0)
    if isinstance(draft, PromptLookupDraft):
        kwargs.update(prompt_lookup_num_tokens=gamma, max_matching_ngram_size=draft.max_ngram)
    else:
        assistant = draft.model
        assistant.generation_config.num_assistant_tokens = gamma
        assistant.generation_config.num_assistant_tokens_schedule = "constant"
        assistant.generation_config.assistant_confidence_threshold = 0.0
        kwargs.update(assistant_model=assistant)
    torch.manual_seed(seed)  # HF samples from the global RNG
    out = target.generate(x, **kwargs)
    return out.shape[1] - len(ids)


def bench_pair(
    name: str, target, draft: ModelDraft | PromptLookupDraft, prompts: Sequence[Sequence[int]], max_new_tokens: int = 64,
    gamma: int = 4, sampling: Sampling = DEFAULT_SAMPLING, seed: int = 0, vocab_size: int | None = None, hf: bool = True,
    progress: bool = True,
) -> dict:
    """Tokens/s of plain, speculative and HF assisted decoding (batch 1, each prompt), alpha, c, speedups."""
    device = next(target.parameters()).device
    prompts = [list(p) for p in prompts]
    # warm-up: allocator, kernels, lazy inits
    plain_generate(target, prompts[:1], 4, sampling, seed, vocab_size=vocab_size)
    speculative_generate(target, draft, prompts[:1], 4, gamma, sampling, seed, vocab_size=vocab_size)
    totals = {"plain": [0, 0.0], "speculative": [0, 0.0], "hf_assisted": [0, 0.0]}
    rounds = accepted = 0
    alpha_sum = alpha_n = 0.0
    reached = [0] * gamma
    acc_pos = [0] * gamma
    for i, ids in enumerate(tqdm(prompts, desc=f"bench {name}", disable=not progress)):
        g, t = _timed(lambda ids=ids, i=i: plain_generate(target, [ids], max_new_tokens, sampling, seed + i, vocab_size=vocab_size))
        totals["plain"][0] += len(g.tokens[0])
        totals["plain"][1] += t
        s, t = _timed(lambda ids=ids, i=i: speculative_generate(target, draft, [ids], max_new_tokens, gamma, sampling, seed + i, vocab_size=vocab_size))
        totals["speculative"][0] += len(s.tokens[0])
        totals["speculative"][1] += t
        rounds += s.rounds
        accepted += sum(n * c for n, c in enumerate(s.accepted_hist))
        alpha_sum += s.alpha_sum
        alpha_n += s.alpha_count
        reached = [a + b for a, b in zip(reached, s.position_reached, strict=True)]
        acc_pos = [a + b for a, b in zip(acc_pos, s.position_accepted, strict=True)]
        if hf:
            n, t = _timed(lambda ids=ids, i=i: _hf_assisted(target, draft, ids, max_new_tokens, gamma, sampling, seed + i))
            totals["hf_assisted"][0] += n
            totals["hf_assisted"][1] += t
    rate = {k: (n / t if t else float("nan")) for k, (n, t) in totals.items()}
    # cost ratio c = draft forward / target forward (one token, cached); prompt lookup needs no forward
    t_target_1 = forward_cost(target, prompts[0], 1)
    t_target_g = forward_cost(target, prompts[0], gamma + 1)
    c = forward_cost(draft.model, prompts[0], 1) / t_target_1 if isinstance(draft, ModelDraft) else 0.0
    alpha = alpha_sum / alpha_n if alpha_n else float("nan")
    return {
        "pair": name,
        "device": str(device),
        "dtype": str(next(target.parameters()).dtype).replace("torch.", ""),
        "threads": torch.get_num_threads(),
        "gamma": gamma,
        "sampling": {"temperature": sampling.temperature, "top_k": sampling.top_k, "top_p": sampling.top_p},
        "prompts": len(prompts),
        "max_new_tokens": max_new_tokens,
        "tokens_per_s": rate,
        "alpha": alpha,
        "acceptance_by_position": [a / r if r else None for a, r in zip(acc_pos, reached, strict=True)],
        "mean_tokens_per_round": (accepted + rounds) / rounds if rounds else None,
        "predicted_tokens_per_round": predicted_speedup(alpha, gamma, 0.0) if alpha == alpha else None,
        "cost_ratio_c": c,
        "target_forward_s": {"1_token": t_target_1, f"{gamma + 1}_tokens": t_target_g, "ratio": t_target_g / t_target_1},
        "predicted_speedup": predicted_speedup(alpha, gamma, c) if alpha == alpha else None,
        "measured_speedup_vs_plain": rate["speculative"] / rate["plain"],
        "speedup_vs_hf_assisted": rate["speculative"] / rate["hf_assisted"] if hf else None,
    }
