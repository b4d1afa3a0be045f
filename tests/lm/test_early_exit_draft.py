"""The early-exit draft (shared first layers, one trained layer, truncated head) on a tiny Llama.

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)).
"""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("transformers")

from lm_tiny import assert_first_tokens_follow, tiny_llama  # noqa: E402

from specmath.lm.drafts import ModelDraft  # noqa: E402
from specmath.lm.early_exit_draft import (  # noqa: E402
    TruncatedHead,
    adapter_model,
    build_early_exit_draft,
    load_early_exit_draft,
    save_adapter,
)
from specmath.lm.histogram import first_token_law, sample_prefixes, two_token_law  # noqa: E402
from specmath.sampling_options import SamplingOptions  # noqa: E402

VOCAB = 16
KEPT = torch.tensor([0, 2, 3, 5, 7, 8, 11, 13])  # half the ids: q(x) = 0 for the other half


@pytest.fixture(scope="module")
def target():
    return tiny_llama(3, vocab_size=VOCAB, layers=3, sharpness=4.0)


def _trained_like(target, seed: int = 0):
    """An adapter whose weights are perturbed away from the target's last layer (as training would)."""
    adapter = adapter_model(target)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for w in adapter.parameters():
            w.add_(0.3 * torch.randn(w.shape, generator=g) * w.std().clamp(min=1e-3))
    return adapter


def test_truncated_head_scores_kept_ids_only():
    w = torch.randn(VOCAB, 8)
    head = TruncatedHead(w[KEPT], KEPT, VOCAB)
    h = torch.randn(2, 3, 8)
    logits = head(h)
    assert logits.shape == (2, 3, VOCAB)
    others = torch.ones(VOCAB, dtype=torch.bool)
    others[KEPT] = False
    assert torch.isneginf(logits[..., others]).all()
    # the same rows of the same matrix, multiplied as a smaller GEMM: float sums may be ordered differently
    torch.testing.assert_close(logits[..., KEPT], h @ w[KEPT].T, rtol=1e-5, atol=1e-6)
    q = torch.softmax(logits, -1)
    assert (q[..., others] == 0).all() and not q.isnan().any()


@pytest.mark.parametrize("kept, problem", [(torch.tensor([1, 1]), "repeat"), (torch.tensor([0, VOCAB]), "lie in"),
                                           (torch.tensor([], dtype=torch.long), "non-empty")])
def test_truncated_head_rejects_bad_kept_ids(kept, problem):
    with pytest.raises(ValueError, match=problem):
        TruncatedHead(torch.zeros(len(kept), 8), kept, VOCAB)


def test_draft_computes_what_training_computed(target):
    """Train/inference agreement: target layers [0, K), then the adapter, on the same tokens."""
    adapter = _trained_like(target)
    k = 2
    draft = build_early_exit_draft(target, k, adapter.layers[0].state_dict(), adapter.norm.weight, KEPT)
    x = torch.tensor([[1, 4, 2, 9, 3, 3, 7]])
    captured = {}
    hook = target.model.layers[k - 1].register_forward_hook(lambda m, a, out: captured.__setitem__("h", out[0] if isinstance(out, tuple) else out))
    with torch.no_grad():
        target(input_ids=x)
        hook.remove()
        trained = adapter(inputs_embeds=captured["h"]).last_hidden_state @ target.lm_head.weight[KEPT].T
        logits = draft(input_ids=x).logits
    # two module graphs doing the same float ops; tolerance for a possibly different GEMM blocking
    torch.testing.assert_close(logits[..., KEPT], trained, rtol=1e-5, atol=1e-5)
    assert draft.model.layers[0] is target.model.layers[0], "shared layers are the target's, not copies"


def test_file_round_trip_and_errors(tmp_path, target):
    adapter = _trained_like(target)
    path = tmp_path / "draft.safetensors"
    save_adapter(path, adapter, KEPT, 2, {"note": "test"})
    a = build_early_exit_draft(target, 2, adapter.layers[0].state_dict(), adapter.norm.weight, KEPT)
    b = load_early_exit_draft(target, path)
    x = torch.tensor([[3, 1, 4, 1, 5]])
    with torch.no_grad():
        # the same modules and weights in one process: bit-identical
        assert torch.equal(a(input_ids=x).logits, b(input_ids=x).logits)
    with pytest.raises(ValueError, match="missing"):
        load_early_exit_draft(target, tmp_path / "none.safetensors")
    with pytest.raises(ValueError, match="shared_layers must be"):
        build_early_exit_draft(target, 3, adapter.layers[0].state_dict(), adapter.norm.weight, KEPT)
    wide = tiny_llama(0, vocab_size=VOCAB, layers=3)
    wide.config.hidden_size = 64  # a target of another width must be refused, not mis-read
    with pytest.raises(ValueError, match="hidden size"):
        load_early_exit_draft(wide, path)


def test_speculative_decoding_with_a_truncated_draft_samples_the_target_law(target):
    """q(x) = 0 for half the ids: those reach the output only through the residual max(p - q, 0).

    N = 3000, vocabulary 16, T = 1: the G-test at level 1e-6 detects a TV >= detectable_tv (asserted
    < 0.15) with probability 0.99 (``histogram_check``).
    """
    adapter = _trained_like(target, 1)
    draft = build_early_exit_draft(target, 2, adapter.layers[0].state_dict(), adapter.norm.weight, KEPT)
    prompt = [1, 2, 3, 1]
    law1, law2 = first_token_law(target, prompt, SamplingOptions()), two_token_law(target, prompt, SamplingOptions())
    outside = sum(law1[x] for x in range(VOCAB) if x not in set(KEPT.tolist()))
    assert outside > 0.05, f"the test needs target mass outside the kept ids, got {outside:.3f}"
    samples = sample_prefixes(target, ModelDraft(draft), prompt, 3000, 2, gamma=3, sampling=SamplingOptions(), seed=0, batch_size=3000)
    assert_first_tokens_follow(samples, law1, law2, 0.15)
