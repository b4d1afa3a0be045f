"""specmath.lm: speculative decoding of real language models in torch (optional extra ``specmath[torch]``).

Notation as everywhere in specmath: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)) (Leviathan et al. 2023; Chen et al. 2023 swap the names).

Modules, one idea each:

* ``warps``       logits -> next-token probabilities (temperature, top-k, top-p, greedy), identical for p and q
* ``cache``       a KV cache with per-row lengths: keep accepted positions, drop rejected ones
* ``verify``      accept with min(1, p/q), resample from norm(max(0, p - q)), bonus token (batched)
* ``drafts``      draft proposers: a smaller model, a layer-skip self-draft, prompt lookup (one-hot q)
* ``speculative`` ``speculative_generate``; ``plain`` ``plain_generate`` on the same code path
* ``models``      loading pairs (local path, hub name, the GGUF SmolLM2 from PyPI), vocabulary checks
* ``histogram``   N speculative samples vs the exact target law: G-test, TV bound, power, negative control
* ``bench``       tokens/s of plain, speculative and HF assisted generation, the speedup model

Only this package imports torch; the exact core never does.
"""
