"""Internal: Engines on a pair's torch models, as clients of the engine protocol: specmath's decoder and Hugging Face's.

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)).

Each engine is an ``EngineClient`` (``specmath.audit.engines.protocol``) over an ``AuditPair``: a generate request
runs the engine's own generate path n times on the prompt (candidate generation, logits processors on both
sides, cache cropping, positions, dtypes: everything). Its logits are the pair target's own forward
(``torch_logits``), so the exact law comes from the engine's own model; its negative control is a named
``control`` of the request (``specmath.audit.engines.registry`` names each engine's), a lossy variant of the same kind
of engine that must be caught (otherwise the run had no power against the bug class and is inconclusive); its
plain path (``"speculative": false``) decodes with the target alone.

* ``specmath``: ``specmath.lm.speculative_decode.speculative_generate`` with the pair's draft model,
  gamma = 4, all n rows in batches of one call each (rows are independent: each draws its own
  uniforms from one seeded ``torch.Generator``; batch b uses seed + b, so a request takes all N at once).
  Options: temperature, top-k, top-p. Control ``residual-from-p``: the same call with the residual drawn
  from p instead of norm(max(0, p - q)), so the token after a rejection has law min(p, q) + (1 - alpha) p != p.
  Plain: ``specmath.lm.plain_decode.plain_generate``, in the same batches and seeds.
* ``hf-assisted``: ``model.generate(assistant_model=draft, do_sample=True)``, 4 assistant tokens per
  round (constant schedule). HF's assisted generation refuses batch > 1, so n calls of one row.
  Options: temperature, top-k, top-p, min-p, a logit bias (``sequence_bias`` of single tokens), the
  repetition penalty (over the whole input, prompt included). Control ``ensemble-weight-0.1``: HF's own
  relaxed verification ``assistant_ensemble_weight=0.1`` (accepts against v = 0.1 p + 0.9 q: documented by HF
  as biased). Plain: ``model.generate(do_sample=True)`` with the same options.
* ``hf-lookup``: ``model.generate(prompt_lookup_num_tokens=4, do_sample=True)`` (n calls of one row).
  Control ``residual-from-p``: prompt lookup in specmath's engine with the residual drawn from p (a one-hot
  draft x rejected, the token is redrawn from p instead of p without x). Plain: as ``hf-assisted``'s.

Seeding of HF's generate: it draws from torch's global generator, so each call runs inside
``torch.random.fork_rng`` with ``torch.manual_seed(seed + i)`` for call i: every sample is
reproducible on its own and the caller's global state is untouched.

Sampling options are passed to each engine as its own options; for HF they come from
``specmath.lm.hf_baseline.hf_generation_config`` (top-k disabled with ``top_k=0`` and top-p with
``top_p=1.0``: HF's defaults would otherwise apply top-k 50).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from specmath.audit.engines.law import Logits
from specmath.audit.engines.pairs import AuditPair
from specmath.audit.engines.protocol import EngineClient, Generation
from specmath.audit.engines.registry import EngineEntry, EngineOpening
from specmath.audit.rounds.runner import one_torch_thread
from specmath.sampling_options import SamplingOptions
from specmath.validation import InvalidArgument

__all__ = ["PairEngine", "SpecmathEngine", "HfEngine", "torch_logits", "specmath_engine", "hf_assisted_engine",
           "hf_lookup_engine", "GAMMA"]

Rows = list[list[int]]

#: draft tokens per round for every engine
GAMMA = 4
#: elements of one (rows, gamma + 1, V) probability tensor per specmath batch
_BATCH_ELEMENTS = 2**24


def torch_logits(target: torch.nn.Module) -> Logits:
    """The ``Logits`` of a torch causal LM: float32 logits at each context's last position, in float64."""

    @torch.inference_mode()
    def logits(contexts: list[list[int]]) -> np.ndarray:
        rows: dict[int, torch.Tensor] = {}
        by_length: dict[int, list[int]] = {}
        for i, context in enumerate(contexts):
            by_length.setdefault(len(context), []).append(i)
        for indices in by_length.values():  # contexts of one length go in batches of 64
            for start in range(0, len(indices), 64):
                chunk = indices[start:start + 64]
                out = target(torch.tensor([contexts[i] for i in chunk])).logits[:, -1].float()
                rows.update(zip(chunk, out, strict=True))
        return torch.stack([rows[i] for i in range(len(contexts))]).double().numpy()

    return logits


