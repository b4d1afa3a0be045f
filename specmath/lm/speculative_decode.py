"""Speculative decoding of a real target model p with a draft q (Leviathan et al. 2023, Algorithm 2).

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)).
Each round, for every row b of the batch:

1. the draft proposes n_b <= gamma tokens x_1..x_{n_b} with laws q_1..q_{n_b} (``drafts.Draft``;
   n_b varies: a prompt lookup proposes what its match offers, a model draft may stop when its
   confidence max_x q(x) is low; n_b = 0 makes the round one plain target step);
2. ONE target forward over [last token, x_1..x_{n_b}] gives p_1..p_{n_b + 1};
3. ``accept_reject`` accepts a prefix with min(1, p/q), then emits a residual or bonus token
   (``block_verify.block_accept_reject`` instead chooses the prefix from the whole block);
4. both KV caches keep the accepted prefix and drop the rest (``RowCache.keep``).

Rows accept different numbers of tokens and go on independently (HF assisted generation refuses
batch > 1). Every emitted token has law p given its prefix, so the output law equals that of
``plain_generate``; the exact proof for toy laws is ``specmath.speculative`` (and
``specmath.speculative.confidence_stop`` for the adaptive draft length), the empirical check for
real models is ``specmath.lm.histogram``.

Per round the host sees the device once: one transfer carries the accepted counts, the emitted
tokens, the drafted tokens, the counters and the validity flag of the target's logits (checked in
full on the first round only; afterwards a flag computed on the device, which raises before any
token of a bad round is kept). ``profile=True`` times the parts of the rounds.

References: Leviathan, Kalman, Matias, "Fast Inference from Transformers via Speculative
Decoding" (2023); Chen et al., "Accelerating LLM Decoding with Speculative Sampling" (2023).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import torch
from tqdm.auto import tqdm

from specmath.lm.accept_reject import accept_reject as standard_accept_reject
from specmath.lm.cache import RowCache
from specmath.lm.drafts import Draft, ModelDraft
from specmath.lm.generation import Draws, Generation, check_prompts, finish_rows, model_vocab_size
from specmath.lm.warps import DEFAULT_SAMPLING, Sampling, check_logits, logits_ok

__all__ = ["speculative_generate", "PROFILE_PARTS"]

#: the parts of a round ``profile=True`` reports, in seconds (``other``: host bookkeeping and Python)
PROFILE_PARTS = ("prefill", "draft", "target", "accept_reject", "cache", "other")


@torch.inference_mode()
def speculative_generate(
    target: torch.nn.Module,
    draft: Draft | torch.nn.Module,
    prompts: Sequence[Sequence[int]] | torch.Tensor,
    max_new_tokens: int,
    gamma: int | Callable[[int], int] = 4,
    sampling: Sampling = DEFAULT_SAMPLING,
    seed: int | torch.Generator | Sequence[int] = 0,
    eos_token_id: int | None = None,
    vocab_size: int | None = None,
    progress: bool = False,
    *,
    draft_threshold: float = 0.0,
    accept_reject: Callable = standard_accept_reject,
    profile: bool = False,
) -> Generation:
    """Sample max_new_tokens tokens per prompt from the warped target law p, drafting up to gamma per round.

    * ``draft``: any ``drafts.Draft`` (ModelDraft, PromptLookupDraft), or a causal LM (wrapped in ModelDraft);
    * ``gamma``: an int >= 1, or a function round index -> the most tokens that round may draft (>= 0);
    * ``seed``: an int or a torch.Generator for the whole batch, or one int per row (row b's tokens
      then depend on its own seed and prompt only, not on the rest of the batch);
    * ``draft_threshold``: a model draft stops a row's draft before position i when
      max_x q_i(x) < draft_threshold (0 = never; lossless for any value, it depends on q only);
    * ``vocab_size``: the shared vocabulary when the two models' logits are padded to different
      widths (``models.shared_vocab_size``);
    * ``accept_reject``: the accept/reject step: token by token (the default) or
      ``block_verify.block_accept_reject`` (Sun et al. 2024, the block judged jointly; as lossless, more
      tokens per round); tests inject the negative controls of ``specmath.bugzoo.torch_controls`` here;
    * ``profile``: fill ``Generation.profile`` with seconds per part (``PROFILE_PARTS``).
    """
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
    gamma_at = _gamma_schedule(gamma)
    if isinstance(draft_threshold, bool) or not isinstance(draft_threshold, (int, float)) or not 0 <= draft_threshold <= 1:
        raise ValueError(f"draft_threshold must lie in [0, 1] (a bound on max_x q(x)), got {draft_threshold!r}")
    if isinstance(draft, torch.nn.Module):
        draft = ModelDraft(draft, vocab_size)
    if not isinstance(draft, Draft):
        raise ValueError(f"draft must be a drafts.Draft (start / propose / commit) or a causal LM, got {type(draft).__name__}")
    vocab = vocab_size or model_vocab_size(target)
    tokens = check_prompts(prompts, vocab)
    B = len(tokens)
    clock = _Clock(profile, next(target.parameters()).device)
    cache = RowCache(target, B, vocab_size)
    draws = Draws.from_seed(seed, B, cache.device)
    draft.start(tokens, cache.device, vocab)
    if any(len(t) > 1 for t in tokens):
        cache.prefill([t[:-1] for t in tokens])  # all but the last prompt token
    clock.lap("prefill")
    # counters sized by gamma (a schedule grows them to the longest round)
    width = gamma if isinstance(gamma, int) else 0
    out = Generation([[] for _ in tokens], accepted_hist=[0] * (width + 1), position_reached=[0] * width,
                     position_accepted=[0] * width)
    last = torch.tensor([t[-1] for t in tokens], device=cache.device)  # (B,) the target's pending input token
    finished = [False] * B  # row holds max_new_tokens tokens or its eos
    bar = tqdm(total=max_new_tokens, disable=not progress, desc="speculative", leave=False)
    while not all(finished):
        before = draft.forwards
        proposal = draft.propose(tokens, gamma_at(out.rounds), sampling, draws, confidence_threshold=draft_threshold)
        out.draft_steps += draft.forwards - before
        g = proposal.width
        out.width_hist.extend([0] * (g + 1 - len(out.width_hist)))
        out.width_hist[g] += 1
        out.drafted += sum(proposal.lengths)
        clock.lap("draft")
        # the target sees its pending token followed by row b's n_b drafts: (B, 1 + g), row b uses 1 + n_b
        full = min(proposal.lengths) == g
        block = torch.cat([last[:, None], proposal.tokens], dim=1)
        logits = cache.feed_block(block, None if full else [1 + n for n in proposal.lengths])  # (B, 1 + g, V)
        clock.lap("target")
        if out.rounds == 0:
            check_logits(logits, "target logits")
        p = sampling.probs(logits, check=False)  # (B, g + 1, V): p_1..p_{g+1}
        result = accept_reject(p, proposal.q, proposal.tokens, draws, None if full else proposal.length_tensor)
        counters = _position_counters(p, proposal, result.n_accepted)
        clock.lap("accept_reject")
        # the round's one host transfer (float64 holds token ids and counts exactly)
        ints = torch.cat([result.n_accepted, result.next_token, proposal.tokens.flatten(),
                          result.zero_residual_rows.long(), logits_ok(logits).long().reshape(1)])
        host = torch.cat([ints.double(), counters]).tolist()
        if not host[3 * B + B * g]:
            check_logits(logits, "target logits")  # raises, naming the problem
        ids = [int(v) for v in host[: 3 * B + B * g]]
        n_acc, nxt, drafted = ids[:B], ids[B : 2 * B], ids[2 * B : 2 * B + B * g]
        out.zero_residual += sum(ids[2 * B + B * g :])
        _add_counters(out, g, host[3 * B + B * g + 1 :])
        kept = []
        for b, n in enumerate(n_acc):
            kept.append(len(tokens[b]) + n)  # prefix + accepted drafts are now known-good
            emitted = drafted[b * g : b * g + n] + [nxt[b]]
            tokens[b].extend(emitted)
            out.tokens[b].extend(emitted)
            while len(out.accepted_hist) <= n:
                out.accepted_hist.append(0)
            out.accepted_hist[n] += 1
            if len(out.tokens[b]) >= max_new_tokens or (eos_token_id is not None and eos_token_id in emitted):
                finished[b] = True
        last = result.next_token
        out.rounds += 1
        clock.lap("other")
        cache.keep(kept)
        draft.commit(kept)
        clock.lap("cache")
        bar.update(min(min(len(r) for r in out.tokens), max_new_tokens) - bar.n)
    bar.close()
    out.tokens = finish_rows(out.tokens, max_new_tokens, eos_token_id)
    out.target_forwards, out.draft_forwards = cache.forwards, draft.forwards
    out.profile = clock.seconds() if profile else None
    return out


def _gamma_schedule(gamma: int | Callable[[int], int]) -> Callable[[int], int]:
    """round index -> the most draft tokens of that round, checked when used."""
    if callable(gamma):
        def checked(round_index: int) -> int:
            g = gamma(round_index)
            if isinstance(g, bool) or not isinstance(g, int) or g < 0:
                raise ValueError(f"gamma({round_index}) must be an int >= 0, got {g!r}")
            return g
        return checked
    if isinstance(gamma, bool) or not isinstance(gamma, int) or gamma < 1:
        raise ValueError(f"gamma (draft tokens per round) must be an int >= 1 or a function of the round, got {gamma!r}")
    return lambda _: gamma


def _position_counters(p: torch.Tensor, proposal, n_acc: torch.Tensor) -> torch.Tensor:
    """(2 g + 2,) on the device: reached and accepted per draft position, then the sum of alpha_i and its count.

    Position i is *reached* when the row proposed it and accepted x_1..x_{i-1}; there
    alpha_i = sum_x min(p_i(x), q_i(x)) (one-hot q: p_i(x_i)).
    """
    g = proposal.width
    positions = torch.arange(g, device=p.device)
    reached = (positions[None, :] <= n_acc[:, None]) & (positions[None, :] < proposal.length_tensor[:, None])
    accepted = positions[None, :] < n_acc[:, None]
    if proposal.q is None:
        alpha = p[:, :g].gather(-1, proposal.tokens.unsqueeze(-1)).squeeze(-1)
    else:
        alpha = torch.minimum(p[:, :g], proposal.q).sum(-1)
    return torch.cat([reached.sum(0).double(), accepted.sum(0).double(),
                      alpha[reached].sum().double().reshape(1), reached.sum().double().reshape(1)])


def _add_counters(out: Generation, g: int, stats: list[float]) -> None:
    while len(out.position_reached) < g:
        out.position_reached.append(0)
        out.position_accepted.append(0)
    for i in range(g):
        out.position_reached[i] += int(stats[i])
        out.position_accepted[i] += int(stats[g + i])
    out.alpha_sum += stats[2 * g]
    out.alpha_count += int(stats[2 * g + 1])


class _Clock:
    """Seconds per part of the loop; on a GPU each lap waits for the device so the time lands in its part."""

    def __init__(self, enabled: bool, device: torch.device) -> None:
        self.enabled, self.cuda = enabled, device.type == "cuda"
        self.parts = dict.fromkeys(PROFILE_PARTS, 0.0)
        self.t = time.perf_counter()

    def lap(self, part: str) -> None:
        if not self.enabled:
            return
        if self.cuda:
            torch.cuda.synchronize()
        now = time.perf_counter()
        self.parts[part] += now - self.t
        self.t = now

    def seconds(self) -> dict[str, float]:
        return {**self.parts, "total": sum(self.parts.values())}
