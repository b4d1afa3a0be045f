"""Tiny randomly initialised Llama models for the tests of specmath.lm (built in code, never downloaded)."""

from __future__ import annotations

import torch
from transformers import LlamaConfig, LlamaForCausalLM


def tiny_llama(seed: int, vocab_size: int = 48, layers: int = 2, sharpness: float = 1.0) -> LlamaForCausalLM:
    """A 2-layer Llama with hidden size 32; ``sharpness`` scales the LM head so the laws are peaked."""
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=vocab_size, hidden_size=32, intermediate_size=64, num_hidden_layers=layers,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512, tie_word_embeddings=False)
    model = LlamaForCausalLM(config).eval().requires_grad_(False)
    model.lm_head.weight.mul_(sharpness)
    return model


def noisy_copy(model: LlamaForCausalLM, noise: float, seed: int) -> LlamaForCausalLM:
    """The same model with Gaussian noise on every weight: a draft that agrees with it often, not always."""
    import copy

    torch.manual_seed(seed)
    draft = copy.deepcopy(model)
    for w in draft.parameters():
        w.add_(noise * torch.randn_like(w) * w.std().clamp(min=1e-3))
    return draft


def tiny_pair(target, draft, name: str = "tiny"):
    """A ``pairs.Pair`` of tiny models for ``bench_pair``: no tokenizer, the whole vocabulary, no eos."""
    from specmath.lm.pairs import Pair

    return Pair(name, target, draft, tokenizer=None, vocab_size=None, prompts=[[1, 2, 3]])


def assert_first_tokens_follow(samples, law1, law2, max_detectable_tv: float) -> None:
    """G-tests of the first token and the first two tokens of ``samples`` against exact laws.

    Level 1e-6; each test must detect a TV >= max_detectable_tv with probability 0.99
    (``histogram_check``'s power), so a passing test says something at the sample size used.
    """
    from specmath.lm.histogram import histogram_check

    for what, s, law in (("first token", [t[0] for t in samples], law1), ("first two tokens", samples, law2)):
        check = histogram_check(what, s, law)
        assert check.detectable_tv < max_detectable_tv, f"{what}: N too small, detects only TV >= {check.detectable_tv:.3f}"
        assert check.p_value > 1e-6, f"{what}: G={check.statistic:.1f} p={check.p_value:.2e}"
