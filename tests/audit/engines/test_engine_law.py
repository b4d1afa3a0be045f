"""The exact law under the options engines ship: penalties position by position, each engine's order, the
options' validation, and agreement with Hugging Face's logits processors (an independent implementation)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from specmath.audit.engines.law import MIN_EXPECTED, OTHER, first_token_law, sampling_law, two_token_law
from specmath.audit.engines.penalties import penalised_logits, penalty_counts
from specmath.audit.engines.semantics import SEMANTICS, EngineSemantics, semantics_named
from specmath.sampling_options import SamplingOptions
from specmath.validation import InvalidArgument, UnknownName

LLAMA, HF, VLLM = SEMANTICS["llama.cpp"], SEMANTICS["hf"], SEMANTICS["vllm"]


def test_repetition_divides_positive_and_multiplies_negative_logits_once_whatever_the_count():
    z = np.array([2.0, -2.0, 1.0, 0.5])
    out = penalised_logits(z, [0, 0, 1], [], SamplingOptions(repetition_penalty=2.0), LLAMA)
    assert out.tolist() == [1.0, -4.0, 1.0, 0.5]


def test_frequency_counts_and_presence_is_once():
    z = np.zeros(4)
    out = penalised_logits(z, [0, 0, 1], [0], SamplingOptions(frequency_penalty=0.5, presence_penalty=1.0), LLAMA)
    assert out.tolist() == [-2.5, -1.5, 0.0, 0.0]  # token 0 seen 3 times: 3 * 0.5 + 1; token 1 once: 0.5 + 1


def test_the_window_counts_the_last_tokens_of_the_history_and_ignored_tokens_never():
    options = SamplingOptions(frequency_penalty=1.0, penalty_window=2)
    assert penalty_counts("frequency", [5, 6, 7], [8], options, LLAMA) == {7: 1, 8: 1}
    node_like = EngineSemantics("node", LLAMA.order, dict.fromkeys(("repetition", "presence", "frequency"), "generated"),
                                64, frozenset({8}))
    assert penalty_counts("frequency", [5, 6, 7], [8, 9, 9], options, node_like) == {9: 2}
    # vLLM: repetition over prompt and output, presence and frequency over the output only
    assert penalty_counts("repetition", [5], [6], SamplingOptions(), VLLM) == {5: 1, 6: 1}
    assert penalty_counts("presence", [5], [6], SamplingOptions(), VLLM) == {6: 1}


def test_the_second_token_law_counts_the_first_token_position_by_position():
    # a 3-token world whose logits ignore the context: only the penalty makes x2 depend on x1
    z = np.array([1.0, 0.0, -1.0])

    def logits(contexts):
        return np.array([z for _ in contexts])

    options = SamplingOptions(presence_penalty=2.0)
    semantics = EngineSemantics("generated only", LLAMA.order, dict.fromkeys(("repetition", "presence", "frequency"),
                                                                               "generated"))
    p1 = first_token_law(logits, [2], options, semantics)
    assert np.allclose(p1, np.exp(z) / np.exp(z).sum())  # nothing generated yet: no penalty
    cells, frequent = two_token_law(logits, [2], options, semantics, n=10**6)
    assert frequent == {0, 1, 2}
    for x1 in range(3):
        penalised = z.copy()
        penalised[x1] -= 2.0  # x1 is in the history of x2
        expected = p1[x1] * np.exp(penalised) / np.exp(penalised).sum()
        assert all(math.isclose(cells[(x1, x2)], expected[x2], rel_tol=1e-12) for x2 in range(3))


def test_two_token_cells_pool_rare_outcomes_into_other_and_sum_to_one():
    rng = np.random.default_rng(0)
    table = rng.normal(0, 2, (30, 30))

    def logits(contexts):
        return np.array([table[c[-1]] for c in contexts])

    cells, frequent = two_token_law(logits, [3, 4], SamplingOptions(0.8, top_k=10), HF, n=500)
    assert math.isclose(sum(cells.values()), 1.0, abs_tol=1e-12)
    assert all(500 * v >= MIN_EXPECTED for k, v in cells.items() if OTHER not in k)


def test_llama_cpp_truncates_before_temperature_and_hugging_face_after():
    z = np.log(np.array([0.5, 0.3, 0.2]))
    options = SamplingOptions(temperature=3.0, top_p=0.75)
    # llama.cpp: top-p on softmax(z) = (0.5, 0.3, 0.2): the mass before token 2 is 0.8 >= 0.75, it goes; HF:
    # temperature first flattens the law to about (0.39, 0.33, 0.29), the mass before token 2 is 0.71 < 0.75
    assert (sampling_law(z, options, LLAMA) > 0).tolist() == [True, True, False]
    assert (sampling_law(z, options, HF) > 0).tolist() == [True, True, True]
    min_p = SamplingOptions(temperature=3.0, min_p=0.5)
    assert (sampling_law(z, min_p, LLAMA) > 0).tolist() == [True, True, False]  # 0.2 < 0.5 * 0.5 before temperature
    assert (sampling_law(z, min_p, HF) > 0).tolist() == [True, True, True]  # after it, 0.29 >= 0.5 * 0.39


def test_sampling_law_matches_hugging_face_processors_with_min_p_bias_and_repetition():
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers.generation.logits_process import (
        LogitsProcessorList,
        MinPLogitsWarper,
        RepetitionPenaltyLogitsProcessor,
        SequenceBiasLogitsProcessor,
        TemperatureLogitsWarper,
        TopKLogitsWarper,
    )

    logits = torch.randn(1, 40, generator=torch.Generator().manual_seed(1)) * 3
    history = torch.tensor([[3, 7, 7, 11]])
    options = SamplingOptions(0.7, top_k=15, min_p=0.05, logit_bias=((4, 2.5), (9, -3.0)), repetition_penalty=1.3)
    processors = LogitsProcessorList([
        SequenceBiasLogitsProcessor({(4,): 2.5, (9,): -3.0}), RepetitionPenaltyLogitsProcessor(1.3),
        TemperatureLogitsWarper(0.7), TopKLogitsWarper(15), MinPLogitsWarper(0.05)])
    hf = torch.softmax(processors(history, logits.clone()), -1)[0].double().numpy()
    ours = sampling_law(logits[0].numpy(), options, HF, [3, 7, 7, 11])
    # same support exactly; values from float32 (HF) and float64 (ours): 1e-6 covers float32 rounding
    assert np.array_equal(hf > 0, ours > 0)
    assert np.abs(hf - ours).max() < 1e-6


def test_options_are_checked_and_named():
    with pytest.raises(InvalidArgument, match="min_p must be a finite number in \\(0, 1\\]"):
        SamplingOptions(min_p=1.5)
    with pytest.raises(InvalidArgument, match="logit_bias holds \\(token, bias\\) pairs"):
        SamplingOptions(logit_bias=((1, 2, 3),))
    with pytest.raises(UnknownName, match="did you mean 'top_p'"):
        SamplingOptions.from_json({"top_pp": 0.9})
    with pytest.raises(UnknownName, match="choose from: hf, llama.cpp, vllm"):
        semantics_named("sglang")
    with pytest.raises(InvalidArgument, match="does not take frequency_penalty"):
        HF.check_supports(SamplingOptions(frequency_penalty=1.0))
    options = SamplingOptions(0.5, top_k=3, logit_bias=((2, -1.0),), penalty_window=8, presence_penalty=0.5)
    assert SamplingOptions.from_json(options.to_json()) == options
    assert options.label() == "T=0.5 top-k 3 presence 0.5 window 8 bias 2-1"


def test_engine_semantics_read_from_an_engine_info_reply():
    semantics = EngineSemantics.from_json({"engine": "x", "order": list(LLAMA.order), "history": "generated",
                                           "window": 64, "ignored": [198], "options": ["temperature", "min_p"]})
    assert semantics.history == {"repetition": "generated", "presence": "generated", "frequency": "generated"}
    assert semantics.ignored == {198} and semantics.window_for(SamplingOptions()) == 64
    with pytest.raises(UnknownName, match="unknown sampling stage 'top_q'"):
        EngineSemantics.from_json({"order": ["top_q"]})
