"""A Python engine as ``specmath audit-generate module:function`` takes it, for the tests and the how-to.

``tiny_speculative`` is specmath's own speculative decoding (``speculative_generate``, a draft model, gamma 4)
on the tiny pair, behind the protocol ``generate(prompt_ids, n, seed, **options) -> n token lists``.
It takes temperature, top-k and top-p (specmath's torch warp, Hugging Face's order: ``semantics = "hf"``).

``exploding_engine`` and ``lossy_engine`` are registry factories (``specmath.audit.engines.registry``) of broken pair
engines, for the tests: one raises, one draws the residual from p on its production path.
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
