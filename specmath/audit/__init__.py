"""specmath.audit: point specmath's exact laws at any speculative sampler and get a verdict.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

Modules, one idea each:

* ``adapters``    the interface (target_probs, draft_probs, draft_tokens, generator) -> tokens, one
                  round per call or batched ([N, gamma+1, V] ... -> [N, gamma+1], -1 padded), and
                  adapters for specmath's torch sampler, transformers' ``_speculative_sampling``,
                  the bug zoo's reference samplers
* ``cases``       the battery of (p, q, gamma) and the exact law of the whole round for each
* ``power``       per-position and joint G-tests, Bonferroni levels, detectable TV, sequential looks
* ``edge_draws``  generators whose k-th draw is exactly 0 or the largest uniform below 1
* ``replay``      the sampler's own torch draws fed to the exact algorithm, token by token
* ``reference_round`` the correct float (numpy) round; the bug zoo's samplers swap one of its blocks
* ``reference_rounds`` the correct round on a whole batch (numpy, and specmath's torch step)
* ``round_drafts``  the auditor's drafts for many rounds at once, and fresh arrays for each call
* ``sampler_output`` a sampler's output read strictly (invalid output is an error, not a loss)
* ``sampler_calls`` one call of the sampler: fresh inputs, writes into them noticed, errors named
* ``probes``      the edge probes: which draw is 0 or just below 1, and what the sampler must emit
* ``runner``      the audit loop; ``report`` the table, what points at a bug, and JSON (``specmath audit ADAPTER``)

End-to-end audits of whole generate calls (``specmath audit-generate ENGINE --pair PAIR``):

* ``generate_pairs``   the model pairs (tiny, bundled, smollm2) and the prompts audited at
* ``engines``          specmath, HF assisted, HF lookup on a pair's torch models, each with its lossy control
* ``generate_audit``   their audit: the exact law of the first one and two tokens; ``generate_checks`` the G-tests
* ``sampling_options`` the options engines ship and each engine's order; ``penalties``, ``engine_law`` the exact
                       law under them, position by position
* ``engine_protocol``  one protocol for any engine: ``jsonl_engine`` (a subprocess), ``endpoint_engine`` (a
                       server), ``gguf_engines`` (llama.cpp's loop and node-llama-cpp, ``make engines``)
* ``engine_audit``     the audit of a protocol engine, with ``option_rows`` (controls and prompts), ``pathwise``,
                       ``audit_target`` (``--target``), ``engine_runs`` and ``engine_table`` (the options table)

References: Leviathan et al., ICML 2023 (Algorithm 1); Chen et al., 2023 (Algorithm 2).
"""

from specmath.audit.adapters import Adapter, DrawProtocol, adapter_named, adapters
from specmath.audit.cases import BATTERY, AuditCase, case_named
from specmath.audit.runner import DEFAULT_ROUNDS, AuditReport, CaseResult, run_audit, run_case

__all__ = [
    "Adapter", "DrawProtocol", "adapter_named", "adapters", "BATTERY", "AuditCase", "case_named",
    "DEFAULT_ROUNDS", "AuditReport", "CaseResult", "run_audit", "run_case",
]