class PairEngine(EngineClient):
    """An engine on ``pair``'s torch models, as its registry ``entry`` describes it. Subclasses implement ``_rows``."""

    has_logits = True  # the pair target's own forward: the engine's non-speculative model
    has_controls = True
    has_plain = True
    calls_per_request = None  # in-process: every request takes all N (the specmath engine seeds per batch)

    def __init__(self, entry: EngineEntry, pair: AuditPair):
        self.name = entry.name
        self.semantics = entry.engine_semantics()
        self.controls = tuple(c.name for c in entry.controls)
        self.pair = pair
        self.vocab_size = pair.vocab_size
        self._forward = torch_logits(pair.target)

    def _logits(self, contexts):
        return self._forward(contexts)

    def _generate(self, prompt, n, seed, max_new_tokens, options, speculative, control) -> Generation:
        name = None if control is None else control.get("name")
        if control is not None and name not in self.controls:
            raise InvalidArgument(f"{self.name} takes the lossy control {', '.join(self.controls)}, not {control!r}")
        mode = "plain" if not speculative else name or "engine"
        return Generation(self._rows(prompt, n, seed, max_new_tokens, options, mode))

    def _rows(self, prompt: list[int], n: int, seed: int, m: int, options: SamplingOptions, mode: str) -> Rows:
        """n rows of m new tokens; ``mode``: "engine", "plain" or a control's name."""
        raise NotImplementedError


# --- specmath's own engine -------------------------------------------------------------------------

