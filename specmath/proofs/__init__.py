"""The proofs behind ``specmath verify``: every named sampler, its exact law and its target.

One module per track, each exporting ``PROOFS`` (name -> zero-argument function returning a
``Verification``); this package only joins them. Example laws live in the tracks' ``examples``
modules, never here, so a plot or a notebook can use them without loading the proofs.

Layer 3 (proofs and zoo) of the layers in docs/explanation/architecture.md: imports the core and the
samplers, never the bug zoo, torch or the audits.
"""

from __future__ import annotations

from collections.abc import Callable

from specmath.proofs import (
    adaptive_proofs,
    beyond_proofs,
    classic_proofs,
    entropy_proofs,
    speculative_proofs,
    tree_proofs,
)
from specmath.proofs.verification import Verification, VerificationError, fraction_text, verification_from

__all__ = ["VERIFIERS", "Verification", "VerificationError", "fraction_text", "verification_from", "verify",
           "run_verification"]

#: name -> zero-argument function returning a Verification, in the order ``verify --all`` prints
VERIFIERS: dict[str, Callable[[], Verification]] = {
    **speculative_proofs.PROOFS,
    **classic_proofs.PROOFS,
    **beyond_proofs.PROOFS,
    **adaptive_proofs.PROOFS,
    **entropy_proofs.PROOFS,
    **tree_proofs.PROOFS,
}


def verify(name: str) -> Verification:
    """Run the named verification: exact law of the sampler vs its target (``Verification.lossless``)."""
    if name not in VERIFIERS:
        raise KeyError(f"unknown verification {name!r}; known: {', '.join(VERIFIERS)}")
    return VERIFIERS[name]()


def run_verification(name: str) -> Verification | VerificationError:
    """``verify(name)``, or a ``VerificationError`` naming what it raised (an error has no verdict)."""
    if name not in VERIFIERS:
        raise KeyError(f"unknown verification {name!r}; known: {', '.join(VERIFIERS)}")
    try:
        return VERIFIERS[name]()
    except Exception as exc:  # the sampler, its program or its target raised: an error, never "not lossless"
        return VerificationError(name, exc)
