"""Speculative decoding in torch on tiny random Llama models: caches, batches, seeds, dtypes.

The pair is float64: tests that compare a cached (incremental, batched) forward with a fresh one, or
greedy speculative with greedy plain decoding, compare two computation paths whose float64 results
differ by ~1e-15 relative, far below the tolerances and the logit gaps these tests rely on.
"""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("transformers")

from lm_tiny import noisy_copy, tiny_llama  # noqa: E402

from specmath.lm.cache import RowCache  # noqa: E402
from specmath.lm.drafts import PromptLookupDraft  # noqa: E402
from specmath.lm.plain_decode import plain_generate  # noqa: E402
from specmath.lm.speculative_decode import speculative_generate  # noqa: E402
from specmath.sampling_options import SamplingOptions  # noqa: E402

GREEDY = SamplingOptions(temperature=0)
PROMPTS = [[1, 2, 3, 4, 5], [7, 8], [9, 10, 11, 12, 13, 14, 15, 16, 9, 10]]


@pytest.fixture(scope="module")
def pair():
    target = tiny_llama(0, sharpness=4.0).double()
    return target, noisy_copy(target, 0.3, seed=1)


def test_row_cache_rollback_with_holes_gives_the_logits_of_a_fresh_forward(pair):
    target, _ = pair
    cache = RowCache(target, 2)
    cache.feed([[1, 2, 3], [4, 5]])
    cache.feed([[6, 7, 8], [9]])
    cache.keep([4, 2])  # row 0 drops 7, 8; row 1 drops 9: holes and a crop
    logits = cache.feed([[20, 21], [22]])
    for b, seq in enumerate([[1, 2, 3, 6, 20, 21], [4, 5, 22]]):
        fresh = target(input_ids=torch.tensor([seq])).logits[0, -1]
        got = logits[b, 1 if b == 0 else 0]
        # two paths (cache with holes vs one fresh forward): float64 rounding ~1e-15, a wrong slot or position ~1e-1
        assert torch.allclose(got, fresh, rtol=0, atol=1e-9), f"row {b}: cached logits differ from a fresh forward"


def test_a_hole_free_rollback_to_one_count_is_a_crop_and_holes_come_back_when_counts_differ(pair):
    """The host-only crop (no hole, every row keeps k) leaves the state the general rollback leaves."""
    target, _ = pair
    cache = RowCache(target, 2)
    cache.feed([[1, 2, 3], [4, 5, 6]])
    cache.feed([[7, 8], [9, 10]])
    cache.keep([4, 4])  # the crop: both rows drop their last token
    assert cache.slots.shape == (2, 4) and bool(cache.slots.all()) and not cache._holes and cache.lengths == [4, 4]
    assert cache.cache.get_seq_length() == 4
    logits = cache.feed([[11], [12]])
    for b, seq in enumerate([[1, 2, 3, 7, 11], [4, 5, 6, 9, 12]]):
        fresh = target(input_ids=torch.tensor([seq])).logits[0, -1]
        # float64, cached vs fresh forward: rounding ~1e-15; a wrong slot or position moves logits by ~1e-1
        assert torch.allclose(logits[b, 0], fresh, rtol=0, atol=1e-9)
    cache.keep([5, 3])  # different counts: row 1 gets holes, read from the device as before
    assert cache._holes and cache.lengths == [5, 3] and cache.slots.tolist() == [[1] * 5, [1, 1, 1, 0, 0]]


def test_greedy_speculative_equals_greedy_plain_for_a_batch_with_different_acceptances(pair):
    target, draft = pair
    reference = [plain_generate(target, [p], 24, sampling=GREEDY).tokens[0] for p in PROMPTS]
    assert plain_generate(target, PROMPTS, 24, sampling=GREEDY).tokens == reference
    for gamma in (1, 3, 5):
        out = speculative_generate(target, draft, PROMPTS, 24, gamma=gamma, sampling=GREEDY)
        assert out.tokens == reference, f"gamma={gamma}"
        # rows accepted different numbers of drafts in the same rounds
        assert sum(1 for c in out.accepted_hist if c) >= 2, out.accepted_hist
    lookup = speculative_generate(target, PromptLookupDraft(), PROMPTS, 24, gamma=3, sampling=GREEDY)
    assert lookup.tokens == reference


