"""Adapters: any speculative sampler, wrapped as one function the auditor can call.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

The interface (the shape an engine's rejection sampler has):

    sample_round(target_probs [gamma+1, V] float64, draft_probs [gamma, V] float64,
                 draft_tokens [gamma] int64, generator) -> sequence of emitted token ids

``target_probs[i] = p(. | prefix x_<i)`` (row gamma is the bonus position), ``draft_probs[i] =
q(. | prefix x_<i)``, raw (unwarped) probabilities; the auditor has drawn ``draft_tokens`` from
w(q) where w is the adapter's declared warp (None: the identity). ``generator`` is a
``numpy.random.Generator`` or a ``torch.Generator`` as the adapter declares; all its randomness must
come from it, so a run is reproducible and can be replayed (``specmath.audit.rounds.replay``).

A *batched* adapter (``batched=True``) has the shape of vLLM's and FlashInfer's chain rejection
samplers instead: ``sample_rounds(target_probs [N, gamma+1, V], draft_probs [N, gamma, V],
draft_tokens [N, gamma], generator) -> [N, gamma+1]`` integer ids, -1 after each row's last emitted
token (vLLM's ``PLACEHOLDER_TOKEN_ID``); the auditor hands it every round of a case at once.

Adapters here:

* ``specmath-torch``: ``specmath.lm.accept_reject.accept_reject`` (batch of one, float64 tensors);
  ``specmath-torch-float32`` the same on float32 tensors; ``specmath-torch-target-residual`` is its
  deliberately lossy negative control (resample from p).
* ``hf``: Hugging Face transformers' ``transformers.generation.utils._speculative_sampling``,
  imported and called as it is. It takes logits, not probabilities, and draws from torch's *global*
  generator. Conversion: logits = log(probs) in float64 (log 0 = -inf), cast to float32 (the dtype
  HF's ``generate`` casts logits to); its softmax(log p) = p / sum(p) = p up to float32 rounding
  (relative error about (1 + |log p(x)|) 2^-24, from rounding the logit; -inf gives exactly 0), a TV far
  below what the audit detects. Randomness: inside ``torch.random.fork_rng`` the global CPU
  generator is set to the given generator's state, and the state afterwards is written back, so HF
  draws exactly the stream a ``torch.Generator`` would, and the caller's global state is untouched.
* ``reference``: the correct float reference round (``specmath.speculative.reference_round``);
  ``reference-batched`` and ``specmath-torch-batched`` are the batched references
  (``specmath.speculative.reference_rounds``: numpy, and ``accept_reject`` on the whole batch).
* ``bug:NAME`` for every entry of ``specmath.bugzoo.BUGS``: its lossy float (numpy) sampler, with the
  warp the correct algorithm would apply;
* ``module:function`` or ``path/to/file.py:function``: any function with the interface (``adapter_named``).

References: Leviathan et al., ICML 2023, Algorithm 1; transformers ``_speculative_sampling``
(huggingface/transformers, src/transformers/generation/utils.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from specmath.sampling_options import SamplingOptions
from specmath.speculative.reference_round import reference_sample_round
from specmath.speculative.reference_rounds import padded_rounds
from specmath.validation import check_choice, check_generator_kind

__all__ = ["Adapter", "DrawProtocol", "adapters", "adapter_named", "make_generator", "declared_warp"]

SampleRound = Callable[[np.ndarray, np.ndarray, np.ndarray, Any], Sequence[int]]


@dataclass(frozen=True)
class DrawProtocol:
    """How a torch sampler consumes its generator in one round, for exact replay.

    First ``torch.rand(gamma)`` of ``uniform_dtype`` (u_i decides x_i), then one
    ``torch.multinomial`` over a [V] law of ``law_dtype`` (CPU: the exponential race
    argmax_y law(y) / E_y with E = exponential_(V), checked in the tests).
    """

    uniform_dtype: str  # "float32" / "bfloat16" / "float64"
    law_dtype: str


@dataclass(frozen=True)
class Adapter:
    """A sampler under audit: its round function, generator kind, warp and draw protocol."""

    name: str
    description: str
    sample_round: SampleRound
    generator_kind: str  # "numpy" or "torch"
    warp: SamplingOptions | None = None
    draws: DrawProtocol | None = None  # known draw order: exact replay is possible
    batched: bool = False  # sample_round takes [N, gamma+1, V] ... and returns [N, gamma+1] padded with -1

    def __call__(self, target_probs, draft_probs, draft_tokens, generator) -> list[int]:
        """One round's emitted ids (a batched sampler runs a batch of one), read strictly (``sampler_output``)."""
        from specmath.audit.rounds.output import batch_tokens, round_tokens

        gamma, vocab = len(draft_tokens), np.shape(target_probs)[-1]
        if not self.batched:
            return list(round_tokens(self.sample_round(target_probs, draft_probs, draft_tokens, generator), gamma, vocab))
        batch = (np.asarray(target_probs)[None], np.asarray(draft_probs)[None], np.asarray(draft_tokens)[None])
        lengths, ids = batch_tokens(self.sample_round(*batch, generator), 1, gamma, vocab)
        return ids[0, : lengths[0]].tolist()


