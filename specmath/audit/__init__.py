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

Every public name is imported on first use (``specmath.audit.run_audit``), so the round and tree
audits of numpy code stay free of the engine machinery, and naming an adapter loads no audit.

References: Leviathan et al., ICML 2023 (Algorithm 1); Chen et al., 2023 (Algorithm 2).

Layer 5 (audits and views) of the layers in docs/explanation/architecture.md: imports the layers
before it; torch only in the engine modules that run it (``engines/torch_engines``, ``target``, ``pairs``)
and inside the torch adapters' functions.
"""

from specmath.registry import Registry

#: the public names, each served from its module on first use (``specmath.registry``), so importing
#: ``specmath.audit`` or one of its modules loads neither scipy nor torch; a name added to the facade
#: needs only its line here
_PUBLIC = Registry("name of specmath.audit", {
    "Adapter": "specmath.audit.rounds.adapters:Adapter",
    "DrawProtocol": "specmath.audit.rounds.adapters:DrawProtocol",
    "adapter_named": "specmath.audit.rounds.adapters:adapter_named",
    "adapters": "specmath.audit.rounds.adapters:adapters",
    "BATTERY": "specmath.audit.rounds.cases:BATTERY",
    "AuditCase": "specmath.audit.rounds.cases:AuditCase",
    "case_named": "specmath.audit.rounds.cases:case_named",
    "AuditReport": "specmath.audit.rounds.runner:AuditReport",
    "CaseResult": "specmath.audit.rounds.runner:CaseResult",
    "run_audit": "specmath.audit.rounds.runner:run_audit",
    "run_case": "specmath.audit.rounds.runner:run_case",
    "TreeAdapter": "specmath.audit.trees.adapters:TreeAdapter",
    "tree_adapter_named": "specmath.audit.trees.adapters:tree_adapter_named",
    "run_tree_audit": "specmath.audit.trees.runner:run_tree_audit",
    "EngineClient": "specmath.audit.engines.protocol:EngineClient",
    "run_engine_audit": "specmath.audit.engines.runner:run_engine_audit",
    "AuditPlan": "specmath.audit.engines.runner:AuditPlan",
    "NegativeControl": "specmath.audit.engines.runner:NegativeControl",
})

__all__ = list(_PUBLIC)


def __getattr__(name: str):
    if name in _PUBLIC:
        return _PUBLIC[name]
    raise AttributeError(f"module 'specmath.audit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC))
