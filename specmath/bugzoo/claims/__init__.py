"""Every claim specmath makes about another engine, one record each, one module per engine.

``CLAIMS`` maps a key to its ``Claim`` (``specmath.bugzoo.claims.record``): the engine, the version or
commit checked, the date, the status (open, latent, unconfirmed, fixed, lossy by design, sound), the
evidence and where, a reproducer, and for an open finding nobody has filed, a ready-to-file report.
The bug zoo's entries carry theirs (``Bug.claim``); pages name one as "claim KEY", and
tests/docs/test_engine_claims.py holds every page to the record it names.

To add a claim: add a record to the engine's module (or a new module, joined below), then run
``python scripts/claim_pages.py``, which writes docs/explanation/engine-findings.md from the records.
"""

from __future__ import annotations

from types import ModuleType

from specmath.bugzoo.claims import (
    eagle,
    lattice,
    medusa,
    mlx_node,
    mlxcel,
    node_llama_cpp,
    sglang,
    tensorrt_llm,
    transformers,
    vllm,
    vllm_ascend,
)
from specmath.bugzoo.claims.record import EVIDENCE, GROUPS, STATUSES, Claim, Report

__all__ = ["CLAIMS", "ENGINE_MODULES", "ENGINE_GROUPS", "Claim", "Report", "STATUSES", "EVIDENCE", "GROUPS",
           "claims_by_key"]


def claims_by_key(*groups: tuple[Claim, ...]) -> dict[str, Claim]:
    """Join the engines' tuples into one key -> Claim dict, in order; two records may not share a key."""
    out: dict[str, Claim] = {}
    for group in groups:
        for claim in group:
            if claim.key in out:
                raise ValueError(f"two claims are keyed {claim.key!r}")
            out[claim.key] = claim
    return out


#: one module per engine, in the order the findings page lists them; each has RECORDS and a docstring
ENGINE_MODULES: tuple[ModuleType, ...] = (node_llama_cpp, transformers, medusa, sglang, tensorrt_llm, vllm, eagle,
                                          vllm_ascend, lattice, mlx_node, mlxcel)
#: each engine module's records
ENGINE_GROUPS: tuple[tuple[Claim, ...], ...] = tuple(module.RECORDS for module in ENGINE_MODULES)
#: every claim, by key
CLAIMS: dict[str, Claim] = claims_by_key(*ENGINE_GROUPS)
