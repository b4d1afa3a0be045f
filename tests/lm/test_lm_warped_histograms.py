"""Speculative decoding with a model draft under top-k and top-p warps: the first two tokens follow the warped target.

Both p and q are warped alike (``specmath.lm.warps``), and the q handed to accept/reject must be the law the
draft token was drawn from; a warp applied to the draft's sampling but not to that q (the raw softmax) keeps
the draft's acceptance too high and moves the law (``specmath.speculative.warped``, "tokens from the warped
draft, q from raw logits"; mutant topk-warp-one-side of tests/mutants.toml).

Power: N = 4000 samples, vocabulary 16, a flat tiny target (sharpness 1.5, so a warp cuts real mass) and
its noisy copy as the draft (alpha about 0.7 after the prompt), gamma = 3. Each G-test runs at level 1e-6
and detects every TV >= detectable_tv (asserted < 0.12 for the first token and for the first two) with
probability 0.99. The one-sided warp moves the first token's law by more than twice that TV here (computed
exactly from the models' float64 probabilities, and asserted), and the residual-softmax control must be
rejected at the same N.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

pytest.importorskip("transformers")

# samples against the exact law (G-tests): another thread count changes no verdict here
pytestmark = pytest.mark.no_float_paths

from lm_tiny import noisy_copy, tiny_llama  # noqa: E402

from specmath.lm.decode_options import DecodeOptions  # noqa: E402
from specmath.lm.histogram import first_token_law, histogram_check, sample_prefixes, two_token_law  # noqa: E402
from specmath.lm.lossy_controls import residual_softmax_accept_reject  # noqa: E402
from specmath.lm.warps import warped_probs  # noqa: E402
from specmath.sampling_options import SamplingOptions  # noqa: E402

N = 4000
PROMPT = [3, 1, 4, 1, 5]
WARPS = {"top-k 4": SamplingOptions(top_k=4), "top-p 0.6, T 0.8": SamplingOptions(temperature=0.8, top_p=0.6)}


@pytest.fixture(scope="module")
def world():
    target = tiny_llama(3, vocab_size=16, sharpness=1.5)
    return target, noisy_copy(target, 0.3, 4)


def _one_sided_warp_tv(target, draft, sampling: SamplingOptions) -> float:
    """TV(first token under the one-sided warp, w(p)): x ~ w(q) accepted with min(1, w(p)(x) / q_raw(x)), else
    y ~ norm(max(0, w(p) - q_raw)), q_raw = softmax(draft logits / T), from float64 probabilities."""
    def logits(model):
        return model(input_ids=torch.tensor([PROMPT])).logits[0, -1].double()

    p = warped_probs(logits(target), sampling).numpy()
    q = warped_probs(logits(draft), sampling).numpy()
    q_raw = torch.softmax(logits(draft) / float(sampling.temperature), -1).numpy()
    law = q * np.minimum(1.0, p / q_raw)
    residual = np.maximum(0.0, p - q_raw)
    law = law + (1 - law.sum()) * residual / residual.sum()
    return 0.5 * float(np.abs(law - p).sum())


@pytest.mark.parametrize("warp", sorted(WARPS))
def test_a_model_draft_under_a_truncating_warp_samples_the_warped_target_law_and_the_control_does_not(world, warp):
    target, draft = world
    sampling = WARPS[warp]
    options = DecodeOptions(gamma=3, sampling=sampling, seed=11)
    law1, law2 = first_token_law(target, PROMPT, sampling), two_token_law(target, PROMPT, sampling)
    assert len(law1.support) < 16  # the warp truncates: it is what is being tested
    good = sample_prefixes(target, draft, PROMPT, N, 2, options, batch_size=N)
    for what, samples, law in (("first token", [s[0] for s in good], law1), ("first two tokens", good, law2)):
        check = histogram_check(what, samples, law)
        assert check.detectable_tv < 0.12, f"{warp}, {what}: N too small, detects only TV >= {check.detectable_tv:.3f}"
        assert check.p_value > 1e-6, f"{warp}, {what}: G={check.statistic:.1f} p={check.p_value:.2e}"
        if what == "first token":
            assert _one_sided_warp_tv(target, draft, sampling) > 2 * check.detectable_tv  # the bug is within reach
    bad = sample_prefixes(target, draft, PROMPT, N, 2, options.replace(seed=12), batch_size=N,
                          accept_reject=residual_softmax_accept_reject)
    assert histogram_check("control", bad, law2).p_value < 1e-6, f"{warp}: the lossy control was not detected"
