"""The Draft protocol, adaptive proposal lengths, per-row generators and greedy decoding on real torch models.

Token equality between two runs is asserted only where the two runs compute the same floats, or in
float64, where batched and single-row forwards differ by ~1e-16 relative: a token could flip only if
a uniform fell within ~1e-15 of a cumulative-probability boundary (probability ~1e-12 over these
tests), or if two logits tied to 1e-15 under greedy decoding.
"""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("transformers")

from lm_tiny import noisy_copy, tiny_llama  # noqa: E402

from specmath.lm.drafts import Draft, ModelDraft, PromptLookupDraft, Proposal  # noqa: E402
from specmath.lm.generation import Draws  # noqa: E402
from specmath.lm.models import int8_draft, layer_skip_draft  # noqa: E402
from specmath.lm.plain_decode import plain_generate  # noqa: E402
from specmath.lm.speculative_decode import PROFILE_PARTS, speculative_generate  # noqa: E402
from specmath.sampling_options import SamplingOptions  # noqa: E402

GREEDY = SamplingOptions(temperature=0)
PROMPTS = [[1, 2, 3, 4, 5], [7, 8], [9, 10, 11, 12, 13, 14, 15, 16, 9, 10], [3]]


@pytest.fixture(scope="module")
def pair64():
    # float64 so that a batched forward and a single-row forward agree to ~1e-16 (see the module docstring)
    target = tiny_llama(0, sharpness=2.0).double()
    return target, noisy_copy(target, 0.3, seed=1)


class RepeatLastDraft:
    """A user-written Draft: propose the last token once (one-hot); no model, no cache."""

    forwards = 0

    def start(self, prompts, device, vocab_size):
        self.device = device

    def propose(self, tokens, gamma, sampling, draws, confidence_threshold=0.0):
        last = torch.tensor([[t[-1]] for t in tokens], device=self.device)
        return Proposal(last, [1] * len(tokens), torch.ones(len(tokens), dtype=torch.long, device=self.device), None)

    def commit(self, kept):
        pass


def test_every_draft_implements_the_protocol_and_a_user_draft_plugs_in(pair64):
    target, draft = pair64
    for d in (ModelDraft(draft), PromptLookupDraft(), ModelDraft(layer_skip_draft(target, 1)),
              ModelDraft(int8_draft(tiny_llama(0)))):
        assert isinstance(d, Draft)
    reference = plain_generate(target, PROMPTS, 12, sampling=GREEDY).tokens
    assert speculative_generate(target, RepeatLastDraft(), PROMPTS, 12, sampling=GREEDY).tokens == reference
    with pytest.raises(ValueError, match="drafts.Draft"):
        speculative_generate(target, object(), PROMPTS, 4)


def test_prompt_lookup_proposes_only_what_a_match_offers_and_rows_differ_in_length():
    lookup = PromptLookupDraft(max_ngram=2)
    tokens = [[1, 2, 3, 1, 2], [4, 5, 6], [7, 8, 7]]
    prop = lookup.propose(tokens, 4, SamplingOptions(), Draws.of(torch.Generator(), 3))
    # row 0: "1 2" matched at 0 -> 3 1 2; row 1: no match -> nothing; row 2: "7" matched at 0 -> 8 7
    assert prop.lengths == [3, 0, 2] and prop.q is None
    assert [prop.tokens[b, :n].tolist() for b, n in enumerate(prop.lengths)] == [[3, 1, 2], [], [8, 7]]


def test_rounds_without_a_match_are_single_target_steps(pair64):
    target, _ = pair64
    # no token repeats in the prompt: the first round has nothing to look up, so it feeds the target one token
    out = speculative_generate(target, PromptLookupDraft(), [[1, 2, 3, 4]], 1, sampling=GREEDY, profile=True)
    assert out.rounds == 1 and out.accepted_hist == [1, 0, 0, 0, 0] and out.position_reached == [0, 0, 0, 0]


def test_a_draft_never_confident_enough_turns_speculative_into_plain_decoding(pair64):
    target, draft = pair64
    # threshold 1: max_x q(x) < 1 for a softmax at T = 1, so every round proposes nothing: one plain step,
    # drawing exactly what plain decoding draws from the same generator (same forwards, same floats)
    spec = speculative_generate(target, draft, PROMPTS, 10, seed=4, draft_threshold=1.0)
    assert spec.tokens == plain_generate(target, PROMPTS, 10, seed=4).tokens
    assert spec.rounds == 10 and spec.position_reached == [0, 0, 0, 0]


def test_a_confidence_threshold_shortens_drafts_and_keeps_greedy_output(pair64):
    target, draft = pair64
    greedy_t1 = SamplingOptions(temperature=1.0, top_k=1)  # one-hot q: confidence 1, never stops
    free = speculative_generate(target, draft, PROMPTS, 16, gamma=4, sampling=greedy_t1)
    sharp = SamplingOptions(temperature=0.5)
    full = speculative_generate(target, draft, PROMPTS, 16, gamma=4, sampling=sharp, seed=2)
    short = speculative_generate(target, draft, PROMPTS, 16, gamma=4, sampling=sharp, seed=2, draft_threshold=0.6)
    assert free.tokens == plain_generate(target, PROMPTS, 16, sampling=GREEDY).tokens
    # rounds that stopped early send fewer positions to accept/reject
    assert sum(short.position_reached) / short.rounds < sum(full.position_reached) / full.rounds
    assert short.draft_forwards <= full.draft_forwards


