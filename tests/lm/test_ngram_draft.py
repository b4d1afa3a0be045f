"""The distilled n-gram draft: the table it builds, its file, and lossless speculative decoding with it.

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)).
"""

from __future__ import annotations

import collections

import pytest
import torch

pytest.importorskip("transformers")

from lm_tiny import assert_first_tokens_follow, tiny_llama  # noqa: E402

from specmath.lm.drafts import PromptLookupDraft  # noqa: E402
from specmath.lm.histogram import first_token_law, sample_prefixes, two_token_law  # noqa: E402
from specmath.lm.ngram_draft import LookupNgramDraft, NgramDraft, NgramTable, build_ngram_table  # noqa: E402
from specmath.lm.plain_decode import plain_generate  # noqa: E402
from specmath.lm.speculative_decode import speculative_generate  # noqa: E402
from specmath.sampling_options import SamplingOptions  # noqa: E402

VOCAB = 16


def _random_rows(seed: int, rows: int = 30, length: int = 40, vocab: int = 10, top: int = 6):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(rows):
        tokens = torch.randint(0, vocab, (length,), generator=g)
        p = torch.softmax(2 * torch.randn(length, vocab, generator=g), -1)
        probs, ids = p.topk(top, -1)
        out.append((tokens, 5, ids, probs))
    return out


def _brute_law(rows, context, keep, min_count):
    """q(. | context) by the definition: mean p over answer positions ending in context, top keep, renormalised."""
    n, mass, seen = len(context), collections.defaultdict(float), 0
    for tokens, prompt_len, ids, probs in rows:
        seq = tokens.tolist()
        for t in range(max(prompt_len - 1, n - 1), len(seq) - 1):
            if tuple(seq[t - n + 1 : t + 1]) == tuple(context):
                seen += 1
                for x, v in zip(ids[t].tolist(), probs[t].tolist(), strict=True):
                    mass[x] += v
    if seen < min_count:
        return None
    top = sorted(mass.items(), key=lambda kv: (-kv[1], kv[0]))[:keep]
    total = sum(v for _, v in top)
    return {x: v / total for x, v in top}


def test_table_is_the_mean_target_law_by_context():
    rows = _random_rows(0)
    table = build_ngram_table(rows, order=2, keep=4, min_count=3)
    checked = 0
    for t in table.orders.values():
        for i, ctx in enumerate(t["context"].tolist()):
            a, b = t["offsets"][i].item(), t["offsets"][i + 1].item()
            got = dict(zip(t["next"][a:b].tolist(), t["prob"][a:b].tolist(), strict=True))
            want = _brute_law(rows, ctx, 4, 3)
            assert want is not None and set(got) == set(want), f"context {ctx}"
            # float32 storage of float64 means: 1e-6 absolute
            assert all(abs(got[x] - want[x]) < 1e-6 for x in want)
            assert abs(sum(got.values()) - 1) < 1e-6
            checked += 1
    assert checked == sum(table.sizes().values()) and table.sizes()[2] > 20
    # rare contexts are dropped (min_count), and the longest known context wins
    seq = rows[0][0].tolist()[:12]
    law = table.law(seq)
    expected = _brute_law(rows, seq[-2:], 4, 3) or _brute_law(rows, seq[-1:], 4, 3)
    assert dict(zip(law[0].tolist(), law[1].tolist(), strict=True)).keys() == expected.keys()
    assert table.law([999]) is None


def test_file_round_trip_and_errors(tmp_path):
    table = build_ngram_table(_random_rows(1), order=3, keep=5, min_count=2)
    path = tmp_path / "t.safetensors"
    table.save(path, {"note": "test"})
    back = NgramTable.load(path)
    assert back.info["note"] == "test" and back.sizes() == table.sizes()
    for n in table.orders:
        for k, v in table.orders[n].items():
            if k == "prob":  # stored as float16: 2^-11 relative
                torch.testing.assert_close(back.orders[n][k], v, rtol=2**-10, atol=0)
            else:
                assert torch.equal(v, back.orders[n][k])
    with pytest.raises(ValueError, match="build it with scripts/build_smollm2_ngram.py"):
        NgramTable.load(tmp_path / "none.safetensors")
    from safetensors.torch import save_file

    save_file({"weights": torch.zeros(2)}, str(tmp_path / "model.safetensors"))
    with pytest.raises(ValueError, match="unexpected tensor"):
        NgramTable.load(tmp_path / "model.safetensors")
    draft = NgramDraft(table)
    with pytest.raises(ValueError, match="outside the target"):
        draft.start([[1, 2]], vocab_size=5)