def declared_warp(temperature: Any = None, top_k: Any = None, top_p: Any = None) -> SamplingOptions | None:
    """The warp a sampler declares (``SamplingOptions(temperature, top_k, top_p)``, temperature 1 when only top-k/top-p
    are given), or None when it gives none: it then samples p itself."""
    if temperature is None and top_k is None and top_p is None:
        return None
    return SamplingOptions(1 if temperature is None else temperature, top_k, top_p)


def make_generator(kind: str, seed: int):
    """A fresh seeded generator of the given kind ("numpy": PCG64, "torch": CPU mt19937)."""
    if check_generator_kind(kind) == "numpy":
        return np.random.Generator(np.random.PCG64(seed))
    import torch

    return torch.Generator().manual_seed(seed)


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


def _bug_adapters() -> list[Adapter]:
    from specmath.bugzoo import BUGS

    return [
        Adapter(f"bug:{name}", bug.explanation, bug.sample_round, "numpy", warp=bug.warp)
        for name, bug in BUGS.items()
    ]


def adapters() -> dict[str, Adapter]:
    """Every adapter by name: the correct samplers, HF's, the negative control and the bug zoo."""
    from functools import partial

    from specmath.lm.lossy_controls import target_resample_accept_reject
    from specmath.speculative.reference_rounds import reference_sample_rounds

    listed = [
        Adapter("reference", "specmath's float64 numpy reference round (correct)", reference_sample_round, "numpy"),
        Adapter("specmath-torch", "specmath.lm.accept_reject.accept_reject, float64 tensors, torch.Generator",
                specmath_torch_round, "torch", draws=DrawProtocol("float32", "float64")),
        Adapter("specmath-torch-float32", "specmath.lm.accept_reject.accept_reject, float32 tensors (as a float32 model gives them)",
                partial(specmath_torch_round, dtype="float32"), "torch", draws=DrawProtocol("float32", "float32")),
        Adapter("specmath-torch-target-residual", "negative control: lm.lossy_controls.target_resample_accept_reject resamples from p, not max(0, p - q)",
                partial(specmath_torch_round, accept_reject=target_resample_accept_reject), "torch", draws=DrawProtocol("float32", "float64")),
        Adapter("hf", "transformers.generation.utils._speculative_sampling on float32 logits = log(probs)",
                hf_round, "torch", draws=DrawProtocol("float32", "float32")),
        Adapter("reference-batched", "specmath's vectorised float64 numpy round, every round of a case in one call (correct)",
                reference_sample_rounds, "numpy", batched=True),
        Adapter("specmath-torch-batched", "specmath.lm.accept_reject.accept_reject on the whole batch, float64 tensors",
                specmath_torch_rounds, "torch", batched=True),
    ]
    listed += _bug_adapters()
    return {a.name: a for a in listed}


def adapter_named(name: str, generator_kind: str = "numpy", *, batched: bool = False, warp: SamplingOptions | None = None) -> Adapter:
    """The adapter called ``name``, or a user's ``module:function`` with the interface above drawing
    from a generator of ``generator_kind`` (batched when ``batched``, emitting the law of ``warp(p)``);
    ValueError naming the problem otherwise."""
    known = adapters()
    if name not in known and ":" in name and not name.startswith("bug:"):
        return _user_adapter(name, generator_kind, batched, warp)
    return known[check_choice(name, "adapter", known, also="or module:function")]


def _user_adapter(spec: str, generator_kind: str, batched: bool, warp: SamplingOptions | None) -> Adapter:
    from specmath.function_reference import resolve_function

    check_generator_kind(generator_kind)
    function = resolve_function(spec, "sampler")
    doc = (function.__doc__ or "").strip().splitlines()
    return Adapter(spec, doc[0] if doc else f"user sampler {spec}", function, generator_kind, warp=warp, batched=batched)
