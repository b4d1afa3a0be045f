"""alpha along the target's own samples: exact where it must be, and the stretch means it prints.

Notation: p = target law, q = draft law, alpha_t = sum_x min(p_t(x), q_t(x)).
"""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("transformers")

from lm_tiny import noisy_copy, tiny_llama  # noqa: E402

from specmath.lm.acceptance import alpha_along_samples, stretch_means  # noqa: E402
from specmath.lm.plain_decode import plain_generate  # noqa: E402
from specmath.sampling_options import SamplingOptions  # noqa: E402


def test_alpha_is_one_for_the_target_itself_and_the_direct_overlap_otherwise():
    target = tiny_llama(1, sharpness=3.0)
    draft = noisy_copy(target, 0.4, 2)
    prompts = [[1, 5, 9], [4]]
    same = alpha_along_samples(target, target, prompts, 6, seeds=(0, 1))
    assert same.shape == (4, 6)
    # sum_x min(p, p) = sum_x p = 1 up to float32 rounding of a softmax over 48 ids (< 1e-6)
    torch.testing.assert_close(same, torch.ones(4, 6, dtype=torch.float64), rtol=0, atol=1e-5)
    alpha = alpha_along_samples(target, draft, prompts, 6, seeds=(0,))
    assert ((alpha > 0) & (alpha < 1)).all()
    # position 3 of prompt 0's answer, recomputed by hand from the same sample (seed 0)
    answer = plain_generate(target, prompts, 6, sampling=SamplingOptions(), seed=0).tokens[0]
    prefix = torch.tensor([prompts[0] + answer[:3]])
    with torch.no_grad():
        p = target(input_ids=prefix).logits[0, -1].softmax(-1).double()
        q = draft(input_ids=prefix).logits[0, -1].softmax(-1).double()
    # one 6-token forward against a full forward of the prefix: the same float32 sums, reordered (< 1e-6)
    assert abs(float(torch.minimum(p, q).sum()) - float(alpha[0, 3])) < 1e-5


def test_stretch_means_and_errors():
    alpha = torch.tensor([[1.0, 0.5, 0.0, 0.25, 0.75], [0.0, 0.5, 1.0, 0.75, 0.25]], dtype=torch.float64)
    assert stretch_means(alpha, 2) == [(0, 1, 0.5), (2, 3, 0.5), (4, 4, 0.5)]
    with pytest.raises(ValueError, match="stretch"):
        stretch_means(alpha, 0)
    target = tiny_llama(0)
    with pytest.raises(ValueError, match="new_tokens"):
        alpha_along_samples(target, target, [[1]], 0)
    with pytest.raises(ValueError, match="at least one prompt"):
        alpha_along_samples(target, target, [], 3)
