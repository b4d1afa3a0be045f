"""Engines that run on a pair's torch models, under an end-to-end audit of whole ``generate`` calls.

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)).

Each engine is a function ``sample(pair, options, n, seed) -> [(x1, x2), ...]`` that runs the
engine's own generate path n times on ``pair.prompt`` (candidate generation, logits processors on
both sides, cache cropping, positions, dtypes: everything), and a *negative control*: a lossy
variant of the same kind of engine, run in the same audit, that must be caught (otherwise the run
had no power against the bug class and is inconclusive). ``semantics`` says which sampling options the
engine takes and in which order it applies them (``specmath.audit.engines.semantics``).

* ``specmath``: ``specmath.lm.speculative_decode.speculative_generate`` with the pair's draft model,
  gamma = 4, all n rows in batches of one call each (rows are independent: each draws its own
  uniforms from one seeded ``torch.Generator``; batch b uses seed + b). Options: temperature, top-k, top-p.
  Control: the same call with the residual drawn from p instead of norm(max(0, p - q)), so the
  token after a rejection has law min(p, q) + (1 - alpha) p != p.
* ``hf-assisted``: ``model.generate(assistant_model=draft, do_sample=True)``, 4 assistant tokens per
  round (constant schedule). HF's assisted generation refuses batch > 1, so n calls of one row.
  Options: temperature, top-k, top-p, min-p, a logit bias (``sequence_bias`` of single tokens), the
  repetition penalty (over the whole input, prompt included). Control: HF's own relaxed verification
  ``assistant_ensemble_weight=0.1`` (accepts against v = 0.1 p + 0.9 q: documented by HF as biased).
* ``hf-lookup``: ``model.generate(prompt_lookup_num_tokens=4, do_sample=True)`` (n calls of one row).
  Control: prompt lookup in specmath's engine with the residual drawn from p (a one-hot draft x
  rejected, the token is redrawn from p instead of p without x).

Engines outside Python's torch (llama.cpp, node-llama-cpp, a user's function, a subprocess, an
endpoint) are audited through the protocol of ``specmath.audit.engines.protocol``.

Seeding of HF's generate: it draws from torch's global generator, so each call runs inside
``torch.random.fork_rng`` with ``torch.manual_seed(seed + i)`` for call i: every sample is
reproducible on its own and the caller's global state is untouched.

Sampling options are passed to each engine as its own options; for HF they come from
``specmath.lm.hf_baseline.hf_generation_config`` (top-k disabled with ``top_k=0`` and top-p with
``top_p=1.0``: HF's defaults would otherwise apply top-k 50).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from specmath.audit.engines.pairs import AuditPair
from specmath.audit.engines.semantics import SEMANTICS, EngineSemantics
from specmath.audit.rounds.runner import one_torch_thread
from specmath.sampling_options import SamplingOptions
from specmath.validation import UnknownName

__all__ = ["Engine", "ENGINES", "engine_named", "SPECMATH_SEMANTICS"]

Samples = list[tuple[int, int]]
SampleFn = Callable[[AuditPair, SamplingOptions, int, int], Samples]

#: draft tokens per round for every engine
GAMMA = 4
#: elements of one (rows, gamma + 1, V) probability tensor per specmath batch
_BATCH_ELEMENTS = 2**24

#: specmath's own engine: the torch warp (temperature, then top-k, then top-p), no other option
SPECMATH_SEMANTICS = EngineSemantics("specmath", SEMANTICS["hf"].order,
                                     options=frozenset({"temperature", "top_k", "top_p"}))


@dataclass(frozen=True)
class Engine:
    """An engine's generate path, its lossy control, and why it cannot run here (None: it can)."""

    name: str
    description: str
    sample: SampleFn
    control_description: str
    control: SampleFn
    unavailable: Callable[[str], str | None]  # pair name -> reason it cannot run, or None
    lookup: bool = False  # drafts by prompt lookup: audited at the pair's lookup prompt
    semantics: EngineSemantics = SPECMATH_SEMANTICS


# --- specmath's own engine -------------------------------------------------------------------------

