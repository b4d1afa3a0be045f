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

from specmath.bugzoo.claims.eagle import EAGLE_CLAIMS
from specmath.bugzoo.claims.lattice import LATTICE_CLAIMS
from specmath.bugzoo.claims.medusa import MEDUSA_CLAIMS
from specmath.bugzoo.claims.mlx_node import MLX_NODE_CLAIMS
from specmath.bugzoo.claims.mlxcel import MLXCEL_CLAIMS
from specmath.bugzoo.claims.node_llama_cpp import NODE_LLAMA_CPP_CLAIMS
from specmath.bugzoo.claims.record import EVIDENCE, GROUPS, STATUSES, Claim, Report
from specmath.bugzoo.claims.sglang import SGLANG_CLAIMS
from specmath.bugzoo.claims.tensorrt_llm import TENSORRT_LLM_CLAIMS
from specmath.bugzoo.claims.transformers import TRANSFORMERS_CLAIMS
from specmath.bugzoo.claims.vllm import VLLM_CLAIMS
from specmath.bugzoo.claims.vllm_ascend import VLLM_ASCEND_CLAIMS

__all__ = ["CLAIMS", "ENGINE_GROUPS", "Claim", "Report", "STATUSES", "EVIDENCE", "GROUPS", "claims_by_key"]


def claims_by_key(*groups: tuple[Claim, ...]) -> dict[str, Claim]:
    """Join the engines' tuples into one key -> Claim dict, in order; two records may not share a key."""
    out: dict[str, Claim] = {}
    for group in groups:
        for claim in group:
            if claim.key in out:
                raise ValueError(f"two claims are keyed {claim.key!r}")
            out[claim.key] = claim
    return out


#: each engine module's records, in the order the findings page lists them
ENGINE_GROUPS: tuple[tuple[Claim, ...], ...] = (
    NODE_LLAMA_CPP_CLAIMS, TRANSFORMERS_CLAIMS, MEDUSA_CLAIMS, SGLANG_CLAIMS, TENSORRT_LLM_CLAIMS, VLLM_CLAIMS,
    EAGLE_CLAIMS, VLLM_ASCEND_CLAIMS, LATTICE_CLAIMS, MLX_NODE_CLAIMS, MLXCEL_CLAIMS,
)
#: every claim, by key
CLAIMS: dict[str, Claim] = claims_by_key(*ENGINE_GROUPS)