@pytest.fixture(scope="module")
def target():
    return tiny_llama(5, vocab_size=VOCAB, sharpness=3.0)


def _distilled_table(model, order: int = 2):
    """The table the build script makes, for a tiny model: its own samples and its full laws."""
    runs = plain_generate(model, [[1, 2], [3, 4], [5, 6], [7, 8]] * 5, 40, sampling=SamplingOptions(), seed=0).tokens
    rows = []
    for prompt, answer in zip([[1, 2], [3, 4], [5, 6], [7, 8]] * 5, runs, strict=True):
        seq = torch.tensor(prompt + answer)
        with torch.no_grad():
            p = torch.softmax(model(seq[None]).logits[0].double(), -1)
        probs, ids = p.topk(VOCAB, -1)
        rows.append((seq, len(prompt), ids, probs))
    return build_ngram_table(rows, order=order, keep=6, min_count=2)


def test_speculative_decoding_with_the_table_samples_the_target_law(target):
    """q(x) = 0 outside each context's 6 kept tokens; those reach the output through the residual.

    N = 3000, vocabulary 16, T = 1: the G-test at level 1e-6 detects a TV >= detectable_tv (asserted
    < 0.15) with probability 0.99 (``histogram_check``).
    """
    table = _distilled_table(target)
    prompt = [1, 2, 3]
    law1, law2 = first_token_law(target, prompt, SamplingOptions()), two_token_law(target, prompt, SamplingOptions())
    ids, _ = table.law(prompt)
    outside = sum(law1[x] for x in range(VOCAB) if x not in set(ids.tolist()))
    assert outside > 0.02, f"the test needs target mass outside the table's tokens, got {outside:.3f}"
    samples = sample_prefixes(target, NgramDraft(table), prompt, 3000, 2, gamma=3, sampling=SamplingOptions(), seed=0, batch_size=3000)
    assert_first_tokens_follow(samples, law1, law2, 0.15)


def test_greedy_with_the_table_equals_plain_greedy():
    model = tiny_llama(6, vocab_size=VOCAB, sharpness=3.0).double()  # float64: no near-tie flips by batch shape
    table = _distilled_table(model)
    prompts = [[1, 2, 3], [9, 4]]
    plain = plain_generate(model, prompts, 30, sampling=SamplingOptions(0.0), seed=0).tokens
    for draft in (NgramDraft(table), LookupNgramDraft(PromptLookupDraft(), NgramDraft(table))):
        run = speculative_generate(model, draft, prompts, 30, gamma=4, sampling=SamplingOptions(0.0), seed=0)
        assert run.tokens == plain
        assert sum(run.position_accepted) > 0, "the table never drafted an accepted token: the test is not exercising it"


def test_mixed_batch_rows_are_independent_of_each_other():
    """Lookup matches in one row, the table drafts the other: with a seed per row, each row's tokens
    equal its single-row run (float64 models, so batch shape cannot change the arithmetic)."""
    model = tiny_llama(7, vocab_size=VOCAB, sharpness=2.0).double()
    table = _distilled_table(model)
    prompts = [[3, 5, 7, 3, 5], [2, 9, 11]]  # row 0 ends in "3 5", seen before: lookup proposes "7 3 5"
    draft = LookupNgramDraft(PromptLookupDraft(max_ngram=2), NgramDraft(table))
    assert draft.lookup.lookup(prompts[0], 4) and not draft.lookup.lookup(prompts[1], 4)
    both = speculative_generate(model, draft, prompts, 12, gamma=3, sampling=SamplingOptions(), seed=[11, 12]).tokens
    alone = [speculative_generate(model, draft, [p], 12, gamma=3, sampling=SamplingOptions(), seed=[s]).tokens[0] for p, s in zip(prompts, [11, 12], strict=True)]
    assert both == alone


def test_round_caps_are_checked_and_applied(target):
    table = _distilled_table(target)
    with pytest.raises(ValueError, match="max_tokens"):
        NgramDraft(table, max_tokens=0)
    with pytest.raises(ValueError, match="min_confidence"):
        NgramDraft(table, min_confidence=1.5)
    capped = speculative_generate(target, NgramDraft(table, max_tokens=1), [[1, 2, 3]], 20, gamma=4, sampling=SamplingOptions(), seed=0)
    assert len(capped.width_hist) <= 2 and capped.width_hist[1] > 0, capped.width_hist
    # a confidence bar above every q stops every row before its first draft: plain steps only
    none = speculative_generate(target, NgramDraft(table, min_confidence=1.0), [[1, 2, 3]], 20, gamma=4, sampling=SamplingOptions(), seed=0)
    assert none.drafted == 0 and len(none.tokens[0]) == 20