def _speculative_samples(pair: AuditPair, draft, options: SamplingOptions, n: int, seed: int,
                         accept_reject=None) -> Samples:
    # accept_reject: None for the production step, or a lossy control from specmath.lm.lossy_controls
    from specmath.lm.speculative_decode import speculative_generate

    SPECMATH_SEMANTICS.check_supports(options)
    sampling = options
    options = {} if accept_reject is None else {"accept_reject": accept_reject}

    rows = max(1, min(1024, _BATCH_ELEMENTS // (pair.vocab_size * (GAMMA + 1))))
    out: Samples = []
    for b, start in enumerate(range(0, n, rows)):
        count = min(rows, n - start)
        gen = speculative_generate(pair.target, draft(), [pair.prompt] * count, max_new_tokens=2, gamma=GAMMA,
                                   sampling=sampling, seed=seed + b, **options)
        out += [(row[0], row[1]) for row in gen.tokens]
    return out


def _model_draft(pair: AuditPair):
    from specmath.lm.drafts import ModelDraft

    return lambda: ModelDraft(pair.draft)


def _lookup_draft(pair: AuditPair):
    from specmath.lm.drafts import PromptLookupDraft

    return lambda: PromptLookupDraft(max_ngram=2)


def specmath_samples(pair: AuditPair, options: SamplingOptions, n: int, seed: int) -> Samples:
    return _speculative_samples(pair, _model_draft(pair), options, n, seed)


def specmath_control(pair: AuditPair, options: SamplingOptions, n: int, seed: int) -> Samples:
    from specmath.lm.lossy_controls import target_resample_accept_reject

    # lossy control: a rejected position is redrawn from p instead of norm(max(0, p - q))
    return _speculative_samples(pair, _model_draft(pair), options, n, seed, target_resample_accept_reject)


def lookup_control(pair: AuditPair, options: SamplingOptions, n: int, seed: int) -> Samples:
    from specmath.lm.lossy_controls import target_resample_accept_reject

    return _speculative_samples(pair, _lookup_draft(pair), options, n, seed, target_resample_accept_reject)


# --- Hugging Face transformers ---------------------------------------------------------------------

def _hf_config(pair: AuditPair, options: SamplingOptions, **extra):
    from specmath.lm.hf_baseline import hf_generation_config

    SEMANTICS["hf"].check_supports(options)
    if options.min_p is not None:
        extra["min_p"] = options.min_p
    if options.repetition_penalty is not None:
        extra["repetition_penalty"] = options.repetition_penalty
    if options.logit_bias:
        extra["sequence_bias"] = {(token,): bias for token, bias in options.logit_bias}
    warp = SamplingOptions(options.temperature, top_k=options.top_k, top_p=options.top_p)  # the rest went to HF's own
    return hf_generation_config(warp, max_new_tokens=2, eos_token_id=None, pad_token_id=pair.pad_token_id, **extra)


def _hf_samples(pair: AuditPair, n: int, seed: int, config, **generate_kwargs) -> Samples:
    prompt = torch.tensor([pair.prompt])
    mask = torch.ones_like(prompt)
    out: Samples = []
    with one_torch_thread(), torch.random.fork_rng(devices=[]), torch.inference_mode():
        for i in range(n):
            torch.manual_seed(seed + i)  # HF draws from the global generator: one seed per call
            ids = pair.target.generate(prompt, attention_mask=mask, generation_config=config, **generate_kwargs)
            new = ids[0, prompt.shape[1]:].tolist()
            if len(new) != 2:
                raise RuntimeError(f"generate returned {len(new)} new tokens, expected 2")
            out.append((new[0], new[1]))
    return out


def hf_assisted_samples(pair: AuditPair, options: SamplingOptions, n: int, seed: int,
                        ensemble_weight: float | None = None) -> Samples:
    extra = {"num_assistant_tokens": GAMMA, "num_assistant_tokens_schedule": "constant",
             "assistant_confidence_threshold": 0.0}
    if ensemble_weight is not None:
        extra["assistant_ensemble_weight"] = ensemble_weight
    return _hf_samples(pair, n, seed, _hf_config(pair, options, **extra), assistant_model=pair.draft)


def hf_assisted_control(pair: AuditPair, options: SamplingOptions, n: int, seed: int) -> Samples:
    return hf_assisted_samples(pair, options, n, seed, ensemble_weight=0.1)


def hf_lookup_samples(pair: AuditPair, options: SamplingOptions, n: int, seed: int) -> Samples:
    return _hf_samples(pair, n, seed, _hf_config(pair, options, prompt_lookup_num_tokens=GAMMA, max_matching_ngram_size=2))


def hf_lookup_control(pair: AuditPair, options: SamplingOptions, n: int, seed: int) -> Samples:
    # specmath's engine takes temperature, top-k and top-p only: under another option the control runs without it,
    # which moves the law too (a control is only asked to be lossy)
    return lookup_control(pair, SamplingOptions(options.temperature, top_k=options.top_k, top_p=options.top_p), n, seed)


def _always(pair: str) -> str | None:
    return None


ENGINES: dict[str, Engine] = {e.name: e for e in (
    Engine("specmath", "specmath.lm.speculative_decode.speculative_generate, model draft, gamma 4, batched",
           specmath_samples, "specmath, residual drawn from p", specmath_control, _always),
    Engine("hf-assisted", "transformers generate(assistant_model=draft, do_sample=True), 4 assistant tokens",
           hf_assisted_samples, "HF assistant_ensemble_weight=0.1 (biased verification)", hf_assisted_control, _always,
           semantics=SEMANTICS["hf"]),
    Engine("hf-lookup", "transformers generate(prompt_lookup_num_tokens=4, do_sample=True)",
           hf_lookup_samples, "specmath prompt lookup, residual drawn from p", hf_lookup_control, _always, lookup=True,
           semantics=SEMANTICS["hf"]),
)}


def engine_named(name: str) -> Engine:
    """The engine called ``name``; UnknownName listing the known ones otherwise."""
    if name not in ENGINES:
        raise UnknownName(f"unknown engine {name!r}; choose from: {', '.join(ENGINES)}")
    return ENGINES[name]
