"""The endpoint's n per request and spec counters, and the law from a server's own logprobs, on fixed replies.

Exact where exact is possible: the logits row from the top-K logprobs keeps the K values as given and puts the rest
R = 1 - sum exp(logprob) on the other tokens evenly, so softmax(row) is p on the K tokens and R in total on the
rest, up to float64 rounding of exp and log (compared at 1e-12, far above that rounding, far below any law the
audit tells apart). The options that top-K logprobs cannot determine are refused, not approximated.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from specmath.audit.engines.endpoint import (
    SPEC_METRICS,
    EndpointEngine,
    cache_block,
    completion_request,
    completion_samples,
    metric_values,
)
from specmath.audit.engines.law import sampling_law
from specmath.audit.engines.protocol import EngineProtocolError
from specmath.audit.engines.semantics import semantics_named
from specmath.audit.engines.server_law import ServerLogprobs, check_options, logits_row
from specmath.sampling_options import SamplingOptions
from specmath.validation import InvalidArgument

VLLM = semantics_named("vllm")


def test_a_vllm_endpoint_asks_for_many_samples_per_request_and_reads_them_in_index_order():
    engine = EndpointEngine("http://10.0.0.7:8000/v1", semantics="vllm")
    assert engine.samples_per_request == engine.calls_per_request == 500
    assert engine.metrics_url == "http://10.0.0.7:8000/metrics"
    assert EndpointEngine("http://h:1", semantics="llama.cpp").samples_per_request == 1
    assert completion_request([1], 7, 2, SamplingOptions(1.0), "m", n=300)["n"] == 300
    reply = {"choices": [{"index": 1, "token_ids": [5, 6]}, {"index": 0, "token_ids": [3, 4]}]}
    assert completion_samples(reply, 2) == [[3, 4], [5, 6]]
    with pytest.raises(EngineProtocolError, match="1 choices for n = 2"):
        completion_samples({"choices": [{"index": 0, "token_ids": [1]}]}, 2)


def test_an_api_key_goes_in_a_bearer_header(monkeypatch):
    monkeypatch.setenv("SPECMATH_API_KEY", "k-123")
    assert EndpointEngine("https://llm.example/v1")._headers()["Authorization"] == "Bearer k-123"
    monkeypatch.delenv("SPECMATH_API_KEY")
    assert "Authorization" not in EndpointEngine("https://llm.example/v1")._headers()


def test_spec_counters_are_summed_over_label_sets_from_prometheus_text():
    text = "\n".join([
        "# HELP vllm:spec_decode_num_draft_tokens_total Number of draft tokens.",
        'vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="default"} 120.0',
        'vllm:spec_decode_num_draft_tokens_total{engine="1",model_name="default"} 30.0',
        'vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="default"} 17.0',
        'vllm:spec_decode_num_drafts_total{engine="0",model_name="default"} 40.0'])
    assert metric_values(text, SPEC_METRICS) == {"drafted": 150.0, "accepted": 17.0, "drafts": 40.0}


def test_the_kv_block_is_read_from_vllms_cache_config_labels_and_only_under_prefix_caching():
    def info(**labels):
        fields = ",".join(f'{k}="{v}"' for k, v in {"block_size": "32", "cache_dtype": "auto", "engine": "0",
                                                     "enable_prefix_caching": "True", "prefix_match_unit": "None",
                                                     **labels}.items())
        return f"# TYPE vllm:cache_config_info gauge\nvllm:cache_config_info{{{fields}}} 1.0\n"

    assert cache_block(info()) == 32
    assert cache_block(info(prefix_match_unit="16")) == 16  # hits land every 16 tokens, inside a 32-token block
    assert cache_block(info(enable_prefix_caching="False")) is None  # no sharing: every child computes the prompt
    assert cache_block(info(block_size="None")) is None
    assert cache_block(info(kv_cache_memory_bytes='a \\"quoted\\" value', block_size="64")) == 64
    assert cache_block("vllm:spec_decode_num_drafts_total 3.0\n") is None  # a server that does not say


def test_the_logits_row_gives_p_on_the_returned_tokens_and_the_rest_on_the_others():
    top = {3: math.log(0.5), 7: math.log(0.3), 1: math.log(0.15)}
    row, rest = logits_row(top, 10)
    law = sampling_law(row, SamplingOptions(1.0), VLLM)
    assert abs(rest - 0.05) < 1e-12
    assert all(abs(law[t] - math.exp(v)) < 1e-12 for t, v in top.items())
    others = [x for x in range(10) if x not in top]
    assert abs(law[others].sum() - 0.05) < 1e-12 and np.ptp(law[others]) < 1e-15
    # top-k 2 at T = 0.7: softmax of the two largest logprobs / 0.7, exactly what the full logits give
    law = sampling_law(row, SamplingOptions(0.7, top_k=2), VLLM)
    a, b = 0.5 ** (1 / 0.7), 0.3 ** (1 / 0.7)
    assert abs(law[3] - a / (a + b)) < 1e-12 and abs(law[7] - b / (a + b)) < 1e-12 and law[1] == 0


def test_options_the_top_logprobs_cannot_determine_are_refused():
    check_options(SamplingOptions(1.0), 20)
    check_options(SamplingOptions(0.7, top_k=20), 20)
    check_options(SamplingOptions(1.0, top_p=0.9), 20)
    for options, match in ((SamplingOptions(0.7), "T != 1"), (SamplingOptions(1.0, top_k=40), "top-k 40 >"),
                           (SamplingOptions(1.0, repetition_penalty=1.5), "penalties"),
                           (SamplingOptions(1.0, min_p=0.1), "min-p")):
        with pytest.raises(InvalidArgument, match=match):
            check_options(options, 20)


class FakeServer:
    """top_logprobs and counters as a vLLM server answers them, from a fixed law per context length."""

    def __init__(self, drafted_per_request=0):
        self.drafted, self.per = 0, drafted_per_request

    def counters(self):
        return {"drafted": self.drafted, "accepted": 0}

    def top_logprobs(self, context, top):
        self.drafted += self.per
        return {len(context) % 5: math.log(0.6), 9: math.log(0.3)}


def test_the_server_law_asks_once_per_context_and_counts_drafting_during_its_requests():
    law = ServerLogprobs(FakeServer(), 10, SamplingOptions(1.0), top=2)
    rows = law([[1, 2], [1, 2, 3], [1, 2]])
    assert rows.shape == (3, 10) and np.array_equal(rows[0], rows[2])
    assert law.report([[1, 2]])["contexts"] == 2 and abs(law.report([[1, 2]])["rest_mass_prompt"] - 0.1) < 1e-12
    assert law.report()["drafted_during_law"] == 0
    drafting = ServerLogprobs(FakeServer(drafted_per_request=3), 10, SamplingOptions(1.0), top=2)
    drafting([[4]])
    assert drafting.report()["drafted_during_law"] == 3
    with pytest.raises(InvalidArgument, match="nucleus"):
        ServerLogprobs(FakeServer(), 10, SamplingOptions(1.0, top_p=0.95), top=2)([[4]])
