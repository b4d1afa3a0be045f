"""Linear layers packed for oneDNN (bfloat16 on the CPU): same products, same laws, clear errors.

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)).
The tests that run a packed product need a CPU with bfloat16 support in oneDNN (AVX-512 BF16 or AMX);
on another CPU (AVX2) they are skipped with that reason and the error paths still run.
"""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("transformers")

from lm_tiny import assert_first_tokens_follow, noisy_copy, tiny_llama  # noqa: E402

from specmath.lm import packed_linear  # noqa: E402
from specmath.lm.drafts import ModelDraft  # noqa: E402
from specmath.lm.early_exit_draft import TruncatedHead  # noqa: E402
from specmath.lm.histogram import first_token_law, sample_prefixes, two_token_law  # noqa: E402
from specmath.lm.models import layer_skip_draft  # noqa: E402
from specmath.lm.packed_linear import PackedLinear, pack_linears, packing_available  # noqa: E402
from specmath.lm.speculative_decode import speculative_generate  # noqa: E402
from specmath.sampling_options import SamplingOptions  # noqa: E402

needs_bf16 = pytest.mark.skipif(not packing_available(), reason="this CPU has no oneDNN bfloat16 (AVX-512 BF16 or AMX)")


def _bf16(model):
    return model.to(torch.bfloat16)


@needs_bf16
@pytest.mark.parametrize("rows", [1, 3, 9])
@pytest.mark.parametrize("bias", [False, True])
def test_packed_product_matches_linear(rows, bias):
    torch.manual_seed(rows)
    linear = torch.nn.Linear(64, 40, bias=bias).to(torch.bfloat16)
    x = torch.randn(2, rows, 64).to(torch.bfloat16)
    packed = PackedLinear.from_linear(linear)
    assert (packed.in_features, packed.out_features) == (64, 40)
    # the same bfloat16 product with float32 accumulation, blocked differently: outputs of size ~8 differ
    # by at most a few bfloat16 ulps (1 ulp = 2^-7 relative); 3e-2 relative allows that, a wrong row/bias would not pass
    torch.testing.assert_close(packed(x).float(), linear(x).float(), rtol=3e-2, atol=3e-2)


@needs_bf16
def test_shared_modules_are_packed_once_and_stay_shared():
    target = _bf16(tiny_llama(1, layers=3))
    target.lm_head = torch.nn.Linear(32, 48, bias=False).to(torch.bfloat16)
    draft = layer_skip_draft(target, 1)  # shares layer 0 and the output layer
    count = pack_linears(target, draft)
    # 3 layers x (q, k, v, o, gate, up, down) + the shared lm_head, each packed once
    assert count == 3 * 7 + 1
    assert isinstance(target.lm_head, PackedLinear) and draft.lm_head is target.lm_head
    assert draft.model.layers[0] is target.model.layers[0]
    assert not any(isinstance(m, torch.nn.Linear) for m in [*target.modules(), *draft.modules()])


@needs_bf16
def test_packed_model_keeps_its_law_and_decodes_losslessly():
    """Packing changes bfloat16 rounding only: first-token laws within 0.02 TV of the unpacked model's;
    speculative sampling with packed models then samples the packed target's law exactly.

    N = 3000, vocabulary 48, T = 1: the G-test at level 1e-6 detects a TV >= detectable_tv (asserted < 0.2)
    with probability 0.99 (``histogram_check``).
    """
    float_target = tiny_llama(2, sharpness=3.0)
    draft = _bf16(noisy_copy(float_target, 0.3, 5))
    target = _bf16(float_target)
    prompt = [1, 5, 9, 2]
    before = first_token_law(target, prompt, SamplingOptions())
    pack_linears(target, draft)
    law1, law2 = first_token_law(target, prompt, SamplingOptions()), two_token_law(target, prompt, SamplingOptions())
    tv = 0.5 * sum(abs(law1[x] - before[x]) for x in before)
    assert tv < 0.02, f"packing moved the first-token law by TV {tv:.4f}"
    samples = sample_prefixes(target, ModelDraft(draft), prompt, 3000, 2, gamma=3, sampling=SamplingOptions(), seed=0, batch_size=3000)
    assert_first_tokens_follow(samples, law1, law2, 0.2)


