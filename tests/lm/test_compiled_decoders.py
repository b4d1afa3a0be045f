"""The compiled decoders (``DecodeOptions(compile=True)``: static caches, ``torch.compile``, one graph per width).

Two checks, both ``slow`` (compiling is most of their time): in float64 the compiled plain and speculative
decoders emit the pinned tokens of the eager runs (test_pinned_tokens.py says why float64 tokens can be
compared with ``==``), and the compiled speculative decoder samples the exact law of a tiny model.

They share one file so that they share one test worker: Inductor's first graph in a process pays its one-time
set-up (the C++ toolchain's checks, the precompiled header), about 20 CPU-seconds on a 2-core CPU, and a
second graph in the same process does not. Each graph of the bundled target (32 layers) then costs about a
minute of compiling with Inductor's cache cold, as on a fresh CI machine; warm, seconds.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from lm_tiny import noisy_copy, tiny_llama  # noqa: E402
from test_pinned_tokens import NEW_TOKENS, PLAIN, SPECULATIVE, SPECULATIVE_RUNS, TEXTS, _counters  # noqa: E402

from specmath.lm.decode_options import DecodeOptions  # noqa: E402
from specmath.lm.pairs import load_named_pair  # noqa: E402
from specmath.lm.plain_decode import plain_generate  # noqa: E402
from specmath.lm.speculative_decode import speculative_generate  # noqa: E402
from specmath.lm.static_cache import StaticRowCache  # noqa: E402

pytestmark = pytest.mark.slow


def test_the_compiled_decoders_emit_the_pinned_tokens():
    """Plain decoding and the model draft's rounds, which meet every width (1, a draft catching up by 2,
    gamma + 1), emit the eager runs' literals."""
    pair = load_named_pair("bundled", dtype=torch.float64, texts=TEXTS)
    options, tokens = PLAIN["one seed"]
    assert plain_generate(pair.target, pair.prompts, NEW_TOKENS, options.replace(compile=True)).tokens == tokens
    make_draft, options = SPECULATIVE_RUNS["model draft, token verification"]
    run = speculative_generate(pair.target, make_draft(pair), pair.prompts, NEW_TOKENS, options.replace(compile=True))
    tokens, counters, _ = SPECULATIVE["model draft, token verification"]
    assert run.tokens == tokens
    assert _counters(run) == counters


def test_the_compiled_decoders_sample_the_exact_law():
    """The histogram check on the compiled path: N = 3000, vocabulary 16, level 1e-6, power 0.99 at the
    detectable TV (~0.08 for one token); the lossy control must still be rejected at the same N."""
    from specmath.lm.histogram import lossless_report
    from specmath.settings import AuditSettings

    target = tiny_llama(0, vocab_size=16, sharpness=6.0)
    draft = noisy_copy(target, 0.5, 1)
    report = lossless_report(target, draft, [1, 2, 3], DecodeOptions(gamma=3, compile=True),
                             settings=AuditSettings(n=3000), batch_size=3000)
    for key in ("first_token", "first_two_tokens"):
        assert report[key].passed and report[key].detectable_tv < 0.15, f"{key}: p={report[key].p_value:.2e}"
    for key in ("negative_control_first_token", "negative_control_first_two_tokens"):
        assert report[key].rejects


def test_one_row_compiled_streams_its_products_and_emits_the_eager_tokens():
    """At batch 1 the compiled one-token passes (plain decoding, the draft's steps) compute their products as
    streamed reductions (``streamed_products``), in a different summation order from the eager passes: in float64
    the tokens stay those of the eager runs (a draw flips only within ~1e-15 of a boundary)."""
    target = tiny_llama(0, sharpness=4.0).double()
    draft = noisy_copy(target, 0.3, 1)
    prompts, options = [[1, 2, 3, 1, 2]], DecodeOptions(gamma=3, seed=5)
    for run in (lambda o: plain_generate(target, prompts, 24, o), lambda o: speculative_generate(target, draft, prompts, 24, o)):
        eager, compiled = run(options), run(options.replace(compile=True))
        assert compiled.tokens == eager.tokens


def test_low_precision_cpu_graphs_freeze_the_weights_agree_with_eager_and_compile_once_per_shape():
    """bfloat16 weights on the CPU: the compiled passes freeze them into the graph (``compiled_steps.freezes``) and
    compute the products over the weights laid out once (oneDNN's, ``FROZEN_PRODUCTS``), the cache an ordinary input
    of the graph. Their logits are the
    eager pass's to bfloat16 rounding: every product is summed in float32 in another order and each layer rounds
    its output to bfloat16 (2^-8 relative), so two orders may differ by an ulp or two of a layer's output, which
    the next layers carry: over the 2 layers here, logits of 1-1.5 differed by at most 0.008 (two ulps, seeds 0-2),
    and we allow 0.1. A second cache (a second run) meets the same graphs: no compile, the same logits to the bit."""
    import torch._dynamo.utils

    target = tiny_llama(0, sharpness=4.0).to(torch.bfloat16)
    prompt, verify = [1, 2, 3, 1, 2], [[3, 1, 2, 3, 1]]

    def passes(compiled: bool) -> tuple[StaticRowCache, list[torch.Tensor]]:
        cache = StaticRowCache(target, 1, compiled=compiled)
        cache.prefill([prompt])
        one = cache.feed([[3]])  # a 1-token pass: plain decoding's width
        cache.keep([len(prompt)])
        return cache, [one, cache.feed(verify)]  # a 5-token pass: the verification's width

    _, eager = passes(False)
    cache, first = passes(True)
    assert cache.frozen
    for compiled, reference in zip(first, eager, strict=True):
        assert compiled.dtype == torch.bfloat16
        assert (compiled.float() - reference.float()).abs().max() < 0.1
    graphs = torch._dynamo.utils.counters["stats"]["unique_graphs"]
    _, second = passes(True)
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] == graphs
    assert all(torch.equal(a, b) for a, b in zip(first, second, strict=True))
