"""Bad inputs get a clear ValueError; padded vocabularies are handled explicitly; warps match the core's."""

from __future__ import annotations

from fractions import Fraction

import pytest
import torch

pytest.importorskip("transformers")

from lm_tiny import tiny_llama  # noqa: E402

from specmath.laws import Law  # noqa: E402
from specmath.lm.models import layer_skip_draft, shared_vocab_size  # noqa: E402
from specmath.lm.plain_decode import plain_generate  # noqa: E402
from specmath.lm.speculative_decode import speculative_generate  # noqa: E402
from specmath.lm.warps import check_logits, warped_probs  # noqa: E402
from specmath.sampling_options import SamplingOptions  # noqa: E402
from specmath.speculative.sampling_warp import warped  # noqa: E402


class FakeTokenizer:
    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n


@pytest.fixture(scope="module")
def target():
    return tiny_llama(0, vocab_size=40)


def test_nan_and_inf_logits_raise_instead_of_sampling_a_token(target):
    with pytest.raises(ValueError, match="NaN"):
        check_logits(torch.tensor([[0.0, float("nan")]]))
    with pytest.raises(ValueError, match=r"\+inf"):
        warped_probs(torch.tensor([[0.0, float("inf")]]), SamplingOptions())
    with pytest.raises(ValueError, match="every token is -inf"):
        warped_probs(torch.full((1, 3), float("-inf")), SamplingOptions())
    broken = tiny_llama(0, vocab_size=40)
    broken.lm_head.weight[3, 0] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        speculative_generate(broken, target, [[1, 2, 3]], 4)


def test_mismatched_vocabularies_are_an_error_and_padded_ones_use_the_tokenizer_ids(target):
    padded = tiny_llama(1, vocab_size=48)  # like Qwen2.5 151936 vs 152064: same tokens, different padding
    with pytest.raises(ValueError, match="target scores 40 tokens and the draft 48"):
        speculative_generate(target, padded, [[1, 2]], 4)
    with pytest.raises(ValueError, match="pass the tokenizer"):
        shared_vocab_size(target, padded)
    with pytest.raises(ValueError, match="vocabularies differ"):
        shared_vocab_size(target, padded, FakeTokenizer(45))
    vocab = shared_vocab_size(target, padded, FakeTokenizer(36))
    assert vocab == 36
    out = speculative_generate(target, padded, [[1, 2], [3]], 30, gamma=3, vocab_size=vocab, seed=3)
    assert all(0 <= t < 36 for row in out.tokens for t in row), "a padding id was emitted"
    # greedy on the shared vocabulary equals greedy plain decoding restricted to it
    greedy = SamplingOptions(temperature=0)
    assert speculative_generate(target, padded, [[1, 2]], 12, gamma=3, sampling=greedy, vocab_size=36).tokens == \
        plain_generate(target, [[1, 2]], 12, sampling=greedy, vocab_size=36).tokens


def test_bad_arguments_name_the_problem(target):
    cases = [
        (dict(prompts=[[]]), "prompt 0 is empty"),
        (dict(prompts=[[1, 99]]), "outside the vocabulary"),
        (dict(gamma=0), "gamma"),
        (dict(max_new_tokens=0), "max_new_tokens"),
        (dict(seed="seven"), "seed .* must be an int >= 0"),
    ]
    for kwargs, message in cases:
        args = dict(prompts=[[1, 2]], max_new_tokens=4, gamma=2) | kwargs
        with pytest.raises(ValueError, match=message):
            speculative_generate(target, target, **args)
    for kwargs, message in [(dict(temperature=-1), "temperature"), (dict(top_k=0), "top_k"), (dict(top_p=0.0), "top_p")]:
        with pytest.raises(ValueError, match=message):
            SamplingOptions(**kwargs)
    with pytest.raises(ValueError, match="n_layers"):
        layer_skip_draft(target, 5)


@pytest.mark.parametrize("warp", [dict(temperature=0.5), dict(top_k=3), dict(top_p=0.8), dict(temperature=2.0, top_k=5, top_p=0.9),
                                  dict(temperature=0)])
def test_torch_warps_equal_the_exact_cores_warps_to_float_precision(warp):
    torch.manual_seed(0)
    logits = torch.randn(12) * 2
    probs = torch.softmax(logits.double(), -1)
    exact = warped(Law.from_weights({i: Fraction(float(v)) for i, v in enumerate(probs)}),
                   SamplingOptions(**{k: (Fraction(v) if isinstance(v, float) else v) for k, v in warp.items()}))
    got = warped_probs(logits, SamplingOptions(**warp))
    for i in range(12):
        assert abs(float(exact[i]) - float(got[i])) < 1e-6, (warp, i)


def test_layer_skip_draft_shares_the_weights_and_matches_a_truncated_model():
    model = tiny_llama(2, vocab_size=40, layers=3)
    draft = layer_skip_draft(model, 1)
    assert draft.lm_head.weight.data_ptr() == model.lm_head.weight.data_ptr()
    out = speculative_generate(model, draft, [[1, 2, 3]], 10, gamma=3, sampling=SamplingOptions(temperature=0))
    assert out.tokens == plain_generate(model, [[1, 2, 3]], 10, sampling=SamplingOptions(temperature=0)).tokens
