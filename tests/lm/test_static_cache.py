"""The static KV cache and its pass: the same logits as the growing cache, the same tokens from every decoder.

The eager tests run ``static_cache.static_pass`` uncompiled: the logic a compiled graph captures
(positions, writes, the mask over all L slots, rollback by length) without the minutes of compiling on
a shared CPU. test_compiled_decoders.py compiles it: the pinned float64 tokens and the sampled law.

Tolerance: the static pass attends over all L slots (the unwritten ones weighted by exactly 0) where
the growing cache attends over its S slots, so the two sums run in a different order; in float64 the
logits then agree to ~1e-15 relative, and we allow 1e-10 absolute (logits of a few units). Tokens are
compared with ``==``: a float64 draw flips only when a uniform falls within ~1e-15 of a boundary (see
test_pinned_tokens.py), probability ~1e-12 over these runs.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from lm_tiny import noisy_copy, tiny_llama  # noqa: E402

import specmath.lm.plain_decode as plain_decode  # noqa: E402
import specmath.lm.speculative_decode as speculative_decode  # noqa: E402
from specmath.lm.cache import RowCache  # noqa: E402
from specmath.lm.decode_options import DecodeOptions  # noqa: E402
from specmath.lm.drafts import ModelDraft, PromptLookupDraft, compiles_by_default, draft_for  # noqa: E402
from specmath.lm.generation import Draws  # noqa: E402
from specmath.lm.static_cache import MIN_SLOTS, StaticRowCache, cache_class_for  # noqa: E402
from specmath.sampling_options import SamplingOptions  # noqa: E402
from specmath.validation import InvalidArgument  # noqa: E402

TOLERANCE = 1e-10  # float64 logits, two summation orders (module docstring)


@pytest.fixture(scope="module")
def models():
    target = tiny_llama(0, sharpness=4.0).double()
    return target, noisy_copy(target, 0.3, 1)


def test_the_static_pass_gives_the_growing_caches_logits_across_feeds_and_rollbacks(models):
    target, _ = models
    grow, static = RowCache(target, 2), StaticRowCache(target, 2)
    rows = [[1, 2, 3, 4, 5], [6, 7]]
    grow.prefill(rows)
    static.prefill(rows)
    steps = [([[8, 9, 10], [11]], [6, 3]), ([[3, 3], [4, 4]], [7, 4]), ([[5]], None)]
    for feed, keep in steps[:2]:
        a, b = grow.feed(feed), static.feed(feed)
        for row, tokens in enumerate(feed):
            n = len(tokens)
            assert (a[row, :n] - b[row, :n]).abs().max() < TOLERANCE
        grow.keep(keep)
        static.keep(keep)
        assert static.lengths == grow.lengths == keep
    assert static.forwards == grow.forwards == 3
    with pytest.raises(ValueError, match="cannot keep"):
        static.keep([9, 9])


def test_the_static_cache_grows_past_its_capacity_and_keeps_what_it_held(models):
    target, _ = models
    grow, static = RowCache(target, 1), StaticRowCache(target, 1)
    prompt = [list(range(1, 40)) * 7][0][: MIN_SLOTS - 1]
    grow.prefill([prompt])
    static.prefill([prompt])
    assert static.kv.capacity == MIN_SLOTS
    a, b = grow.feed([[1, 2, 3]]), static.feed([[1, 2, 3]])  # needs MIN_SLOTS + 2 slots
    assert static.kv.capacity == 2 * MIN_SLOTS
    assert (a - b).abs().max() < TOLERANCE
    static.reserve(2 * MIN_SLOTS + 1)  # capacities double: a run of n tokens meets about log2(n / MIN_SLOTS) + 1
    assert static.kv.capacity == 4 * MIN_SLOTS
    static.reserve(3 * MIN_SLOTS)
    assert static.kv.capacity == 4 * MIN_SLOTS


@pytest.mark.parametrize("options", [DecodeOptions(gamma=3, seed=0), DecodeOptions(gamma=3, seed=[1, 2]),
                                     DecodeOptions(gamma=4, seed=2, verify="block"),
                                     DecodeOptions(gamma=4, seed=3, draft_threshold=0.5)], ids=str)
def test_every_decoder_emits_the_same_tokens_on_the_static_cache(models, monkeypatch, options):
    target, draft = models
    prompts = [[1, 2, 3, 1, 2], [5, 6]]
    plain = plain_decode.plain_generate(target, prompts, 20, options)
    spec = speculative_decode.speculative_generate(target, draft, prompts, 20, options)
    lookup = speculative_decode.speculative_generate(target, PromptLookupDraft(), prompts, 20, options)
    # the eager static pass in place of the growing cache, in both decoders and the model draft
    monkeypatch.setattr(plain_decode, "cache_class_for", lambda options: StaticRowCache)
    monkeypatch.setattr(speculative_decode, "cache_class_for", lambda options: StaticRowCache)
    assert plain_decode.plain_generate(target, prompts, 20, options).tokens == plain.tokens
    static_spec = speculative_decode.speculative_generate(target, ModelDraft(draft, cache_class=StaticRowCache),
                                                          prompts, 20, options)
    assert static_spec.tokens == spec.tokens
    assert (static_spec.accepted_hist, static_spec.rounds) == (spec.accepted_hist, spec.rounds)
    assert speculative_decode.speculative_generate(target, PromptLookupDraft(), prompts, 20, options).tokens == lookup.tokens


@pytest.mark.parametrize("seed", [0, [1, 2]], ids=["one seed", "a seed per row"])
@pytest.mark.parametrize("sampling", [SamplingOptions(), SamplingOptions(0.7, top_k=5, top_p=0.9)], ids=str)
def test_a_model_draft_on_the_static_cache_proposes_in_one_call_what_its_steps_propose(models, monkeypatch, seed,
                                                                                        sampling):
    """The fused proposal (``draft_graph``, gamma steps in one pass function, the draws' noise drawn ahead) against
    the step-by-step one on the growing cache: the same tokens (``==``), the same laws q (to the tolerance), the
    same cache lengths, over rounds that feed the draft 1 pending token (after a rejection) and 2 (a full
    acceptance: the last draft, never fed to the draft, and the bonus token)."""
    import specmath.lm.drafts as drafts

    _, draft_model = models
    calls = []
    real = drafts.fused_proposal
    monkeypatch.setattr(drafts, "fused_proposal", lambda *a: calls.append(a[2].shape[0]) or real(*a))
    prompts = [[1, 2, 3, 1, 2], [5, 6]]
    # per round and row: (drafts accepted, the residual or bonus token emitted after them)
    outcomes = [[(0, 7), (0, 8)], [(3, 9), (1, 10)], None]
    runs = []
    for draft in (ModelDraft(draft_model), ModelDraft(draft_model, cache_class=StaticRowCache)):
        draws = Draws.from_seed(seed, 2, "cpu")
        tokens = [list(p) for p in prompts]
        draft.start(tokens, torch.device("cpu"), 48)
        proposals = []
        for outcome in outcomes:
            proposal = draft.propose(tokens, 3, sampling, draws)
            proposals.append(proposal)
            if outcome is None:
                break
            kept = []
            for row, (accepted, emitted) in enumerate(outcome):
                tokens[row].extend(proposal.tokens[row, :accepted].tolist() + [emitted])
                kept.append(len(tokens[row]) - 1)
            draft.commit(kept)
        runs.append((proposals, list(draft.cache.lengths)))
    assert calls == [3, 3, 3]  # only the static cache's draft took the fused path, once a round
    (a, lengths_a), (b, lengths_b) = runs
    assert lengths_a == lengths_b
    for x, y in zip(a, b, strict=True):
        assert torch.equal(x.tokens, y.tokens) and x.lengths == y.lengths == [3, 3]
        assert (x.q - y.q).abs().max() < TOLERANCE and bool(y.ok) and x.ok is None


def test_a_draft_whose_laws_are_invalid_fails_the_round_with_one_clear_error(models):
    """NaN draft logits would give the fused proposal's argmax a silent token: its flag, read with the round's one
    host transfer, raises before any token is kept."""
    import copy

    target, draft_model = models
    broken = copy.deepcopy(draft_model)
    broken.lm_head.weight.fill_(float("nan"))
    with pytest.raises(ValueError, match="invalid probabilities.*draft"):
        speculative_decode.speculative_generate(target, ModelDraft(broken, cache_class=StaticRowCache), [[1, 2, 3]],
                                                8, DecodeOptions(gamma=3))


def test_the_compile_option_selects_the_static_caches_and_is_checked(models):
    target, draft = models
    assert cache_class_for(DecodeOptions()) is RowCache
    assert cache_class_for(DecodeOptions(compile=True)).keywords == {"compiled": True}
    wrapped = draft_for(ModelDraft(draft), DecodeOptions(compile=True))
    assert wrapped.cache_class.func is StaticRowCache
    lookup = PromptLookupDraft()
    assert draft_for(lookup, DecodeOptions(compile=True)) is lookup
    with pytest.raises(InvalidArgument, match="compile must be True or False"):
        DecodeOptions(compile="yes")
    assert DecodeOptions(compile=True).to_json() == {}  # the bench JSON has a key of its own for it


def test_the_bench_compiles_by_default_on_a_cuda_device_for_models_the_static_cache_runs(models):
    target, draft = models
    not_llama = torch.nn.Linear(2, 2)  # no Llama config: the static cache cannot run it
    assert compiles_by_default("cuda", target, ModelDraft(draft))
    assert compiles_by_default("cuda:1", target, PromptLookupDraft())
    assert not compiles_by_default("cpu", target, ModelDraft(draft))  # compiling costs a CPU more than it saves
    assert not compiles_by_default("cuda", not_llama, PromptLookupDraft())
    assert not compiles_by_default("cuda", target, ModelDraft(not_llama))


def test_low_precision_and_large_float32_weights_on_a_cpu_are_compiled_frozen():
    from specmath.lm.compiled_steps import FROZEN_FLOAT32_BYTES, compiled, freezes
    from specmath.lm.static_cache import static_pass

    # bfloat16: the library's products over packed weights; float16 and large float32: Inductor's timed choice
    assert freezes("cpu", torch.bfloat16, 1) == "library" and freezes("cpu", torch.float16, 1) == "autotuned"
    assert freezes("cpu", torch.float32, FROZEN_FLOAT32_BYTES - 1) is None
    assert freezes("cpu", torch.float32, FROZEN_FLOAT32_BYTES) == "autotuned"
    assert freezes("cpu", torch.float64, 10 * FROZEN_FLOAT32_BYTES) is None
    assert freezes("cuda", torch.bfloat16, 1) is None and freezes("cuda", torch.float32, FROZEN_FLOAT32_BYTES) is None
    with pytest.raises(ValueError, match="frozen graphs are compiled for the CPU"):
        compiled(static_pass, "cuda", "library")
    with pytest.raises(ValueError, match=r"frozen must be one of \['autotuned', 'library'\] or None, got 'packed'"):
        compiled(static_pass, "cpu", "packed")
    assert StaticRowCache(tiny_llama(0), 1, compiled=True).frozen is None
    assert StaticRowCache(tiny_llama(0).to(torch.bfloat16), 1, compiled=True).frozen == "library"
    assert StaticRowCache(tiny_llama(0).to(torch.bfloat16), 1, compiled=False).frozen is None
