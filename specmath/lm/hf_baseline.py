"""The Hugging Face baseline: ``generate`` with an assistant model or prompt lookup, on the same warp.

Notation: p = target law, q = draft law, gamma = draft tokens per round.

``_sampling_arguments`` translates the warp of ``SamplingOptions`` into HF's generate arguments, written once for the
bench (``hf_assisted_generate``) and the engine audit (``hf_generation_config``, used by
``specmath.audit.engines.torch_engines``): T = 0 is ``do_sample=False``; otherwise temperature, top-k and top-p, with
HF's own defaults switched off where specmath applies no truncation (``top_k=0``, ``top_p=1.0``; HF
would otherwise apply top-k 50).

HF runs a model draft as ``assistant_model`` (constant ``num_assistant_tokens = gamma``, no confidence
stop) or prompt lookup as ``prompt_lookup_num_tokens = gamma``; an n-gram table draft has no HF
counterpart, and lookup + table compares with HF's prompt lookup alone. HF samples from torch's
global generator, seeded with ``torch.manual_seed`` before each call.
"""

from __future__ import annotations

import torch

from specmath.lm.drafts import ModelDraft, PromptLookupDraft
from specmath.lm.lean_llama import hf_model
from specmath.lm.stopwatch import device_of
from specmath.sampling_options import SamplingOptions

__all__ = ["hf_generation_config", "hf_lookup_part", "has_hf_counterpart", "hf_assisted_generate"]


def _sampling_arguments(sampling: SamplingOptions) -> dict[str, object]:
    """The warp as Hugging Face ``generate`` arguments: greedy, or temperature / top-k / top-p with no default truncation."""
    if sampling.greedy:
        return {"do_sample": False}
    return {"do_sample": True, "temperature": float(sampling.temperature), "top_k": sampling.top_k or 0,
            "top_p": 1.0 if sampling.top_p is None else float(sampling.top_p)}


def hf_generation_config(sampling: SamplingOptions, **options):
    """A ``transformers.GenerationConfig`` sampling from the warp ``sampling``, plus HF's own ``options``."""
    from transformers import GenerationConfig

    return GenerationConfig(**_sampling_arguments(sampling), **options)


def hf_lookup_part(draft) -> PromptLookupDraft | None:
    """The prompt lookup HF runs in place of ``draft``: itself, or the lookup of a lookup + table draft."""
    if isinstance(draft, PromptLookupDraft):
        return draft
    lookup = getattr(draft, "lookup", None)
    return lookup if isinstance(lookup, PromptLookupDraft) else None


def has_hf_counterpart(draft) -> bool:
    """HF generate runs a model draft (assistant_model) or prompt lookup; an n-gram table alone has no counterpart."""
    return isinstance(draft, ModelDraft) or hf_lookup_part(draft) is not None


@torch.no_grad()
def hf_assisted_generate(target: torch.nn.Module, draft, ids: list[int], max_new_tokens: int, *, gamma: int,
                         sampling: SamplingOptions, seed: int, eos_token_id: int | None = None) -> int:
    """HF ``generate(assistant_model=...)`` (or ``prompt_lookup_num_tokens``) on one prompt; returns the new tokens' count.

    Without ``eos_token_id`` the run emits exactly ``max_new_tokens`` (``min_new_tokens``), like
    specmath's decoders; with it, the run stops there.
    """
    target = hf_model(target)  # HF generate runs the models as loaded, never a LeanLlama
    x = torch.tensor([ids], device=device_of(target))
    if eos_token_id is None:
        kwargs = dict(max_new_tokens=max_new_tokens, min_new_tokens=max_new_tokens, pad_token_id=0)
    else:
        kwargs = dict(max_new_tokens=max_new_tokens, eos_token_id=eos_token_id, pad_token_id=eos_token_id)
    kwargs.update(_sampling_arguments(sampling))
    lookup = hf_lookup_part(draft)
    if lookup is not None:
        kwargs.update(prompt_lookup_num_tokens=gamma, max_matching_ngram_size=lookup.max_ngram)
    else:
        assistant = hf_model(draft.model)
        assistant.generation_config.num_assistant_tokens = gamma
        assistant.generation_config.num_assistant_tokens_schedule = "constant"
        assistant.generation_config.assistant_confidence_threshold = 0.0
        kwargs.update(assistant_model=assistant)
    torch.manual_seed(seed)  # HF samples from the global RNG
    out = target.generate(x, **kwargs)
    return out.shape[1] - len(ids)
