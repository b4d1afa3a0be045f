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

The registry (``ADAPTERS``, ``specmath.registry.Registry``): every built-in adapter by name, each
an ``Adapter`` in ``specmath.audit.rounds.builtin_adapters`` (``reference``, ``reference-batched``,
``specmath-torch`` and its float32, batched and lossy-control variants, ``hf``), imported on first use
and torch-free until a torch sampler is called. Besides them:

* ``bug:NAME`` for every entry of ``specmath.bugzoo.BUGS``: its lossy float (numpy) sampler, with the
  warp the correct algorithm would apply;
* ``module:function`` or ``path/to/file.py:function``: any function with the interface (``adapter_named``).

``adapter_names()`` names them all without loading any: what ``specmath audit`` offers and checks.

References: Leviathan et al., ICML 2023, Algorithm 1; vLLM ``v1/sample/rejection_sampler.py`` (the
batched shape).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from specmath.registry import Registry
from specmath.sampling_options import SamplingOptions
from specmath.validation import check_choice, check_generator_kind

__all__ = ["Adapter", "DrawProtocol", "ADAPTERS", "adapter_names", "adapters", "adapter_named", "is_user_function",
           "make_generator", "declared_warp"]

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


#: every built-in adapter, name -> where its ``Adapter`` lives (``specmath.registry``), imported on first use.
#: An entry added here needs nothing else: ``specmath audit`` offers it and ``--list`` shows it
#: (``adapter_names``), and ``tests/audit/rounds`` checks that each entry loads as an Adapter of its name.
#: Its module may import torch only inside the functions that run it (``tests/test_layout.py``).
ADAPTERS = Registry("adapter", {
    "reference": "specmath.audit.rounds.builtin_adapters:REFERENCE",
    "specmath-torch": "specmath.audit.rounds.builtin_adapters:SPECMATH_TORCH",
    "specmath-torch-float32": "specmath.audit.rounds.builtin_adapters:SPECMATH_TORCH_FLOAT32",
    "specmath-torch-target-residual": "specmath.audit.rounds.builtin_adapters:SPECMATH_TORCH_TARGET_RESIDUAL",
    "hf": "specmath.audit.rounds.builtin_adapters:HF",
    "reference-batched": "specmath.audit.rounds.builtin_adapters:REFERENCE_BATCHED",
    "specmath-torch-batched": "specmath.audit.rounds.builtin_adapters:SPECMATH_TORCH_BATCHED",
})
#: the prefix of the bug zoo's adapters: ``bug:NAME`` for every NAME of ``specmath.bugzoo.BUGS``
BUG_PREFIX = "bug:"


def adapter_names() -> tuple[str, ...]:
    """Every adapter's name, the registry's then ``bug:NAME`` for the bug zoo's; loads none of them."""
    from specmath.bugzoo import BUGS

    return (*ADAPTERS.names, *(BUG_PREFIX + name for name in BUGS))


def _bug_adapter(name: str) -> Adapter:
    from specmath.bugzoo import BUGS

    bug = BUGS[name.removeprefix(BUG_PREFIX)]
    return Adapter(name, bug.explanation, bug.sample_round, "numpy", warp=bug.warp)


def adapters() -> dict[str, Adapter]:
    """Every adapter by name, loaded: the correct samplers, HF's, the negative control and the bug zoo."""
    return {name: ADAPTERS[name] if name in ADAPTERS else _bug_adapter(name) for name in adapter_names()}


def is_user_function(name: str) -> bool:
    """Whether ``name`` names a user's ``module:function`` rather than an adapter (``bug:NAME`` has a colon too)."""
    return isinstance(name, str) and ":" in name and not name.startswith(BUG_PREFIX)


def adapter_named(name: str, generator_kind: str = "numpy", *, batched: bool = False, warp: SamplingOptions | None = None) -> Adapter:
    """The adapter called ``name``, or a user's ``module:function`` with the interface above drawing
    from a generator of ``generator_kind`` (batched when ``batched``, emitting the law of ``warp(p)``);
    ``InvalidArgument`` naming the problem otherwise. Only the adapter asked for is loaded."""
    if name not in ADAPTERS and is_user_function(name):
        return _user_adapter(name, generator_kind, batched, warp)
    name = check_choice(name, "adapter", adapter_names(), also="or module:function")
    return ADAPTERS[name] if name in ADAPTERS else _bug_adapter(name)


def _user_adapter(spec: str, generator_kind: str, batched: bool, warp: SamplingOptions | None) -> Adapter:
    from specmath.audit.rounds.usage_hints import ROUND_INTERFACE, check_call_shape
    from specmath.function_reference import resolve_function

    check_generator_kind(generator_kind)
    function = resolve_function(spec, "sampler")
    check_call_shape(function, ROUND_INTERFACE, f"the sampler {spec!r}", spec)
    doc = (function.__doc__ or "").strip().splitlines()
    return Adapter(spec, doc[0] if doc else f"user sampler {spec}", function, generator_kind, warp=warp, batched=batched)
