"""LeanLlama: the same Llama forward without HF's per-call wrapper; same logits, lossless decoding, clear errors.

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)).
"""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("transformers")

from lm_tiny import assert_first_tokens_follow, noisy_copy, tiny_llama, tiny_pair  # noqa: E402

from specmath.lm.bench import bench_pair  # noqa: E402
from specmath.lm.cache import RowCache  # noqa: E402
from specmath.lm.decode_options import DecodeOptions  # noqa: E402
from specmath.lm.drafts import ModelDraft  # noqa: E402
from specmath.lm.histogram import first_token_law, sample_prefixes, two_token_law  # noqa: E402
from specmath.lm.lean_llama import LeanLlama, hf_model, lean_unsupported  # noqa: E402
from specmath.lm.models import int8_draft, layer_skip_draft  # noqa: E402
from specmath.lm.packed_linear import PackedLinear, pack_linears, packing_available  # noqa: E402
from specmath.lm.plain_decode import plain_generate  # noqa: E402
from specmath.lm.speculative_decode import speculative_generate  # noqa: E402
from specmath.sampling_options import SamplingOptions  # noqa: E402

ROWS = [[1, 5, 9, 2, 7, 3, 3, 8], [4, 4, 1], [6, 2, 9, 9, 1, 30]]


def _feed_rounds(model) -> list[torch.Tensor]:
    """Logits of the real tokens through a batched RowCache: prefill, a ragged block, a rollback with holes, another block."""
    cache = RowCache(model, 3)
    cache.prefill([r[:-1] for r in ROWS])
    out = []
    block = [[r[-1]] + [11, 12, 13][:i] for i, r in enumerate(ROWS)]  # 1, 2 and 4 tokens: padding in rows 0, 1
    logits = cache.feed(block)
    out += [logits[b, : len(block[b])] for b in range(3)]
    cache.keep([len(ROWS[0]), len(ROWS[1]) + 1, len(ROWS[2]) + 1])  # row 2 drops two slots: holes
    block = [[20, 21], [22], [23, 24, 25]]
    logits = cache.feed(block)
    out += [logits[b, : len(block[b])] for b in range(3)]
    return out


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_logits_match_the_hf_forward_through_batches_holes_and_rollback(dtype):
    """Every real token's logits equal HF's up to summation order.

    The lean pass stacks q/k/v and gate/up into one product and calls SDPA with enable_gqa instead of
    repeating k/v (this model has 4 query and 2 key/value heads): each output is the same dot product,
    possibly blocked differently. Logits here are of size ~0.1-1; float32 rounding of a 32-wide model
    through 2 layers stays below 1e-5, so rtol 1e-4 / atol 1e-5 (float32) and 1e-10 (float64) allow
    reordering and catch any wrong mask, position or rotation (those move logits by > 1e-3).
    """
    model = tiny_llama(3).to(dtype)
    lean = LeanLlama(model)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-10, atol=1e-10)
    for ours, theirs in zip(_feed_rounds(lean), _feed_rounds(model), strict=True):
        torch.testing.assert_close(ours, theirs, **tol)


def test_without_a_cache_and_with_logits_to_keep():
    model = tiny_llama(4)
    lean = LeanLlama(model)
    x = torch.tensor([[1, 2, 3, 4, 5]])
    with torch.no_grad():
        full = lean(x, use_cache=False).logits
        ref = model(input_ids=x).logits
        last = lean(x, use_cache=False, logits_to_keep=1).logits
    torch.testing.assert_close(full, ref, rtol=1e-4, atol=1e-5)  # float32 reordering, as above
    assert last.shape == (1, 1, 48)
    torch.testing.assert_close(last[:, 0], full[:, -1])
    assert hf_model(lean) is model and hf_model(model) is model
    assert lean.get_output_embeddings() is model.lm_head


def test_the_kept_positions_logits_come_from_one_matrix_product():
    """logits_to_keep = k: the last k positions' logits of every row, the head applied to a (B k, H) matrix (a sliced
    3-d input makes torch's CPU product copy the weight first: ``lean_llama.last_logits``); a 1-d tensor of positions:
    those positions' logits."""
    lean = LeanLlama(tiny_llama(4))
    x = torch.tensor([[1, 2, 3, 4, 5], [5, 4, 3, 2, 1]])
    inputs = []
    hook = lean.lm_head.register_forward_hook(lambda module, args, out: inputs.append(args[0].shape))
    with torch.no_grad():
        full = lean(x, use_cache=False).logits
        for keep in (1, 2, 5):
            kept = lean(x, use_cache=False, logits_to_keep=keep).logits
            assert kept.shape == (2, keep, 48)
            torch.testing.assert_close(kept, full[:, -keep:])  # the same rows through the same product
        # Hugging Face's other form, positions by index (what RowCache's prefill passes): gathered, not sliced
        picked = lean(x, use_cache=False, logits_to_keep=torch.tensor([1, 4])).logits
        torch.testing.assert_close(picked, full[:, [1, 4]])
    hook.remove()
    assert inputs == [(2, 5, 32), (2, 32), (4, 32), (10, 32), (2, 2, 32)]  # hidden size 32


