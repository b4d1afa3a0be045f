"""Batch-1 products as streamed reductions (``streamed_products``): the same numbers as the library's products to
the rounding of their dtype, used exactly where ``static_pass`` says.

Tolerances, and why each:
* float64: the two sums differ only in order; for K <= 64 terms of size ~1 the results agree to ~1e-15, and we
  allow 1e-12.
* float32 weights: the same, ~1e-6 relative for K = 64; we allow 1e-5 times the largest output.
* bfloat16 weights: both forms accumulate in float32 and round once to bfloat16 (8 significant bits), so an
  output may differ by one bfloat16 step, 2^-7 of its size; we allow 2^-6 times the largest output.
* attention in bfloat16: the float32 intermediate values round differently from the kernel's own, then the
  output rounds once to bfloat16; the same one-step bound, 2^-6 times the largest output.
* the whole one-token pass of a tiny Llama: float64 1e-10 absolute (logits of a few units, as the static cache
  tests allow for a change of summation order); bfloat16 0.1 absolute, a few bfloat16 steps of logits of a few
  units after two layers of rounding.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from lm_tiny import tiny_llama  # noqa: E402

import specmath.lm.static_cache as static_cache  # noqa: E402
from specmath.lm.streamed_products import library_attention, module_product, streamed_attention, streamed_product  # noqa: E402


def _linear(n: int, k: int, dtype: torch.dtype, bias: bool) -> torch.nn.Linear:
    torch.manual_seed(n * k + bias)
    return torch.nn.Linear(k, n, bias=bias).to(dtype).requires_grad_(False)


@pytest.mark.parametrize("bias", [False, True], ids=["no bias", "bias"])
@pytest.mark.parametrize("dtype, relative", [(torch.float64, 1e-12), (torch.float32, 1e-5), (torch.bfloat16, 2 ** -6)],
                         ids=["float64", "float32", "bfloat16"])
def test_a_streamed_product_is_the_library_product_to_the_rounding_of_its_dtype(dtype, relative, bias):
    module = _linear(48, 64, dtype, bias)
    x = torch.randn(1, 1, 64, generator=torch.Generator().manual_seed(1)).to(dtype)
    streamed, library = streamed_product(module, x), module(x)
    assert streamed.dtype == library.dtype == dtype and streamed.shape == library.shape == (1, 1, 48)
    bound = relative * library.abs().max().item()
    assert (streamed.double() - library.double()).abs().max().item() <= bound


def test_a_module_that_is_not_a_plain_linear_runs_as_it_is():
    class Doubling(torch.nn.Linear):  # a subclass may compute something else: it is not rewritten
        def forward(self, x):
            return 2 * super().forward(x)

    module = Doubling(8, 4).requires_grad_(False)
    x = torch.randn(1, 1, 8)
    assert torch.equal(streamed_product(module, x), module(x))
    assert torch.equal(module_product(module, x), module(x))


def test_streamed_attention_is_the_library_attention_to_the_rounding_of_bfloat16():
    gen = torch.Generator().manual_seed(2)
    q = torch.randn(1, 4, 1, 8, generator=gen)
    k, v = torch.randn(1, 2, 16, 8, generator=gen), torch.randn(1, 2, 16, 8, generator=gen)
    mask = (torch.arange(16) <= 9)[None, None, None, :]
    exact = library_attention(q, k, v, mask, 0.35, True)
    for dtype, relative in ((torch.bfloat16, 2 ** -6), (torch.float32, 0.0)):
        out = streamed_attention(q.to(dtype), k.to(dtype), v.to(dtype), mask, 0.35, True)
        assert out.dtype == dtype
        if relative == 0.0:  # float32 inputs: streamed_attention calls library_attention with these very arguments,
            # one computation path run twice, so its results are the same bits on any CPU
            assert torch.equal(out, exact)
        else:
            assert (out.double() - exact.double()).abs().max().item() <= relative * exact.abs().max().item()


@pytest.mark.parametrize("dtype, tolerance", [(torch.float64, 1e-10), (torch.bfloat16, 0.1)], ids=["float64", "bfloat16"])
def test_the_static_pass_streams_one_token_of_one_row_only_while_compiling_for_the_cpu(monkeypatch, dtype, tolerance):
    """``static_pass`` run eagerly, once as it runs and once as it runs while being compiled (``is_compiling``
    patched): the same logits to the tolerance, the streamed products called only for one token of one row and
    only while compiling."""
    model = tiny_llama(0).to(dtype)
    calls = []

    def counted(module, x):
        calls.append(x.shape)
        return streamed_product(module, x)

    monkeypatch.setattr(static_cache, "streamed_product", counted)

    def logits(ids, compiling):
        monkeypatch.setattr(torch.compiler, "is_compiling", lambda: compiling)
        cache = static_cache.StaticRowCache(model, ids.shape[0])
        cache.prefill([[1, 2, 3]] * ids.shape[0])
        positions = torch.full_like(ids, 3) + torch.arange(ids.shape[1])
        with torch.inference_mode():  # as the cache's own passes run
            return static_cache.static_pass(cache.lean, cache.kv, ids, positions)

    one = torch.tensor([[7]])
    eager = logits(one, compiling=False)
    assert calls == []
    streamed = logits(one, compiling=True)
    # 2 layers x (q/k/v stacked, o, gate/up stacked, down) + the LM head, each on one token
    assert len(calls) == 2 * 4 + 1 and all(shape[:-1] == (1, 1) for shape in calls)
    assert (streamed.double() - eager.double()).abs().max().item() < tolerance
    calls.clear()
    logits(torch.tensor([[7, 8]]), compiling=True)  # two tokens: the library's products read W once for both
    logits(torch.tensor([[7], [8]]), compiling=True)  # two rows: likewise
    assert calls == []
