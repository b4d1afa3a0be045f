"""llama.cpp's generate path (llama-cpp-python) as an engine under audit, on SmolLM2's GGUF.

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)).

``Llama(model_path=GGUF, draft_model=LlamaPromptLookupDecoding(...))``: llama-cpp-python's
speculative path drafts by prompt lookup and checks drafts by *sample-match*: it samples the target's
token at every drafted position with its own sampler chain and keeps drafts up to the first
mismatch (a one-hot q, whose correct rule this is), rolling the KV cache back after it.

Sampler chain: llama-cpp-python applies top-k, typical-p, top-p, min-p, then temperature, then draws.
To sample the configured warp we disable typical-p (1.0), min-p (0.0; its default 0.05 would cut
tokens) and the repeat penalty (1.0), pass top-k 0 (off) unless configured, top-p 1.0 unless
configured. The order differs from HF's (temperature first) but the sets agree for the audited
configurations: top-k keeps the same tokens at any temperature, and top-p runs at T = 1.

Seeding: ``Llama.set_seed(seed + i)`` before call i; the chain, its seeded ``dist`` sampler
included, is rebuilt by every ``generate`` call, so each sample is reproducible on its own.

The exact law is computed from the *same GGUF* dequantised to float32 by transformers
(``specmath.lm.models.load_smollm2``); llama.cpp multiplies Q4_1 weights with 8-bit quantised
activations, so its logits differ from the float32 ones by quantisation noise: the audit then
measures that difference together with the sampler (a TV below the detectable TV passes).
"""

from __future__ import annotations

import functools

from specmath.audit.generate_pairs import AuditPair
from specmath.lm.warps import Sampling

__all__ = ["llama_cpp_samples"]


@functools.cache
def _llama(gamma: int):
    from llama_cpp import Llama
    from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

    from specmath.lm.models import locate_smollm2_gguf

    return Llama(model_path=str(locate_smollm2_gguf()), n_ctx=256, n_threads=1, verbose=False,
                 draft_model=LlamaPromptLookupDecoding(num_pred_tokens=gamma, max_ngram_size=2))


def llama_cpp_samples(pair: AuditPair, sampling: Sampling, n: int, seed: int, gamma: int) -> list[tuple[int, int]]:
    """n calls of ``Llama.generate`` on the pair's prompt, the first two tokens of each."""
    if pair.name != "smollm2":
        raise ValueError(f"llama-cpp runs the SmolLM2 GGUF only, not the {pair.name!r} pair")
    llm = _llama(gamma)
    out = []
    for i in range(n):
        llm.set_seed(seed + i)
        tokens = []
        for token in llm.generate(pair.prompt, temp=sampling.temperature, top_k=sampling.top_k or 0,
                                  top_p=1.0 if sampling.top_p is None else sampling.top_p, min_p=0.0,
                                  typical_p=1.0, repeat_penalty=1.0):
            tokens.append(int(token))
            if len(tokens) == 2:
                break
        out.append((tokens[0], tokens[1]))
    return out
