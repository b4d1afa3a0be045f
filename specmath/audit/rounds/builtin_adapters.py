"""Internal: The built-in adapters of the round audit: the float references, specmath's torch step, HF's sampler.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

Each is an ``Adapter`` (``specmath.audit.rounds.adapters``) named by the registry ``ADAPTERS`` there.
Importing this module imports no torch: a torch sampler imports torch (and transformers) when it
is called, so ``specmath audit --list`` and the audit of numpy samplers run where torch is absent.

* ``REFERENCE``: the correct float reference round (``specmath.speculative.reference_round``);
  ``REFERENCE_BATCHED`` the same on every round of a case at once (``reference_rounds``).
* ``SPECMATH_TORCH``: ``specmath.lm.accept_reject.accept_reject`` (batch of one, float64 tensors);
  ``SPECMATH_TORCH_FLOAT32`` the same on float32 tensors; ``SPECMATH_TORCH_BATCHED`` on the whole
  batch; ``SPECMATH_TORCH_TARGET_RESIDUAL`` its deliberately lossy negative control (resample from p,
  ``specmath.lm.lossy_controls``).
* ``HF``: Hugging Face transformers' ``transformers.generation.utils._speculative_sampling``,
  imported and called as it is. It takes logits, not probabilities, and draws from torch's *global*
  generator. Conversion: logits = log(probs) in float64 (log 0 = -inf), cast to float32 (the dtype
  HF's ``generate`` casts logits to); its softmax(log p) = p / sum(p) = p up to float32 rounding
  (relative error about (1 + |log p(x)|) 2^-24, from rounding the logit; -inf gives exactly 0), a TV far
  below what the audit detects. Randomness: inside ``torch.random.fork_rng`` the global CPU
  generator is set to the given generator's state, and the state afterwards is written back, so HF
  draws exactly the stream a ``torch.Generator`` would, and the caller's global state is untouched.

References: Leviathan et al., ICML 2023, Algorithm 1; transformers ``_speculative_sampling``
(huggingface/transformers, src/transformers/generation/utils.py).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from specmath.audit.rounds.adapters import Adapter, DrawProtocol
from specmath.speculative.reference_round import reference_sample_round
from specmath.speculative.reference_rounds import padded_rounds, reference_sample_rounds

__all__ = ["REFERENCE", "SPECMATH_TORCH", "SPECMATH_TORCH_FLOAT32", "SPECMATH_TORCH_TARGET_RESIDUAL", "HF",
           "REFERENCE_BATCHED", "SPECMATH_TORCH_BATCHED", "specmath_torch_round", "specmath_torch_rounds",
           "specmath_torch_target_residual_round", "hf_round"]


def specmath_torch_round(target_probs, draft_probs, draft_tokens, generator, dtype: str = "float64",
                         accept_reject=None) -> list[int]:
    """specmath's torch accept/reject step on a batch of one (probabilities cast to ``dtype``): emits
    x_1..x_n and the residual/bonus token. ``accept_reject``: a lossy control injected in its place."""
    import torch

    if accept_reject is None:
        from specmath.lm.accept_reject import accept_reject

    torch_dtype = getattr(torch, dtype)
    p = torch.as_tensor(np.asarray(target_probs, dtype=np.float64)).to(torch_dtype).unsqueeze(0)  # (1, gamma+1, V)
    q = torch.as_tensor(np.asarray(draft_probs, dtype=np.float64)).to(torch_dtype).unsqueeze(0)  # (1, gamma, V)
    drafts = torch.as_tensor(np.asarray(draft_tokens, dtype=np.int64)).unsqueeze(0)  # (1, gamma)
    result = accept_reject(p, q, drafts, generator)
    n = int(result.n_accepted[0])
    return drafts[0, :n].tolist() + [int(result.next_token[0])]


def specmath_torch_rounds(target_probs, draft_probs, draft_tokens, generator, dtype: str = "float64"):
    """specmath's torch accept/reject step on the whole batch (probabilities cast to ``dtype``): [N, gamma+1] ids."""
    import torch

    from specmath.lm.accept_reject import accept_reject

    torch_dtype = getattr(torch, dtype)
    p = torch.as_tensor(np.asarray(target_probs)).to(torch_dtype)  # (N, gamma+1, V)
    q = torch.as_tensor(np.asarray(draft_probs)).to(torch_dtype)  # (N, gamma, V)
    drafts = torch.as_tensor(np.asarray(draft_tokens, dtype=np.int64))  # (N, gamma)
    result = accept_reject(p, q, drafts, generator)
    return padded_rounds(drafts, result.n_accepted, result.next_token)