def test_shared_and_quantised_projections_run_as_loaded():
    """A layer-skip self-draft shares the target's layers; an int8 draft keeps its quantised modules unstacked."""
    target = tiny_llama(5, layers=3)
    skip = LeanLlama(layer_skip_draft(target, 1))
    assert len(skip.layers) == 1 and skip.layers[0].o_proj is target.model.layers[0].self_attn.o_proj
    quantised = int8_draft(target)
    lean = LeanLlama(quantised)
    assert lean.layers[0].qkv is None and lean.layers[0].q_proj is quantised.model.layers[0].self_attn.q_proj
    x = torch.tensor([[3, 1, 4, 1, 5, 9]])
    with torch.no_grad():
        # the same int8 kernels called one by one: identical up to float32 reordering (see above)
        torch.testing.assert_close(lean(x, use_cache=False).logits, quantised(input_ids=x).logits, rtol=1e-4, atol=1e-5)


def test_a_lean_draft_samples_the_target_law_exactly():
    """Accept/reject uses the q the lean draft sampled from, so the output law is p.

    N = 3000, vocabulary 48, T = 1: the G-test at level 1e-6 detects a TV >= detectable_tv (asserted < 0.2)
    with probability 0.99 (``histogram_check``).
    """
    target = tiny_llama(2, sharpness=3.0)
    draft = LeanLlama(noisy_copy(target, 0.3, 5))
    prompt = [1, 5, 9, 2]
    law1, law2 = first_token_law(target, prompt, SamplingOptions()), two_token_law(target, prompt, SamplingOptions())
    samples = sample_prefixes(target, ModelDraft(draft), prompt, 3000, 2, DecodeOptions(gamma=3, sampling=SamplingOptions(), seed=0), batch_size=3000)
    assert_first_tokens_follow(samples, law1, law2, 0.2)


def test_greedy_decoding_with_lean_target_and_draft_equals_hf_plain_greedy():
    """float64: the lean and HF passes agree to ~1e-13, far below this sharp model's top-2 gaps."""
    target = tiny_llama(6, sharpness=20.0).double()
    draft = noisy_copy(target, 0.2, 1)
    prompts = [[3, 1, 4, 1, 5], [2, 7, 1]]
    reference = plain_generate(target, prompts, 20, DecodeOptions(sampling=SamplingOptions(0.0), seed=0)).tokens
    lean_target = LeanLlama(target)
    assert plain_generate(lean_target, prompts, 20, DecodeOptions(sampling=SamplingOptions(0.0), seed=0)).tokens == reference
    spec = speculative_generate(lean_target, ModelDraft(LeanLlama(draft)), prompts, 20, DecodeOptions(gamma=3, sampling=SamplingOptions(0.0), seed=0))
    assert spec.tokens == reference
    assert spec.rounds < 20  # the draft was accepted at least once


@pytest.mark.skipif(not packing_available(), reason="this CPU has no oneDNN bfloat16 (AVX-512 BF16 or AMX)")
def test_packing_a_lean_model_packs_its_stacked_and_shared_projections_once():
    target = tiny_llama(7, layers=2).to(torch.bfloat16)
    x = torch.tensor([[1, 2, 3, 4]])
    with torch.no_grad():
        before = target(input_ids=x).logits.float()
    lean = LeanLlama(target)
    # HF model: 2 x 7 projections + lm_head; lean adds 2 x (qkv, gate_up); o, down and lm_head are shared
    assert pack_linears(target, lean) == 2 * 7 + 1 + 2 * 2
    assert isinstance(lean.layers[0].qkv, PackedLinear) and lean.layers[0].o_proj is target.model.layers[0].self_attn.o_proj
    with torch.no_grad():
        after = lean(x, use_cache=False).logits.float()
    # bfloat16 (2^-7 relative) through 2 layers, summed in another order: a few ulps of logits of size ~1
    torch.testing.assert_close(after, before, rtol=5e-2, atol=5e-2)


def test_bench_runs_hf_on_the_models_as_loaded():
    target = tiny_llama(8, sharpness=5.0)
    draft = ModelDraft(LeanLlama(noisy_copy(target, 0.2, 2)))
    r = bench_pair(tiny_pair(LeanLlama(target), draft), None, 8, DecodeOptions(gamma=2), progress=False)
    assert r.tokens_per_s.hf_assisted > 0 and r.new_tokens.hf_assisted == 8


def test_unsupported_models_and_options_are_named():
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

    gpt2 = GPT2LMHeadModel(GPT2Config(n_layer=1, n_embd=16, n_head=2, vocab_size=20))
    with pytest.raises(ValueError, match="not a Llama-architecture model"):
        LeanLlama(gpt2)
    config = LlamaConfig(vocab_size=20, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                         hidden_act="gelu")
    assert "hidden_act" in lean_unsupported(LlamaForCausalLM(config))
    config = LlamaConfig(vocab_size=20, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                         rope_parameters={"rope_type": "linear", "factor": 2.0, "rope_theta": 10000.0})
    assert "rope_type" in lean_unsupported(LlamaForCausalLM(config))
    lean = LeanLlama(tiny_llama(0))
    with pytest.raises(ValueError, match="attention_mask covers"):
        lean(torch.tensor([[1, 2]]), attention_mask=torch.ones(1, 5, dtype=torch.long), use_cache=False)


def test_pairs_take_a_lean_option():
    from specmath.lm.pairs import load_named_pair

    pair = load_named_pair("bundled", lean="all")
    assert isinstance(pair.target, LeanLlama) and isinstance(pair.draft.model, LeanLlama)
    assert not isinstance(hf_model(pair.target), LeanLlama)
    drafted = load_named_pair("bundled", lean="draft")
    assert not isinstance(drafted.target, LeanLlama) and isinstance(drafted.draft.model, LeanLlama)
    with pytest.raises(ValueError, match="unknown lean setting .target."):
        load_named_pair("bundled", lean="target")
