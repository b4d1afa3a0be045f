"""A tiny target/draft pair made in code: two small randomly initialised Llama models, seeded.

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)).

``make_tiny_pair(seed)`` builds, without any file or download, a 2-layer target and a 1-layer draft
(``LlamaForCausalLM``, hidden size 32, vocabulary ``TINY_VOCAB`` = 32 token ids, no tokenizer) from
``torch.Generator``-seeded initial weights, so the same seed always gives the same pair. They are
the models an engine audit can afford to call thousands of times in CI (a forward takes well under
a millisecond of compute).

Why the weights are not the usual 0.02-scaled init: at that scale every logit is close to 0 and
both laws are nearly uniform, so p and q are almost equal and a lossy engine would emit nearly the
right law (no test could tell). The output layer is scaled (``LOGIT_SCALE``) so that p and q are
peaked and far apart (alpha around 0.5): a residual drawn from the wrong law then moves the
output law by a TV the audit detects.
"""

from __future__ import annotations

import torch

from specmath.validation import check_seed

__all__ = ["make_tiny_pair", "TINY_VOCAB"]

#: token ids 0..TINY_VOCAB - 1 (no tokenizer: the audits feed ids)
TINY_VOCAB = 32
#: standard deviation of the output-layer weights: logits of a few units, so laws are peaked
LOGIT_SCALE = 1.5


def _tiny_llama(layers: int, seed: int) -> torch.nn.Module:
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=TINY_VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=layers,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
        tie_word_embeddings=False, bos_token_id=None, eos_token_id=None, pad_token_id=0,
    )
    generator = torch.Generator().manual_seed(seed)
    model = LlamaForCausalLM(config)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if "norm" in name:
                continue  # RMSNorm weights stay 1
            if "embed" in name:
                scale = 1.0  # unit-scale token embeddings
            else:
                # N(0, gain^2 / fan_in): unit-scale inputs give outputs of scale ``gain``
                gain = LOGIT_SCALE if name.startswith("lm_head") else 1.0
                scale = gain / param.shape[-1] ** 0.5
            param.copy_(torch.randn(param.shape, generator=generator) * scale)
    model.generation_config.pad_token_id = 0
    model.generation_config.eos_token_id = None
    return model.float().eval().requires_grad_(False)


def make_tiny_pair(seed: int = 0) -> tuple[torch.nn.Module, torch.nn.Module]:
    """(target, draft): a 2-layer and a 1-layer Llama over ``TINY_VOCAB`` ids, weights drawn from ``seed``."""
    seed = check_seed(seed)
    return _tiny_llama(2, 2 * seed), _tiny_llama(1, 2 * seed + 1)
