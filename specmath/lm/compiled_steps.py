"""The static-cache pass compiled: ``torch.compile`` on a CPU, CUDA graphs (``mode="reduce-overhead"``) on a GPU.

Notation: gamma = draft tokens per round; a *width* n is the number of tokens one pass feeds (plain
decoding and each draft step: 1; the target's verification: gamma + 1; a draft catching up: 2).

``compiled(static_cache.static_pass, device_kind)`` is that pass under ``torch.compile(dynamic=False)``:
every input shape (B, n) and capacity L gets its own graph, specialised to those sizes, which is what
makes it fast and capturable; a round meets at most a few widths, so a run compiles a few graphs.
Why this and not the alternatives:

* ``dynamic=False`` over ``dynamic=True``: symbolic shapes cost guards and generic kernels on every
  call, and on a GPU CUDA graphs need static shapes anyway; the widths of a run are few.
* the whole pass as one graph, not one graph per layer: a 32-layer model called layer by layer pays
  the compiled function's guard check and call 32 times, about what Python dispatch cost eagerly.
* on CUDA, ``mode="reduce-overhead"`` (Inductor's CUDA-graph trees) over capturing ``torch.cuda.CUDAGraph``
  by hand: it records one graph per shape, keeps the inputs' static copies and treats the KV buffers
  of ``StaticKV`` (module buffers) as static addresses, which is the bookkeeping gpt-fast writes by hand;
  one code path then serves the CPU and the GPU.
* on the CPU, Inductor's C++ wrapper (``cpp_wrapper``): the graph's kernels are called from generated C++
  instead of from a generated Python function, so a kernel call no longer pays the interpreter. A pass of
  small layers (the bundled target: 32 layers of width 64) is mostly such calls, and the verification of
  gamma + 1 tokens, whose products are library calls, gains the most. The price is a slower first compile
  (the wrapper is C++ to compile too); Inductor's cache keeps it like the kernels. Measured on a 2-core AMD EPYC
  (family 26, 1 thread, 2026-12-07, ``python benchmarks/compile_wrapper.py --repeats 4``, the wrappers' processes
  alternating; ``benchmarks/results/cpu_2026-12-07_compile_wrapper.json``), the bundled pair's compiled plain step
  took 9-18% longer with the Python wrapper, the verification 1-15% longer and the round's own small graph 12-23%
  shorter, a round 0.97-1.10 times as long in all; compiling every graph with an empty cache took 101 s with the
  C++ wrapper and 58 s with the Python one, and the same 8-9 s with the cache warm.
* bfloat16 / float16 weights on a CPU, and float32 weights of a large model (64 MiB or more), are frozen into the graph
  (``freezes``): their products then read weights laid out once for them, not converted or re-blocked at every
  call. Which products read them is a choice by dtype (``FROZEN_PRODUCTS``): bfloat16 weights go to the library's
  own (oneDNN's, over weights it packed once), the others to Inductor's C++ matrix-product templates, timed against
  the library's products while the graph compiles ("autotuned"). Why not let that timing choose for bfloat16 too:
  Inductor times each product alone, called again and again, so its weight sits in the CPU's caches, while a
  decoding pass reads every weight once from memory. On a 2-core AMD EPYC (family 26, AVX-512 with BF16, no AMX; 1
  thread, 2026-12-07, ``python benchmarks/frozen_products.py --repeats 2``, results in
  ``benchmarks/results/cpu_2026-12-07_frozen_products.json``), SmolLM2's frozen bfloat16 one-token pass took 12.2
  and 12.5 ms with oneDNN's products, 17.9-18.5 ms with the timed choice and 28.0-28.9 ms with the templates alone
  (the floor W / B: 7.1 ms), and compiled in 36-40 s instead of 52-53 s; in float32 the templates won where the
  pass reads its weights (16.8-17.0 ms timed, 16.8-17.5 ms templates alone, 28.6-29.4 ms oneDNN's). On the Intel
  Xeon (AMX) and the Zen 4 EPYC of ``docs/measurements/cpu_2026-12-07_decode_speed.md`` and
  ``cpu_2026-12-07_epyc-zen4_decode_speed.md`` the timed choice read bfloat16 weights at 81% of the floor's
  speed; oneDNN's products alone were not measured there. Frozen graphs
  are not kept by Inductor's graph cache, and their constants are each graph's own copy of the weights, so a small
  float32 model, whose passes are bound by their kernels' fixed costs, and float64 are not frozen.
* a model draft's gamma steps, their warps and their draws, are one graph (``draft_graph``): the draws'
  noise is drawn eagerly from the run's ``torch.Generator`` objects, in the order the step-by-step loop
  draws it, and the graph samples argmax(q / noise), torch.multinomial's own one-sample form, so the
  seeded, pinned tokens stay the same; one call pays the compiled call's fixed cost once for gamma steps.
* the work after each pass is one graph too (``round_graph``): a round's gamma + 1 warps, accept/reject, bonus
  draw and counters, and a plain step's warp and draw, their draws taken eagerly in the same order. Eagerly it
  is some forty small kernel calls a round, a good part of a compiled pass of a small model; a graph of its own,
  not part of the pass's, keeps the pass's graphs shared by plain decoding, the draft and the verification, and
  lets the tests' lossy accept/reject steps run in its place, eagerly.

Compile time: Dynamo traces in each new process; Inductor's FX graph cache (on by default) keeps the
generated kernels on disk, in ``$TORCHINDUCTOR_CACHE_DIR`` (default ``/tmp/torchinductor_$USER``), so a
second process with the same model shapes skips code generation and C++ compilation. The bench reports
its warm-up (where the compiling happens) apart from the timed runs.

Where it is used, by measurement: ``DecodeOptions.compile`` is False unless asked for, and ``specmath bench``
compiles by default on a CUDA device only (``drafts.compiles_by_default``). On one H200
(``docs/measurements/gpu_h200_2026-12-04.md``) the CUDA graphs took SmolLM2's bfloat16 plain decoding at batch 1
from 40.9 to 424 tokens/s and the bundled pair's float32 from 50.4 to 467, after 48-95 s of compiling. On a 2-core
CPU, 1 thread (``docs/measurements/cpu_2026-12-01_decode_speed.md``, an Intel Xeon, and
``cpu_2026-12-06_decode_speed.md``, an AMD EPYC), compiled plain decoding of the bundled pair ran 3.3 and 5.4 times eager
(medians; on the EPYC the one-token passes streamed their products, ``streamed_products``, the kernels were called
from the C++ wrapper, the steps' sampling was a graph of its own and the cache held 128 slots, not 256) on the
machine as it was and 2.8 and 5.1 times beside two CPU-bound processes, but the
warm-up that compiles its graphs took 8-25 s a process
with Inductor's cache warm (and minutes on a machine loaded far beyond that), more than a
bench or a test of a few hundred tokens saves.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch

__all__ = ["compiled", "compile_mode", "freezes", "kept", "FROZEN_FLOAT32_BYTES", "FROZEN_PRODUCTS"]

#: distinct (width, capacity, batch, dtype) shapes one process may compile for the pass (Dynamo's default is 8)
RECOMPILE_LIMIT = 64


def compile_mode(device: torch.device | str) -> str | None:
    """``"reduce-overhead"`` (CUDA graphs) on a GPU, None (Inductor's default: fused C++/OpenMP kernels) on a CPU."""
    return "reduce-overhead" if torch.device(device).type == "cuda" else None


#: Inductor's options on a CPU, the C++ wrapper (``torch.compile`` takes a mode or options, not both; a GPU takes the mode)
CPU_OPTIONS = {"cpp_wrapper": True}

#: Inductor's configuration while a frozen CPU graph is traced and compiled, by its products (``FROZEN_PRODUCTS``): the
#: weights it reads become constants, laid out for the products that read them. "library": ATen's products
#: (oneDNN's, over weights it packs once); "autotuned": Inductor's own C++ templates as well, each product's kernel
#: chosen among them by timing while it compiles
CPU_FREEZING = {
    "library": {"freezing": True, "max_autotune": False},
    "autotuned": {"freezing": True, "max_autotune": True, "max_autotune_gemm_backends": "CPP,ATEN"},
}

#: the products of a frozen CPU graph, by weight dtype (measured: the module docstring)
FROZEN_PRODUCTS = {torch.bfloat16: "library", torch.float16: "autotuned", torch.float32: "autotuned"}

#: float32 weights of at least this many bytes are compiled frozen too: SmolLM2 (538 MB), whose pass is bound by
#: reading its weights, is faster frozen; the bundled target (7 MB), bound by its kernels' fixed costs, is slower
FROZEN_FLOAT32_BYTES = 64 * 2**20


def freezes(device: torch.device | str, dtype: torch.dtype, weight_bytes: int) -> str | None:
    """The products of a pass over ``weight_bytes`` of weights of ``dtype`` on ``device`` compiled frozen
    (``FROZEN_PRODUCTS``: "library" or "autotuned", what ``compiled(..., frozen=...)`` takes), or None where it is
    not frozen: on a CPU, bfloat16 / float16 weights of any size and float32 weights of ``FROZEN_FLOAT32_BYTES`` or
    more are frozen.

    Why, by measurement on a 2-core Intel Xeon (``docs/measurements/cpu_2026-12-07_decode_speed.md``): the
    library's one-row product converts each bfloat16 weight as it reads it, at half its float32 rate in bytes, and
    the products over frozen, re-laid-out weights read them at close to the copy loop's rate (SmolLM2's
    bfloat16 one-token pass 47.5 -> 26 ms). In float32, SmolLM2's pass went from 62 ms (streamed products) to 46.5
    ms frozen, while the bundled pair, whose weights sit in the caches and whose passes are bound by their kernels'
    fixed costs, decoded slower frozen (plain 462 tokens/s, against 505-515 unfrozen in a run minutes before).
    The price is a compile that Inductor's graph cache does not keep (a minute or more for each graph, in every
    process); float64, which the exactness tests use, is never frozen."""
    if torch.device(device).type != "cpu":
        return None
    if dtype == torch.float32 and weight_bytes < FROZEN_FLOAT32_BYTES:
        return None
    return FROZEN_PRODUCTS.get(dtype)


@functools.cache
def compiled(function: Callable, device_kind: str, frozen: str | None = None) -> Callable:
    """``function`` (``static_pass``) compiled for a device kind ("cpu", "cuda"), one graph per shape, built once;
    ``frozen`` (a CPU only, ``freezes``: "library" or "autotuned"): traced and compiled under that entry of
    ``CPU_FREEZING``, the module tensors it reads (the weights) frozen into each graph as constants."""
    import torch._dynamo

    config = torch._dynamo.config
    for name in ("recompile_limit", "cache_size_limit"):  # renamed in torch 2.6; set whichever exists
        if hasattr(config, name):
            setattr(config, name, max(getattr(config, name), RECOMPILE_LIMIT))
    if frozen is not None and frozen not in CPU_FREEZING:
        raise ValueError(f"frozen must be one of {sorted(CPU_FREEZING)} or None, got {frozen!r}")
    if device_kind == "cpu":
        graph = torch.compile(function, dynamic=False, fullgraph=True, options=dict(CPU_OPTIONS))
        return functools.partial(_frozen_call, graph, CPU_FREEZING[frozen]) if frozen else graph
    if frozen:
        raise ValueError(f"frozen graphs are compiled for the CPU, not for {device_kind}")
    return torch.compile(function, dynamic=False, fullgraph=True, mode=compile_mode(device_kind))


def _frozen_call(graph: Callable, freezing: dict, *args, **kwargs):
    """``graph(*args, **kwargs)`` under ``freezing`` (an entry of ``CPU_FREEZING``). Why around every call and not
    in ``torch.compile``'s options: Dynamo reads ``freezing`` from Inductor's global configuration when it traces (a
    recompile can come at any call), and the options reach Inductor only; the patch costs about 15 us a call."""
    import torch._inductor.config

    with torch._inductor.config.patch(freezing):
        return graph(*args, **kwargs)


def kept(outputs: tuple, device: torch.device) -> tuple:
    """A compiled call's outputs, safe to read after the next replay: copies on CUDA, where CUDA graphs write a
    graph's outputs into the same memory at every replay (gpt-fast clones its sampled tokens likewise); as they
    are elsewhere."""
    return tuple(t.clone() for t in outputs) if device.type == "cuda" else outputs
