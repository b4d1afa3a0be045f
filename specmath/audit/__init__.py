"""specmath.audit: point specmath's exact laws at any speculative sampler or engine and get a verdict.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

Three audits, one sub-package each, over the shared parts beside them:

* ``rounds``  one speculative round (a chain of gamma drafts): ``run_audit(adapter)``, where an
              ``Adapter`` wraps ``sample_round(target_probs, draft_probs, draft_tokens, generator)``;
* ``trees``   a token-tree verifier (the tree as parent indices): ``run_tree_audit(tree_adapter)``;
* ``engines`` a whole engine's generate path, reached by one protocol (a Python function, a JSON-lines
              subprocess, an OpenAI-compatible endpoint, specmath's and Hugging Face's torch decoders):
              ``run_engine_audit(engine, ...)``.

Shared: ``power`` (G-tests, Bonferroni levels, detectable TV, sequential looks) and ``edge_draws``
(generators whose k-th draw is exactly 0 or the largest uniform below 1).

The engine audit is imported on first use (``specmath.audit.run_engine_audit``), so the round and tree
audits of numpy code stay free of the engine machinery.

References: Leviathan et al., ICML 2023 (Algorithm 1); Chen et al., 2023 (Algorithm 2).
"""

from specmath.audit.rounds.adapters import Adapter, DrawProtocol, adapter_named, adapters
from specmath.audit.rounds.cases import BATTERY, AuditCase, case_named
from specmath.audit.rounds.runner import AuditReport, CaseResult, run_audit, run_case
from specmath.audit.trees.adapters import TreeAdapter, tree_adapter_named
from specmath.audit.trees.runner import run_tree_audit

__all__ = [
    "Adapter", "DrawProtocol", "adapter_named", "adapters", "BATTERY", "AuditCase", "case_named",
    "AuditReport", "CaseResult", "run_audit", "run_case",
    "TreeAdapter", "tree_adapter_named", "run_tree_audit",
    "EngineClient", "run_engine_audit",
]

#: names served from the engine audit on first use (module:attribute)
_LAZY = {
    "EngineClient": "specmath.audit.engines.protocol",
    "run_engine_audit": "specmath.audit.engines.runner",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'specmath.audit' has no attribute {name!r}")
