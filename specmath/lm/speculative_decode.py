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

Per round the host sees the device once: ``round_bookkeeping.read_round`` reads the accepted
counts, the emitted and drafted tokens, the counters and the validity flag of the target's logits in
one transfer (the logits are checked in full on the first round only; afterwards the flag, computed
on the device, raises before any token of a bad round is kept). ``profile=True`` times the parts of
the rounds with one ``Stopwatch``. How the run samples, drafts and verifies is one
``decode_options.DecodeOptions``.

References: Leviathan, Kalman, Matias, "Fast Inference from Transformers via Speculative
Decoding" (2023); Chen et al., "Accelerating LLM Decoding with Speculative Sampling" (2023).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from tqdm.auto import tqdm

from specmath.lm.accept_reject import AcceptReject
from specmath.lm.accept_reject import accept_reject as token_accept_reject
from specmath.lm.decode_options import DecodeOptions
from specmath.lm.drafts import Draft, ModelDraft, Proposal, draft_for
from specmath.lm.generation import Draws, Generation, check_prompts, finish_rows, model_vocab_size
from specmath.lm.round_bookkeeping import RoundRecord, count_round, read_round
from specmath.lm.round_graph import compiled_round
from specmath.lm.static_cache import cache_class_for
from specmath.lm.stopwatch import Stopwatch, device_of
from specmath.lm.warps import check_logits, warped_probs
from specmath.sampling_options import SamplingOptions
from specmath.validation import InvalidArgument, check_integer

__all__ = ["speculative_generate", "verify_round", "PROFILE_PARTS"]

#: the parts of a round ``profile=True`` reports, in seconds (``accept_reject``: the warps, the step, the
#: counters and the round's host transfer; ``other``: the host's token lists and Python)
PROFILE_PARTS = ("prefill", "draft", "target", "accept_reject", "cache", "other")