def test_same_seed_gives_same_tokens_and_another_seed_other_tokens(pair):
    target, draft = pair
    a = speculative_generate(target, draft, PROMPTS, 16, gamma=3, seed=5).tokens
    b = speculative_generate(target, draft, PROMPTS, 16, gamma=3, seed=5).tokens
    c = speculative_generate(target, draft, PROMPTS, 16, gamma=3, seed=6).tokens
    assert a == b
    assert a != c


def test_a_draft_equal_to_the_target_is_always_accepted(pair):
    target, _ = pair
    out = speculative_generate(target, target, PROMPTS, 20, gamma=4, sampling=SamplingOptions(temperature=0.7, top_k=10))
    # alpha = sum_x min(p, p) = 1: every round accepts all gamma drafts and adds the bonus. p (batched target
    # forward) and q (incremental draft forward) differ by ~1e-15 in float64, so a rejection has probability ~1e-13
    assert out.accepted_hist[:-1] == [0, 0, 0, 0]
    assert abs(out.alpha_mean - 1) < 1e-9
    assert out.target_forwards == out.rounds + 1  # + the prefill


def test_bfloat16_speculative_decoding_runs_and_is_reproducible(pair):
    target, draft = (m.to(torch.bfloat16) for m in (tiny_llama(0, sharpness=4.0), noisy_copy(tiny_llama(0, sharpness=4.0), 0.3, 1)))
    a = speculative_generate(target, draft, PROMPTS, 12, gamma=3, seed=1)
    b = speculative_generate(target, draft, PROMPTS, 12, gamma=3, seed=1)
    assert a.tokens == b.tokens and all(len(r) == 12 and all(0 <= t < 48 for t in r) for r in a.tokens)


def test_eos_stops_a_row_right_after_it(pair):
    target, draft = pair
    free = speculative_generate(target, draft, PROMPTS[:1], 12, gamma=3, sampling=GREEDY).tokens[0]
    eos = free[4]
    cut = speculative_generate(target, draft, PROMPTS[:1], 12, gamma=3, sampling=GREEDY, eos_token_id=eos).tokens[0]
    assert cut == free[: free.index(eos) + 1]


def test_identical_prompts_share_one_prefill_and_sample_like_separate_prompts(pair):
    target, draft = pair
    same = [[3, 4, 5, 6]] * 3
    shared = speculative_generate(target, draft, same, 10, gamma=3, sampling=GREEDY)
    assert shared.tokens == [plain_generate(target, [[3, 4, 5, 6]], 10, sampling=GREEDY).tokens[0]] * 3
    # the shared prefill ran once for the batch: 1 prefill + one forward per round
    assert shared.target_forwards == shared.rounds + 1


def test_rollback_lowers_the_cache_length_and_the_next_forward_writes_over_the_same_buffer(pair):
    from specmath.lm.cache import WriteOverCache

    if WriteOverCache is None:
        pytest.skip("transformers 4.x: RowCache falls back to DynamicCache (no per-layer cache API)")
    target, _ = pair
    cache = RowCache(target, 1)
    cache.feed([[1, 2, 3, 4, 5]])
    layer = cache.cache.layers[0]
    buffer = layer._keys.data_ptr()
    cache.keep([2])  # crop three slots: only the length changes
    assert layer.get_seq_length() == 2 and layer._keys.data_ptr() == buffer
    logits = cache.feed([[9, 10]])[0, -1]
    assert layer.get_seq_length() == 4 and layer._keys.data_ptr() == buffer  # written over, not reallocated
    fresh = target(input_ids=torch.tensor([[1, 2, 9, 10]])).logits[0, -1]
    # two paths (cached vs fresh forward) in float64: rounding ~1e-15; a stale slot would move the logits by ~1e-1
    assert torch.allclose(logits, fresh, rtol=0, atol=1e-9)
