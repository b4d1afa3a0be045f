"""A Python engine as ``specmath audit-generate module:function`` takes it, for the tests and the how-to.

``tiny_speculative`` is specmath's own speculative decoding (``speculative_generate``, a draft model, gamma 4)
on the tiny pair, behind the protocol ``generate(prompt_ids, n, seed, **options) -> n token lists``.
It takes temperature, top-k and top-p (specmath's torch warp, Hugging Face's order: ``semantics = "hf"``).

``exploding_engine``, ``lossy_engine``, ``refusing_engine`` and ``harmless_control_engine`` are registry factories
(``specmath.audit.engines.registry``) of pair engines for the tests of the verdicts: one raises (ENGINE ERROR), one
draws the residual from p on its production path (LOSS), one rejects every request (REFUSED), one whose control is
not lossy (INCONCLUSIVE).
"""

from __future__ import annotations


def tiny_speculative(prompt_ids, n, seed, *, max_new_tokens, temperature=1.0, top_k=None, top_p=None):
    from specmath.lm.decode_options import DecodeOptions
    from specmath.lm.drafts import ModelDraft
    from specmath.lm.speculative_decode import speculative_generate
    from specmath.lm.tiny_pair import make_tiny_pair
    from specmath.sampling_options import SamplingOptions

    target, draft = make_tiny_pair(0)
    options = DecodeOptions(gamma=4, sampling=SamplingOptions(temperature, top_k=top_k, top_p=top_p), seed=seed)
    out = speculative_generate(target, ModelDraft(draft), [list(prompt_ids)] * n, max_new_tokens, options)
    return [row[:max_new_tokens] for row in out.tokens]


tiny_speculative.semantics = "hf"


def exploding_engine(entry, opening):
    """A pair engine whose every generate call raises."""
    from specmath.audit.engines.torch_engines import SpecmathEngine

    class Exploding(SpecmathEngine):
        def _rows(self, prompt, n, seed, m, options, mode):
            raise RuntimeError("engine exploded")

    return Exploding(entry, opening.target)


def lossy_engine(entry, opening):
    """specmath's engine with its own control (the residual drawn from p) as its production path."""
    from specmath.audit.engines.torch_engines import SpecmathEngine

    class Lossy(SpecmathEngine):
        def _rows(self, prompt, n, seed, m, options, mode):
            return super()._rows(prompt, n, seed, m, options, "residual-from-p")

    return Lossy(entry, opening.target)


def refusing_engine(entry, opening):
    """A pair engine that rejects every generate request, as vLLM rejects min_p with speculative decoding."""
    from specmath.audit.engines.protocol import EngineRefused
    from specmath.audit.engines.torch_engines import SpecmathEngine

    class Refusing(SpecmathEngine):
        def _rows(self, prompt, n, seed, m, options, mode):
            raise EngineRefused("this option is not supported with speculative decoding")

    return Refusing(entry, opening.target)


def harmless_control_engine(entry, opening):
    """specmath's engine whose control runs the engine's own, lossless path: a control no N can catch."""
    from specmath.audit.engines.torch_engines import SpecmathEngine

    class Harmless(SpecmathEngine):
        def _rows(self, prompt, n, seed, m, options, mode):
            return super()._rows(prompt, n, seed, m, options, "engine" if mode != "plain" else mode)

    return Harmless(entry, opening.target)