@torch.inference_mode()
def speculative_generate(
    target: torch.nn.Module,
    draft: Draft | torch.nn.Module,
    prompts: Sequence[Sequence[int]] | torch.Tensor,
    max_new_tokens: int,
    options: DecodeOptions = DecodeOptions(),
    *,
    accept_reject: Callable | None = None,
    progress: bool = False,
    profile: bool = False,
) -> Generation:
    """Sample max_new_tokens tokens per prompt from the warped target law p, drafting up to gamma per round.

    * ``draft``: any ``drafts.Draft`` (ModelDraft, PromptLookupDraft), or a causal LM (wrapped in ModelDraft);
    * ``options`` (``DecodeOptions``): ``gamma``, an int >= 1 or a function round index -> the most
      tokens that round may draft (>= 0); ``sampling``, the warp of p and q; ``verify``, token by token
      or ``"block"`` (Sun et al. 2024, the block judged jointly; as lossless, more tokens per round);
      ``draft_threshold``, a model draft stops a row's draft before position i when max_x q_i(x) <
      draft_threshold (0 = never; lossless for any value, it depends on q only); ``seed``, an int or a
      torch.Generator for the whole batch, or one int per row (row b's tokens then depend on its own
      seed and prompt only, not on the rest of the batch); ``eos_token_id``, a row stops after emitting
      it; ``vocab_size``, the shared vocabulary when the two models' logits are padded to different
      widths (``models.shared_vocab_size``); ``compile``, the target's and a model draft's passes on
      static KV caches, compiled (``static_cache``, ``compiled_steps``: one graph per width);
    * ``accept_reject``: an accept/reject step in place of the one ``verify`` names: the tests inject
      the negative controls of ``specmath.lm.lossy_controls`` here;
    * ``progress``: a progress bar; ``profile``: fill ``Generation.profile`` with seconds per part
      (``PROFILE_PARTS``).
    """
    check_integer(max_new_tokens, "max_new_tokens", min_value=1)
    if not isinstance(options, DecodeOptions):
        raise InvalidArgument(f"options must be a DecodeOptions, got {type(options).__name__}")
    gamma, sampling, vocab_size, eos_token_id = options.gamma, options.sampling, options.vocab_size, options.eos_token_id
    gamma_at = _gamma_schedule(gamma)
    accept_reject = options.accept_reject if accept_reject is None else accept_reject
    if isinstance(draft, torch.nn.Module):
        draft = ModelDraft(draft, vocab_size)
    if not isinstance(draft, Draft):
        raise InvalidArgument(f"draft must be a drafts.Draft (start / propose / commit) or a causal LM, got {type(draft).__name__}")
    draft = draft_for(draft, options)
    vocab = vocab_size or model_vocab_size(target)
    tokens = check_prompts(prompts, vocab)
    B = len(tokens)
    watch = Stopwatch(device_of(target), PROFILE_PARTS, enabled=profile)
    cache = cache_class_for(options)(target, B, vocab_size)
    draws = Draws.from_seed(options.seed, B, cache.device)
    draft.start(tokens, cache.device, vocab)
    if any(len(t) > 1 for t in tokens):
        cache.prefill([t[:-1] for t in tokens])  # all but the last prompt token
    watch.lap("prefill")
    # counters sized by gamma (a schedule grows them to the longest round)
    width = gamma if isinstance(gamma, int) else 0
    out = Generation([[] for _ in tokens], accepted_hist=[0] * (width + 1), position_reached=[0] * width,
                     position_accepted=[0] * width)
    last = torch.tensor([t[-1] for t in tokens], device=cache.device)  # (B,) the target's pending input token
    finished = [False] * B  # row holds max_new_tokens tokens or its eos
    bar = tqdm(total=max_new_tokens, disable=not progress, desc="speculative", leave=False)
    while not all(finished):
        before = draft.forwards
        proposal = draft.propose(tokens, gamma_at(out.rounds), sampling, draws, confidence_threshold=options.draft_threshold)
        watch.lap("draft")
        # the target sees its pending token followed by row b's n_b drafts: (B, 1 + g), row b uses 1 + n_b
        full = min(proposal.lengths) == proposal.width
        block = torch.cat([last[:, None], proposal.tokens], dim=1)
        logits = cache.feed_block(block, None if full else [1 + n for n in proposal.lengths])  # (B, 1 + g, V)
        watch.lap("target")
        if out.rounds == 0:
            check_logits(logits, "target logits")
        result, record = verify_round(logits, proposal, sampling, accept_reject, draws, options.compile)
        watch.lap("accept_reject")
        if not record.logits_ok:
            check_logits(logits, "target logits")  # raises, naming the problem, before any token is kept
        if not record.draft_ok:
            raise ValueError("cannot sample from invalid probabilities (NaN, inf or negative): the draft model's "
                             "logits held NaN or inf")
        count_round(out, record, proposal.lengths, draft.forwards - before)
        kept = []
        for b in range(B):
            kept.append(len(tokens[b]) + record.n_accepted[b])  # prefix + accepted drafts are now known-good
            emitted = record.emitted(b)
            tokens[b].extend(emitted)
            out.tokens[b].extend(emitted)
            if len(out.tokens[b]) >= max_new_tokens or (eos_token_id is not None and eos_token_id in emitted):
                finished[b] = True
        last = result.next_token
        watch.lap("other")
        cache.keep(kept)
        draft.commit(kept)
        watch.lap("cache")
        bar.update(min(min(len(r) for r in out.tokens), max_new_tokens) - bar.n)
    bar.close()
    out.tokens = finish_rows(out.tokens, max_new_tokens, eos_token_id)
    out.target_forwards, out.draft_forwards = cache.forwards, draft.forwards
    out.profile = {**watch.seconds, "total": watch.total} if profile else None
    return out


def verify_round(logits: torch.Tensor, proposal: Proposal, sampling: SamplingOptions, accept_reject: Callable,
                 draws: Draws, compiled: bool = False) -> tuple[AcceptReject, RoundRecord]:
    """A round's work after the target's pass over (B, 1 + g) tokens: warp p_1..p_{g+1}, accept/reject, read.

    Rows that proposed fewer than g drafts pass their lengths to ``accept_reject``. The round's one host
    transfer is ``read_round``'s. ``compiled`` (the decoder's ``DecodeOptions.compile``): the token-by-token
    step runs as one compiled graph (``round_graph``), the same tokens for the same draws; another
    ``accept_reject`` runs eagerly. ``cost_measure`` times this same function for o_round.
    """
    if compiled and accept_reject is token_accept_reject:
        return compiled_round(logits, proposal, sampling, draws)
    full = min(proposal.lengths) == proposal.width
    p = warped_probs(logits, sampling, check=False)  # (B, g + 1, V): p_1..p_{g+1}
    result = accept_reject(p, proposal.q, proposal.tokens, draws, None if full else proposal.length_tensor)
    return result, read_round(p, proposal, result, logits)


def _gamma_schedule(gamma: int | Callable[[int], int]) -> Callable[[int], int]:
    """round index -> the most draft tokens of that round, checked when used."""
    if callable(gamma):
        return lambda round_index: check_integer(gamma(round_index), f"gamma({round_index})", min_value=0)
    check_integer(gamma, "gamma (draft tokens per round, or a function of the round)", min_value=1)
    return lambda _: gamma
