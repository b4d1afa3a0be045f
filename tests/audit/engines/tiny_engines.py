"""A Python engine as ``specmath audit-generate module:function`` takes it, for the tests and the how-to.

``tiny_speculative`` is specmath's own speculative decoding (``speculative_generate``, a draft model, gamma 4)
on the tiny pair, behind the protocol ``generate(prompt_ids, n, seed, **options) -> n token lists``.
It takes temperature, top-k and top-p (specmath's torch warp, Hugging Face's order: ``semantics = "hf"``).
"""

from __future__ import annotations


def tiny_speculative(prompt_ids, n, seed, *, max_new_tokens, temperature=1.0, top_k=None, top_p=None):
    from specmath.lm.drafts import ModelDraft
    from specmath.lm.speculative_decode import speculative_generate
    from specmath.lm.tiny_pair import make_tiny_pair
    from specmath.sampling_options import SamplingOptions

    target, draft = make_tiny_pair(0)
    out = speculative_generate(target, ModelDraft(draft), [list(prompt_ids)] * n, max_new_tokens=max_new_tokens,
                               gamma=4, sampling=SamplingOptions(temperature, top_k=top_k, top_p=top_p), seed=seed)
    return [row[:max_new_tokens] for row in out.tokens]


tiny_speculative.semantics = "hf"