def _batched(pair: AuditPair, n: int, seed: int, generate: Callable[[int, int], Rows]) -> Rows:
    """n rows in batches of at most one (rows, gamma + 1, V) tensor's worth, batch b by ``generate(count, seed + b)``."""
    rows = max(1, min(1024, _BATCH_ELEMENTS // (pair.vocab_size * (GAMMA + 1))))
    out: Rows = []
    for b, start in enumerate(range(0, n, rows)):
        out += generate(min(rows, n - start), seed + b)
    return out


def _speculative_rows(pair: AuditPair, draft: Callable, prompt: list[int], n: int, seed: int, m: int,
                      options: SamplingOptions, accept_reject=None) -> Rows:
    # accept_reject: None for the production step, or a lossy control from specmath.lm.lossy_controls
    from specmath.lm.decode_options import DecodeOptions
    from specmath.lm.speculative_decode import speculative_generate

    decode = DecodeOptions(gamma=GAMMA, sampling=options)
    return _batched(pair, n, seed, lambda count, s: speculative_generate(
        pair.target, draft(), [prompt] * count, m, decode.replace(seed=s), accept_reject=accept_reject).tokens)


def _model_draft(pair: AuditPair):
    from specmath.lm.drafts import ModelDraft

    return lambda: ModelDraft(pair.draft)


def _lookup_draft(pair: AuditPair):
    from specmath.lm.drafts import PromptLookupDraft

    return lambda: PromptLookupDraft(max_ngram=2)


def _residual_from_p():
    from specmath.lm.lossy_controls import target_resample_accept_reject

    # lossy control: a rejected position is redrawn from p instead of norm(max(0, p - q))
    return target_resample_accept_reject


class SpecmathEngine(PairEngine):
    """``speculative_generate`` with the pair's draft model (or prompt lookup, for hf-lookup's control)."""

    def _rows(self, prompt, n, seed, m, options, mode) -> Rows:
        if mode == "plain":
            from specmath.lm.decode_options import DecodeOptions
            from specmath.lm.plain_decode import plain_generate

            return _batched(self.pair, n, seed, lambda count, s: plain_generate(
                self.pair.target, [prompt] * count, m, DecodeOptions(sampling=options, seed=s)).tokens)
        control = _residual_from_p() if mode == "residual-from-p" else None
        return _speculative_rows(self.pair, _model_draft(self.pair), prompt, n, seed, m, options, control)


# --- Hugging Face transformers ---------------------------------------------------------------------

def _hf_config(pair: AuditPair, options: SamplingOptions, m: int, **extra):
    from specmath.lm.hf_baseline import hf_generation_config

    if options.min_p is not None:
        extra["min_p"] = options.min_p
    if options.repetition_penalty is not None:
        extra["repetition_penalty"] = options.repetition_penalty
    if options.logit_bias:
        extra["sequence_bias"] = {(token,): bias for token, bias in options.logit_bias}
    warp = SamplingOptions(options.temperature, top_k=options.top_k, top_p=options.top_p)  # the rest went to HF's own
    return hf_generation_config(warp, max_new_tokens=m, eos_token_id=None, pad_token_id=pair.pad_token_id, **extra)


def _hf_rows(pair: AuditPair, prompt: list[int], n: int, seed: int, config, **generate_kwargs) -> Rows:
    ids = torch.tensor([prompt])
    mask = torch.ones_like(ids)
    m = config.max_new_tokens
    out: Rows = []
    with one_torch_thread(), torch.random.fork_rng(devices=[]), torch.inference_mode():
        for i in range(n):
            torch.manual_seed(seed + i)  # HF draws from the global generator: one seed per call
            new = pair.target.generate(ids, attention_mask=mask, generation_config=config,
                                       **generate_kwargs)[0, ids.shape[1]:].tolist()
            if len(new) != m:
                raise RuntimeError(f"generate returned {len(new)} new tokens, expected {m}")
            out.append(new)
    return out


class HfEngine(PairEngine):
    """Hugging Face ``generate`` on the pair's target: assisted by its draft model, or by prompt lookup."""

    def __init__(self, entry: EngineEntry, pair: AuditPair, lookup: bool):
        super().__init__(entry, pair)
        self.lookup = lookup

    def _rows(self, prompt, n, seed, m, options, mode) -> Rows:
        pair = self.pair
        if mode == "plain":
            return _hf_rows(pair, prompt, n, seed, _hf_config(pair, options, m))
        if self.lookup:
            if mode == "residual-from-p":
                # specmath's engine takes temperature, top-k and top-p only: under another option the control runs
                # without it, which moves the law too (a control is only asked to be lossy)
                warp = SamplingOptions(options.temperature, top_k=options.top_k, top_p=options.top_p)
                return _speculative_rows(pair, _lookup_draft(pair), prompt, n, seed, m, warp, _residual_from_p())
            config = _hf_config(pair, options, m, prompt_lookup_num_tokens=GAMMA, max_matching_ngram_size=2)
            return _hf_rows(pair, prompt, n, seed, config)
        extra = {"num_assistant_tokens": GAMMA, "num_assistant_tokens_schedule": "constant",
                 "assistant_confidence_threshold": 0.0}
        if mode == "ensemble-weight-0.1":
            extra["assistant_ensemble_weight"] = 0.1
        return _hf_rows(pair, prompt, n, seed, _hf_config(pair, options, m, **extra), assistant_model=pair.draft)


# --- the registry's factories (``specmath.audit.engines.registry``): (entry, EngineOpening on an AuditPair) -> client ---

def specmath_engine(entry: EngineEntry, opening: EngineOpening) -> SpecmathEngine:
    """specmath's speculative decoder on the pair ``opening.target``."""
    return SpecmathEngine(entry, opening.target)


def hf_assisted_engine(entry: EngineEntry, opening: EngineOpening) -> HfEngine:
    """HF's assisted generation, drafted by the pair's draft model."""
    return HfEngine(entry, opening.target, lookup=False)


def hf_lookup_engine(entry: EngineEntry, opening: EngineOpening) -> HfEngine:
    """HF's prompt lookup decoding on the pair's target."""
    return HfEngine(entry, opening.target, lookup=True)
