"""The tokens of short seeded runs of every decoder, pinned: a change of code that changes one token fails here.

Each run decodes the bundled pair's two prompts with an explicit seed; the expected tokens, and the
round counters of the speculative runs, are literals below. The runs: plain decoding (one seed for the
batch, and one seed per row with top-k 20); speculative decoding with the model draft under
token-by-token and block verification, with a confidence stop, and with per-row seeds and top-k 20;
prompt lookup; an n-gram table draft; prompt lookup falling back to the table.

Why float64: a sampled token is a deterministic function of the probabilities and the seeded uniforms,
and it can only change when a uniform lands within the rounding error of the probabilities of a CDF
boundary (or of p(x) / q(x), for an accept). In float64 that error is ~1e-16, so over the ~1000 draws
here a flip has probability ~1e-13: the literals hold on any CPU (AVX2 or AVX-512 kernels, 1 or 2
threads), whereas float32 sums, which differ there in the last bits, would flip near-ties. The n-gram
table's q is float32 (the table stores it so): a margin of ~1e-7 per draw, ~1e-5 over these runs, still
negligible. alpha_sum is a float sum over the rounds, compared to 1e-9 relative for the same reason.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from specmath.lm.decode_options import DecodeOptions  # noqa: E402
from specmath.lm.drafts import PromptLookupDraft  # noqa: E402
from specmath.lm.ngram_draft import LookupNgramDraft, NgramDraft, build_ngram_table  # noqa: E402
from specmath.lm.pairs import load_named_pair  # noqa: E402
from specmath.lm.plain_decode import plain_generate  # noqa: E402
from specmath.lm.speculative_decode import speculative_generate  # noqa: E402
from specmath.sampling_options import SamplingOptions  # noqa: E402

NEW_TOKENS = 24
#: two prompts of different lengths (rows accept different numbers of drafts, so the cache has holes);
#: the second repeats itself, so prompt lookup finds matches
TEXTS = ["It was the best of times, ", "the Program, the Program, the Program"]
TOP_K_20 = SamplingOptions(top_k=20)


@pytest.fixture(scope="module")
def pair():
    return load_named_pair("bundled", dtype=torch.float64, texts=TEXTS)


def _table(pair) -> NgramDraft:
    """A table of 1- and 2-token contexts from the prompts themselves: after each context 3/4 on the
    character that followed it and 1/4 on a space (binary fractions: the same table on every CPU)."""
    space = pair.tokenizer(" ", add_special_tokens=False)["input_ids"][0]
    rows = []
    for ids in pair.prompts:
        tokens = torch.tensor(ids)
        following = torch.cat([tokens[1:], tokens[-1:]])
        top_ids = torch.stack([following, torch.full_like(following, space)], 1)
        rows.append((tokens, 1, top_ids, torch.tensor([[0.75, 0.25]]).expand(len(ids), 2)))
    return NgramDraft(build_ngram_table(rows, order=2, keep=2, min_count=1))


#: run name -> (the draft, built from the pair; speculative_generate's options)
SPECULATIVE_RUNS = {
    "model draft, token verification": (lambda pair: pair.draft, DecodeOptions(gamma=4, seed=0)),
    "model draft, block verification": (lambda pair: pair.draft, DecodeOptions(gamma=4, seed=0, verify="block")),
    "model draft, confidence stop 0.5": (lambda pair: pair.draft, DecodeOptions(gamma=4, seed=0, draft_threshold=0.5)),
    "model draft, per-row seeds, top-k 20": (lambda pair: pair.draft, DecodeOptions(gamma=3, seed=[5, 6], sampling=TOP_K_20)),
    "prompt lookup": (lambda pair: PromptLookupDraft(), DecodeOptions(gamma=4, seed=0)),
    "n-gram table": (_table, DecodeOptions(gamma=3, seed=0)),
    "prompt lookup + n-gram table": (lambda pair: LookupNgramDraft(PromptLookupDraft(), _table(pair)), DecodeOptions(gamma=3, seed=0)),
}

#: run name -> (plain_generate's options, the tokens of each row)
PLAIN = {
    "one seed": (DecodeOptions(seed=0),
        [[74, 83, 89, 78, 87, 74, 5, 72, 84, 83, 91, 70, 89, 78, 84, 88, 5, 84, 87, 5, 88, 74, 86, 90], [5, 76, 78, 89, 5, 89, 77, 74, 5, 89, 78, 89, 81, 74, 5, 45, 74, 72, 74, 82, 5, 84, 83, 5]]),
    "per-row seeds, top-k 20": (DecodeOptions(seed=[3, 4], sampling=TOP_K_20),
        [[78, 83, 5, 89, 74, 87, 82, 88, 5, 71, 70, 87, 5, 78, 70, 89, 4, 82, 74, 73, 4, 94, 84, 90], [5, 84, 72, 94, 5, 70, 81, 73, 5, 89, 77, 74, 5, 49, 78, 71, 87, 70, 87, 94, 5, 89, 77, 74]]),
}

#: run name -> (the tokens of each row, the round counters, alpha_sum)
SPECULATIVE = {
    "model draft, token verification": (
        [[74, 83, 4, 72, 84, 74, 87, 55, 5, 4, 62, 84, 90, 5, 85, 90, 71, 81, 78, 72, 5, 78, 89, 5], [5, 13, 84, 87, 5, 73, 78, 88, 85, 87, 70, 83, 89, 77, 74, 87, 5, 72, 84, 89, 5, 89, 77, 74]],
        {"rounds": 8, "accepted_hist": [2, 3, 3, 0, 8], "width_hist": [0, 0, 0, 0, 8], "position_reached": [16, 14, 11, 8], "position_accepted": [14, 11, 8, 8], "drafted": 64, "draft_steps": 32, "zero_residual": 0, "alpha_count": 49},
        38.892390810844915),
    "model draft, block verification": (
        [[74, 83, 4, 72, 84, 74, 87, 55, 5, 4, 62, 84, 90, 5, 85, 90, 81, 70, 76, 74, 5, 75, 90, 89], [5, 13, 84, 87, 5, 84, 87, 5, 89, 77, 74, 5, 88, 84, 85, 90, 82, 74, 83, 89, 88, 5, 71, 74]],
        {"rounds": 8, "accepted_hist": [4, 1, 2, 2, 7], "width_hist": [0, 0, 0, 0, 8], "position_reached": [16, 12, 11, 9], "position_accepted": [12, 11, 9, 7], "drafted": 64, "draft_steps": 32, "zero_residual": 0, "alpha_count": 48},
        38.80287892965348),
    "model draft, confidence stop 0.5": (
        [[81, 78, 71, 87, 70, 87, 94, 56, 38, 89, 5, 73, 84, 88, 89, 5, 84, 83, 73, 84, 5, 84, 75, 5], [4, 4, 89, 77, 74, 5, 41, 84, 72, 90, 82, 74, 83, 89, 5, 74, 93, 72, 81, 90, 88, 78, 87, 78]],
        {"rounds": 18, "accepted_hist": [29, 2, 2, 0, 3], "width_hist": [5, 3, 5, 2, 3], "position_reached": [15, 6, 4, 3], "position_accepted": [7, 5, 3, 3], "drafted": 36, "draft_steps": 46, "zero_residual": 0, "alpha_count": 28},
        23.088431000151743),
    "model draft, per-row seeds, top-k 20": (
        [[78, 83, 5, 89, 77, 78, 88, 5, 49, 78, 72, 74, 83, 88, 74, 5, 75, 84, 87, 5, 70, 4, 70, 83], [19, 5, 5, 52, 74, 83, 5, 82, 70, 89, 78, 78, 83, 5, 73, 84, 82, 78, 73, 74, 73, 5, 73, 74]],
        {"rounds": 9, "accepted_hist": [4, 1, 1, 12], "width_hist": [0, 0, 0, 9], "position_reached": [18, 14, 13], "position_accepted": [14, 13, 12], "drafted": 54, "draft_steps": 27, "zero_residual": 0, "alpha_count": 45},
        37.858325603664824),
    "prompt lookup": (
        [[70, 83, 73, 4, 94, 84, 70, 91, 74, 32, 5, 78, 83, 5, 89, 77, 74, 5, 77, 84, 89, 5, 89, 84], [5, 94, 84, 90, 5, 78, 75, 5, 70, 72, 85, 90, 17, 5, 73, 74, 87, 88, 78, 84, 83, 88, 5, 78]],
        {"rounds": 23, "accepted_hist": [44, 1, 1, 0, 0], "width_hist": [3, 0, 0, 3, 17], "position_reached": [31, 2, 1, 0], "position_accepted": [2, 1, 0, 0], "drafted": 121, "draft_steps": 0, "zero_residual": 0, "alpha_count": 34},
        4.6004714560026585),
    "n-gram table": (
        [[84, 72, 77, 74, 87, 74, 73, 5, 49, 78, 72, 74, 83, 88, 74, 5, 89, 84, 5, 83, 84, 89, 92, 74], [17, 5, 70, 5, 70, 83, 73, 19, 5, 5, 38, 70, 89, 74, 73, 5, 89, 77, 74, 5, 7, 23, 23, 4]],
        {"rounds": 23, "accepted_hist": [40, 4, 1, 1], "width_hist": [0, 0, 0, 23], "position_reached": [30, 6, 2], "position_accepted": [6, 2, 1], "drafted": 90, "draft_steps": 0, "zero_residual": 0, "alpha_count": 38},
        11.182859728051964),
    "prompt lookup + n-gram table": (
        [[71, 78, 89, 87, 70, 82, 72, 70, 89, 5, 78, 88, 5, 84, 75, 5, 70, 5, 89, 77, 74, 5, 85, 87], [19, 4, 4, 5, 5, 62, 84, 41, 5, 88, 85, 70, 91, 74, 88, 4, 70, 4, 90, 75, 5, 75, 87, 74]],
        {"rounds": 23, "accepted_hist": [41, 2, 3, 0], "width_hist": [0, 1, 1, 21], "position_reached": [37, 5, 3], "position_accepted": [5, 3, 0], "drafted": 103, "draft_steps": 0, "zero_residual": 0, "alpha_count": 45},
        7.4069593327476015),
}


def _counters(run) -> dict:
    return {"rounds": run.rounds, "accepted_hist": run.accepted_hist, "width_hist": run.width_hist,
            "position_reached": run.position_reached, "position_accepted": run.position_accepted,
            "drafted": run.drafted, "draft_steps": run.draft_steps, "zero_residual": run.zero_residual,
            "alpha_count": run.alpha_count}


def run_plain(pair, name: str):
    options, _ = PLAIN[name]
    return plain_generate(pair.target, pair.prompts, NEW_TOKENS, options)


def run_speculative(pair, name: str):
    make_draft, options = SPECULATIVE_RUNS[name]
    return speculative_generate(pair.target, make_draft(pair), pair.prompts, NEW_TOKENS, options)


@pytest.mark.parametrize("name", list(PLAIN))
def test_plain_decoding_emits_the_pinned_tokens(pair, name):
    assert run_plain(pair, name).tokens == PLAIN[name][1]


@pytest.mark.parametrize("name", list(SPECULATIVE_RUNS))
def test_speculative_decoding_emits_the_pinned_tokens_and_counts_its_rounds_as_pinned(pair, name):
    tokens, counters, alpha_sum = SPECULATIVE[name]
    run = run_speculative(pair, name)
    assert run.tokens == tokens
    assert _counters(run) == counters
    assert run.alpha_sum == pytest.approx(alpha_sum, rel=1e-9)