def test_gamma_may_change_from_round_to_round(pair64):
    target, draft = pair64
    schedule = [1, 3, 0, 2]
    out = speculative_generate(target, draft, PROMPTS, 14, gamma=lambda r: schedule[r % 4], sampling=GREEDY)
    assert out.tokens == plain_generate(target, PROMPTS, 14, sampling=GREEDY).tokens
    assert len(out.position_reached) == 3
    with pytest.raises(ValueError, match="gamma"):
        speculative_generate(target, draft, PROMPTS, 4, gamma=lambda r: -1)


@pytest.mark.parametrize("make_draft", ["model", "lookup", "threshold"])
def test_per_row_seeds_give_each_row_the_tokens_it_gets_alone(pair64, make_draft):
    target, draft = pair64
    seeds = [101, 202, 303, 404]
    kw = {"sampling": SamplingOptions(temperature=0.8), "gamma": 3}
    if make_draft == "threshold":
        kw["draft_threshold"] = 0.3

    def draft_for():
        return PromptLookupDraft() if make_draft == "lookup" else ModelDraft(draft)

    batch = speculative_generate(target, draft_for(), PROMPTS, 12, seed=seeds, **kw).tokens
    alone = [speculative_generate(target, draft_for(), [p], 12, seed=[s], **kw).tokens[0] for p, s in zip(PROMPTS, seeds, strict=True)]
    assert batch == alone
    # and the batch order does not matter either
    rev = speculative_generate(target, draft_for(), PROMPTS[::-1], 12, seed=seeds[::-1], **kw).tokens
    assert rev[::-1] == batch
    # a single shared seed couples the rows: the same rows in another batch draw other tokens
    shared = speculative_generate(target, draft_for(), PROMPTS, 12, seed=101, **kw).tokens
    assert shared != batch


def test_plain_decoding_takes_per_row_seeds_too(pair64):
    target, _ = pair64
    batch = plain_generate(target, PROMPTS, 8, seed=[1, 2, 3, 4]).tokens
    assert batch == [plain_generate(target, [p], 8, seed=[s]).tokens[0] for p, s in zip(PROMPTS, [1, 2, 3, 4], strict=True)]
    with pytest.raises(ValueError, match="one seed per row"):
        plain_generate(target, PROMPTS, 8, seed=[1, 2])


def test_profile_splits_the_rounds_into_their_parts(pair64):
    target, draft = pair64
    out = speculative_generate(target, draft, PROMPTS, 8, profile=True)
    assert set(out.profile) == {*PROFILE_PARTS, "total"}
    assert all(v >= 0 for v in out.profile.values())
    assert out.profile["target"] > 0 and out.profile["draft"] > 0
    # total is the sum of the parts (float addition of the same numbers in one order)
    assert out.profile["total"] == sum(out.profile[k] for k in PROFILE_PARTS)
    assert speculative_generate(target, draft, PROMPTS, 4).profile is None


class NaNOnForward(torch.nn.Module):
    """The tiny model, except that its forward number ``bad`` returns NaN logits (a late numerical blow-up)."""

    def __init__(self, model, bad: int):
        super().__init__()
        self.model, self.bad, self.calls = model, bad, 0

    def get_output_embeddings(self):
        return self.model.get_output_embeddings()

    def forward(self, cache=None, **kwargs):
        out = self.model(cache=cache, **kwargs)
        self.calls += 1
        if self.calls == self.bad:
            out.logits = torch.full_like(out.logits, float("nan"))
        return out


@pytest.mark.parametrize("greedy", [False, True])
def test_nan_logits_in_a_later_round_raise_a_value_error(pair64, greedy):
    target, draft = pair64
    sampling = GREEDY if greedy else SamplingOptions()
    # forward 1 is the prefill, 2 the first round (checked in full), 4 a later round (the flag on the device);
    # greedy argmax of NaN would silently give a token: the flag catches it
    with pytest.raises(ValueError, match="NaN|invalid"):
        speculative_generate(NaNOnForward(target, 4), draft, PROMPTS, 30, sampling=sampling)
    with pytest.raises(ValueError, match="NaN|invalid"):
        plain_generate(NaNOnForward(target, 4), PROMPTS, 30, sampling=sampling)


def test_greedy_speculative_equals_greedy_plain_on_the_bundled_pair():
    from specmath.lm.bundled import load_bundled_pair

    # float64 (see the module docstring): the argmax of a batched and of a single-token forward agree
    target, draft, tokenizer = load_bundled_pair(dtype=torch.float64)
    prompts = [tokenizer.encode(t) for t in ("the Program", "def main(", "In 1990 the")]
    reference = plain_generate(target, prompts, 32, sampling=GREEDY).tokens
    for d, kw in ((draft, {}), (draft, {"draft_threshold": 0.5}), (PromptLookupDraft(), {})):
        out = speculative_generate(target, d, prompts, 32, gamma=4, sampling=GREEDY, **kw)
        assert out.tokens == reference
    assert out.rounds < 32  # lookup accepted something: not a plain run in disguise
