"""Adaptive drafts on a real (tiny) torch model: samples of the first two tokens against the exact law.

The exact proofs (``specmath.speculative.confidence_stop``, ``lookup_round``) cover the algorithm;
these G-tests cover the torch implementation of the same rounds (variable proposal lengths per row,
padding, holes in the caches). N = 3000, vocabulary 16, T = 1: the G-test at level 1e-6 detects
TV >= detectable_tv (~0.08 for one token, asserted < 0.15 for two) with probability 0.99; the
residual-softmax control must be rejected at the same N.
"""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("transformers")

# samples against the exact law (G-tests): another thread count changes no verdict here
pytestmark = pytest.mark.no_float_paths

from lm_tiny import noisy_copy, tiny_llama  # noqa: E402

from specmath.lm.decode_options import DecodeOptions  # noqa: E402
from specmath.lm.drafts import ModelDraft, PromptLookupDraft  # noqa: E402
from specmath.lm.generation import Draws  # noqa: E402
from specmath.lm.histogram import first_token_law, histogram_check, sample_prefixes, two_token_law  # noqa: E402
from specmath.lm.lossy_controls import residual_softmax_accept_reject  # noqa: E402
from specmath.lm.warps import warped_probs  # noqa: E402
from specmath.sampling_options import SamplingOptions  # noqa: E402

N = 3000


@pytest.fixture(scope="module")
def world():
    target = tiny_llama(0, vocab_size=16, sharpness=6.0)
    return target, noisy_copy(target, 0.5, 1)


@pytest.mark.parametrize("kind", ["confidence-stop", "lookup"])
def test_adaptive_draft_lengths_sample_the_exact_target_law_and_the_control_does_not(world, kind):
    target, model_draft = world
    # a prompt with repeats, so lookup finds matches of different lengths in different rows
    prompt = [1, 2, 3, 1, 2, 4, 1]
    draft = PromptLookupDraft() if kind == "lookup" else model_draft
    threshold = 0.0
    if kind == "confidence-stop":
        # just below the draft's confidence after the prompt: position 1 is always drafted, later positions
        # stop or go depending on the sampled tokens (rows of one batch then propose different lengths)
        q1 = warped_probs(model_draft(input_ids=torch.tensor([prompt])).logits[0, -1], SamplingOptions())
        threshold = 0.99 * float(q1.max())
    options = DecodeOptions(gamma=3, draft_threshold=threshold)
    law1, law2 = first_token_law(target, prompt, SamplingOptions()), two_token_law(target, prompt, SamplingOptions())
    good = sample_prefixes(target, draft, prompt, N, 2, options, batch_size=N)
    bad = sample_prefixes(target, draft, prompt, N, 2, options.replace(seed=1), accept_reject=residual_softmax_accept_reject,
                          batch_size=N)
    if kind == "confidence-stop":
        probe = ModelDraft(model_draft)
        probe.start([prompt] * 200, torch.device("cpu"), 16)
        lengths = probe.propose([prompt] * 200, 3, SamplingOptions(), Draws.of(torch.Generator().manual_seed(0), 200),
                                confidence_threshold=threshold).lengths
        assert min(lengths) >= 1 and len(set(lengths)) > 1, f"rows should stop at different positions: {set(lengths)}"
    for what, samples, law in (("first token", [s[0] for s in good], law1), ("first two tokens", good, law2)):
        check = histogram_check(what, samples, law)
        assert check.detectable_tv < 0.15
        assert check.p_value > 1e-6, f"{kind}, {what}: G={check.statistic:.1f} p={check.p_value:.2e}"
    assert histogram_check("control", [s[0] for s in bad], law1).p_value < 1e-6, f"{kind}: the lossy control was not detected"
