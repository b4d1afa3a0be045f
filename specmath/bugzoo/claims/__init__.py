"""Every claim specmath makes about another engine, one record each, one JSON file per engine.

``CLAIMS`` maps a key to its ``Claim`` (``specmath.bugzoo.claims.record``): the engine, the version or
commit checked, the date, the status (open, latent, unconfirmed, fixed, lossy by design, sound), the
evidence and where, a reproducer, and for an open finding nobody has filed, a ready-to-file report.
The bug zoo's entries carry theirs (``Bug.claim``); pages name one as "claim KEY", and
tests/docs/test_engine_claims.py holds every page to the record it names.

To add a claim: add a record to its engine's file here (``ENGINE_FILES``; a new engine gets a new file,
listed there), then run ``python scripts/claim_pages.py``, which writes docs/explanation/engine-findings.md
from the records; tests/bugzoo/test_claims.py checks that the record has what its status needs.
"""

from __future__ import annotations

from pathlib import Path

from specmath.bugzoo.claims.record import EVIDENCE, GROUPS, STATUSES, Claim, EngineRecords, Report

__all__ = ["CLAIMS", "ENGINES", "ENGINE_FILES", "Claim", "Report", "EngineRecords", "STATUSES", "EVIDENCE", "GROUPS",
           "claims_by_key"]

#: the engines' files (``NAME.json`` beside this module), in the order the findings page lists them
ENGINE_FILES = ("node_llama_cpp", "transformers", "medusa", "sglang", "tensorrt_llm", "vllm", "eagle", "vllm_ascend",
                "lattice", "mlx_node", "mlxcel")


def claims_by_key(*groups: tuple[Claim, ...]) -> dict[str, Claim]:
    """Join the engines' claims into one key -> Claim dict, in order; two records may not share a key."""
    out: dict[str, Claim] = {}
    for group in groups:
        for claim in group:
            if claim.key in out:
                raise ValueError(f"two claims are keyed {claim.key!r}")
            out[claim.key] = claim
    return out


#: each engine's records, read from its file
ENGINES: tuple[EngineRecords, ...] = tuple(EngineRecords.from_json(Path(__file__).with_name(f"{name}.json"))
                                           for name in ENGINE_FILES)
#: every claim, by key
CLAIMS: dict[str, Claim] = claims_by_key(*(engine.claims for engine in ENGINES))
