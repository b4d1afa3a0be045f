"""The real-model explorer on tiny randomly initialised Llama models (no download, no weights file).

The claims are about the bookkeeping, which must hold for any pair of models: the shown acceptance
probability is min(1, p(x)/q(x)) of the shown p and q, the outcomes are a run of acceptances ended
by at most one rejection, and a draft identical to the target is always accepted.
"""

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from specmath.explorers.model_step_explorer import format_model_step, model_step  # noqa: E402
from specmath.sampling_options import SamplingOptions  # noqa: E402

VOCAB = 48


class CharTokenizer:
    """One token per character code modulo VOCAB: enough to drive the explorer."""

    def encode(self, text):
        return [ord(ch) % VOCAB for ch in text]

    def decode(self, ids):
        return "".join(chr(97 + i % 26) for i in ids)


def tiny_llama(seed: int, layers: int = 2):
    config = transformers.LlamaConfig(
        vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=layers,
        num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=128,
    )
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = transformers.LlamaForCausalLM(config)
    # spread the logits so p and q differ visibly
    with torch.no_grad():
        model.lm_head.weight.mul_(30)
    return model.eval()


@pytest.fixture(scope="module")
def pair():
    return tiny_llama(0), tiny_llama(1), CharTokenizer()


def test_model_step_shows_min_1_p_over_q_and_one_run_of_acceptances(pair):
    target, draft, tok = pair
    seen_rejection = False
    for seed in range(12):
        view = model_step(target, draft, tok, "speculative", 5, seed=seed)
        outcomes = [r.outcome for r in view.rows]
        n = view.n_accepted
        assert outcomes == ["accepted"] * n + (["rejected"] + ["not reached"] * (4 - n) if n < 5 else [])
        assert view.next_kind == ("bonus" if n == 5 else "residual")
        for r in view.rows:
            assert r.accept_probability == pytest.approx(min(1.0, r.p / r.q), rel=1e-5)
            assert 0 <= r.alpha <= 1 and min(r.p, r.q) <= r.alpha + 1e-6
        seen_rejection |= n < 5
        assert "accepted" in format_model_step(view)
    assert seen_rejection  # two different random models disagree somewhere in 12 rounds


def test_model_step_accepts_every_draft_token_when_the_draft_is_the_target(pair):
    target, _, tok = pair
    view = model_step(target, target, tok, "lossless", 4, seed=3)
    # p comes from the target's batched forward over the gamma + 1 positions, q from the draft's
    # incremental forwards of the same model: two computation paths, so p/q is 1 only up to float32
    # rounding (0.9999996 was seen on an AVX-512 host). 1e-5 is ~80 float32 ulps at 1 and far below
    # any real disagreement between two models (test above: acceptance well under 1). With
    # p/q >= 1 - 1e-5 a rejection has probability <= 4e-5 over the four positions, so the fixed
    # seed cannot make this flaky on another host either.
    assert view.n_accepted == 4 and view.next_kind == "bonus"
    assert all(r.accept_probability == pytest.approx(1.0, abs=1e-5) for r in view.rows)
    assert all(r.alpha == pytest.approx(1.0, abs=1e-5) for r in view.rows)


def test_model_step_top_bars_are_probabilities_of_the_first_position(pair):
    target, draft, tok = pair
    view = model_step(target, draft, tok, "bars", 2, seed=0, top=5, sampling=SamplingOptions(temperature=0.7))
    assert len(view.top_tokens) == 5
    assert all(0 <= p <= 1 and 0 <= q <= 1 for _, p, q in view.top_tokens)


@pytest.mark.parametrize(
    "kwargs, match",
    [({"prompt": ""}, "non-empty"), ({"gamma": 0}, "gamma"), ({"gamma": 2.5}, "gamma"), ({"top": 0}, "top")],
)
def test_model_step_rejects_bad_input_with_a_value_error(pair, kwargs, match):
    target, draft, tok = pair
    args = {"prompt": "ok", "gamma": 2, **kwargs}
    top = args.pop("top", 8)
    with pytest.raises(ValueError, match=match):
        model_step(target, draft, tok, args["prompt"], args["gamma"], top=top)


def test_model_step_rejects_models_with_different_vocabularies(pair):
    target, _, tok = pair
    other = tiny_llama(2)
    other.resize_token_embeddings(VOCAB + 8)
    with pytest.raises(ValueError, match="widths differ"):
        model_step(target, other, tok, "mismatch", 2)
