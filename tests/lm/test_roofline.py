"""The bandwidth floor: the weight bytes a batch-1 pass reads, and the fraction of the floor a rate reaches."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from lm_tiny import tiny_llama  # noqa: E402

from specmath.lm.roofline import Roofline, linear_bandwidth, linear_weights, memory_bandwidth, weight_bytes  # noqa: E402


def test_a_pass_reads_every_weight_once_but_the_untied_embedding_table():
    model = tiny_llama(0)  # untied: the output layer has its own matrix
    every = sum(p.numel() * p.element_size() for p in model.parameters())
    table = model.get_input_embeddings().weight
    rope = sum(b.numel() * b.element_size() for b in model.buffers() if b.is_floating_point())
    assert weight_bytes(model) == every - table.numel() * table.element_size() + rope
    model.lm_head.weight = model.get_input_embeddings().weight  # tied: the table is read by the output layer, once
    assert weight_bytes(model) == every - table.numel() * table.element_size() + rope


def test_the_roofline_fraction_is_the_rate_over_bandwidth_per_weight_byte():
    roof = Roofline(weight_bytes=2 * 10**8, bandwidth=4 * 10**10, plain_tokens_per_s=50.0)
    assert roof.floor_tokens_per_s == 200.0 and roof.fraction == 0.25
    assert roof.to_json()["bandwidth_GB_per_s"] == 40.0
    bandwidth = memory_bandwidth(repeats=1, nbytes=2**22)
    assert math.isfinite(bandwidth) and bandwidth > 0


def test_the_linear_sweep_multiplies_by_each_linear_weight_once():
    model = tiny_llama(0)
    weights = linear_weights(model)
    linears = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
    assert len(weights) == len(linears) and all(w.dim() == 2 for w in weights)
    model.lm_head.weight = model.get_input_embeddings().weight  # tied: still one head matrix, and no table besides
    assert len(linear_weights(model)) == len(linears)
    rate = linear_bandwidth(weights, repeats=1)
    assert math.isfinite(rate) and rate > 0
    with pytest.raises(ValueError, match="at least one weight"):
        linear_bandwidth([])
    # the streamed products a compiled one-token pass runs: one matrix (one graph to compile), CPU only
    streamed = linear_bandwidth(weights[:1], repeats=1, streamed=True)
    assert math.isfinite(streamed) and streamed > 0
    with pytest.raises(ValueError, match="compiled for the CPU"):
        linear_bandwidth([torch.empty(4, 4, device="meta")], streamed=True)