def hf_round(target_probs, draft_probs, draft_tokens, generator, dtype: str = "float32") -> list[int]:
    """transformers' ``_speculative_sampling`` on logits = log(probs) (cast to ``dtype``), drawing from ``generator``."""
    import torch
    from transformers.generation.utils import _speculative_sampling

    torch_dtype = getattr(torch, dtype)
    with np.errstate(divide="ignore"):
        # softmax(log p) = p / sum p: the logits whose softmax is the given law (log 0 = -inf)
        new_logits = torch.as_tensor(np.log(np.asarray(target_probs, dtype=np.float64))).to(torch_dtype).unsqueeze(0)
        candidate_logits = torch.as_tensor(np.log(np.asarray(draft_probs, dtype=np.float64))).to(torch_dtype).unsqueeze(0)
    candidate_ids = torch.as_tensor(np.asarray(draft_tokens, dtype=np.int64)).unsqueeze(0)  # (1, gamma)
    gamma = candidate_ids.shape[1]
    with torch.random.fork_rng(devices=[]):
        # HF draws from the global generator: make it *be* ours for the call, then hand the state back
        torch.set_rng_state(generator.get_state())
        valid_tokens, _ = _speculative_sampling(candidate_ids, candidate_logits, gamma, new_logits)
        generator.set_state(torch.get_rng_state())
    return valid_tokens[0].tolist()



def specmath_torch_target_residual_round(target_probs, draft_probs, draft_tokens, generator) -> list[int]:
    """The negative control: specmath's torch round with ``lm.lossy_controls.target_resample_accept_reject``,
    which resamples a rejection from p instead of norm(max(0, p - q)) (lossy)."""
    from specmath.lm.lossy_controls import target_resample_accept_reject

    return specmath_torch_round(target_probs, draft_probs, draft_tokens, generator,
                                accept_reject=target_resample_accept_reject)


REFERENCE = Adapter("reference", "specmath's float64 numpy reference round (correct)", reference_sample_round, "numpy")
SPECMATH_TORCH = Adapter("specmath-torch", "specmath.lm.accept_reject.accept_reject, float64 tensors, torch.Generator",
                         specmath_torch_round, "torch", draws=DrawProtocol("float32", "float64"))
SPECMATH_TORCH_FLOAT32 = Adapter(
    "specmath-torch-float32", "specmath.lm.accept_reject.accept_reject, float32 tensors (as a float32 model gives them)",
    partial(specmath_torch_round, dtype="float32"), "torch", draws=DrawProtocol("float32", "float32"))
SPECMATH_TORCH_TARGET_RESIDUAL = Adapter(
    "specmath-torch-target-residual",
    "negative control: lm.lossy_controls.target_resample_accept_reject resamples from p, not max(0, p - q)",
    specmath_torch_target_residual_round, "torch", draws=DrawProtocol("float32", "float64"))
HF = Adapter("hf", "transformers.generation.utils._speculative_sampling on float32 logits = log(probs)",
             hf_round, "torch", draws=DrawProtocol("float32", "float32"))
REFERENCE_BATCHED = Adapter("reference-batched",
                            "specmath's vectorised float64 numpy round, every round of a case in one call (correct)",
                            reference_sample_rounds, "numpy", batched=True)
SPECMATH_TORCH_BATCHED = Adapter("specmath-torch-batched",
                                 "specmath.lm.accept_reject.accept_reject on the whole batch, float64 tensors",
                                 specmath_torch_rounds, "torch", batched=True)