@needs_bf16
def test_packed_greedy_speculative_emits_the_target_argmax():
    """T = 0 with packed models: every emitted token is the target's argmax on its prefix.

    The prefix is re-scored in one pass over all 24 tokens, while decoding scored 1 to 5 tokens at a
    time: bfloat16 sums in another order differ by a few ulps, so a token counts as the argmax when its
    logit is within tol = 0.05 max|logit| (about 6 bfloat16 ulps) of the top one. The check is sharp:
    at >= 20 of the 24 steps the runner-up trails by more than tol, so a token accepted without
    verification there would fail it.
    """
    target = _bf16(tiny_llama(4, sharpness=40.0))
    draft = layer_skip_draft(target, 1)
    pack_linears(target, draft)
    prompt = [3, 1, 4, 1, 5]
    spec = speculative_generate(target, ModelDraft(draft), [prompt], 24, gamma=4, sampling=SamplingOptions(0.0), seed=0).tokens[0]
    with torch.no_grad():
        logits = target(torch.tensor([prompt + spec[:-1]])).logits[0, len(prompt) - 1:].float()
    tol = 0.05 * logits.abs().max()
    chosen = logits.gather(-1, torch.tensor(spec)[:, None])[:, 0]
    assert (logits.max(-1).values - chosen <= tol).all(), "an emitted token is not the target's argmax"
    top2 = logits.topk(2, dim=-1).values
    assert int((top2[:, 0] - top2[:, 1] > tol).sum()) >= 20, "the model has too many near-ties to test: pick another seed"


@needs_bf16
def test_truncated_head_packs_itself():
    w = torch.randn(16, 32).to(torch.bfloat16)
    kept = torch.tensor([0, 3, 5, 9])
    head = TruncatedHead(w[kept], kept, 16)
    h = torch.randn(1, 2, 32).to(torch.bfloat16)
    before = head(h)
    holder = torch.nn.Sequential(head)
    assert pack_linears(holder) == 1
    after = head(h)
    assert torch.isneginf(after[..., [1, 2, 4]]).all()
    # same product, different blocking: a few bfloat16 ulps (see test_packed_product_matches_linear)
    torch.testing.assert_close(after[..., kept].float(), before[..., kept].float(), rtol=3e-2, atol=3e-2)


@needs_bf16
def test_an_early_exit_draft_packs_with_its_target():
    """Shared layers, an own adapter layer and a TruncatedHead: each keeps its role after packing."""
    from specmath.lm.early_exit_draft import adapter_model, build_early_exit_draft

    target = tiny_llama(3, vocab_size=16, layers=3, sharpness=4.0)
    adapter = adapter_model(target)
    kept = torch.tensor([0, 2, 3, 5, 7, 8, 11, 13])
    draft = build_early_exit_draft(target, 2, adapter.layers[0].state_dict(), adapter.norm.weight, kept)
    target, draft = _bf16(target), _bf16(draft)
    x = torch.tensor([[1, 4, 2, 9, 3]])
    with torch.no_grad():
        before = draft(input_ids=x).logits.float()
        pack_linears(target, draft)
        after = draft(input_ids=x).logits.float()
    assert isinstance(draft.lm_head, TruncatedHead) and draft.lm_head.packed is not None
    assert draft.model.layers[0] is target.model.layers[0]
    assert torch.isneginf(after[..., [1, 4, 6]]).all()
    # bfloat16 through 3 layers, summed in another order: a few ulps of logits of size ~10 (see above)
    torch.testing.assert_close(after[..., kept], before[..., kept], rtol=5e-2, atol=1e-1)


def test_pairs_refuse_to_pack_float32():
    from specmath.lm.pairs import load_named_pair

    with pytest.raises(ValueError, match="dtype=torch.bfloat16"):
        load_named_pair("bundled", pack_weights=True)


def test_errors_name_the_problem(monkeypatch):
    with pytest.raises(ValueError, match="bfloat16 weight"):
        PackedLinear(torch.zeros(4, 4))  # float32
    model = tiny_llama(0)  # float32
    if packing_available():
        with pytest.raises(ValueError, match="bfloat16 weight"):
            pack_linears(model)
        packed = PackedLinear(torch.zeros(4, 4, dtype=torch.bfloat16))
        with pytest.raises(TypeError, match="bfloat16"):
            packed(torch.zeros(1, 4))
    monkeypatch.setattr(packed_linear, "packing_available", lambda: False)
    with pytest.raises(ValueError, match="AMX"):
        pack_linears(model)
