"""The tree verifiers by name: one record each, from which every table of tree verifiers derives.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

A ``TreeVerifierRecord`` holds all that names a tree verifier: its exact program
(``specmath.speculative.tree_verifiers``), the ways of drawing children under which it is lossless,
the children its proof and its built-in audit use, its float level rule
(``specmath.speculative.tree_level_rules``) and a one-line description. The tables the rest of
specmath reads are views of ``TREE_VERIFIER_RECORDS``:

* ``TREE_VERIFIERS`` (name -> exact program), read by ``tree_round`` and the tests;
* ``LOSSLESS_CHILDREN`` (name -> the children it is lossless for);
* ``LEVEL_RULES`` (name -> float level rule), read by ``tree_reference.sample_tree_rounds``;
* the proofs ``specmath verify tree-NAME`` (``specmath.proofs.tree_proofs``);
* the built-in tree adapters ``tree-NAME`` that ``specmath audit`` offers
  (``specmath.audit.trees.builtin_adapters``).

Adding a lossless tree verifier is one record here (its program and its level rule written first):
``tests/speculative/test_tree_rounds.py`` proves each record's program lossless at a node for every
children it claims, ``tests/speculative/test_tree_reference.py`` tests its level rule against the
exact law, and ``tests/speculative/test_tree_registry.py`` checks the record and the tables it feeds.
The lossy tree verifiers are the bug zoo's (``specmath.bugzoo.tree_bugs``), each with its claim.
"""

from __future__ import annotations

from dataclasses import dataclass

from specmath.speculative.tree_level_rules import LevelRule, specinfer_rule, target_only_rule, without_replacement_rule
from specmath.speculative.tree_verifiers import (
    TreeVerifier,
    specinfer_verifier,
    target_only_verifier,
    without_replacement_verifier,
)
from specmath.validation import InvalidArgument, check_choice

__all__ = ["TreeVerifierRecord", "TREE_VERIFIER_RECORDS", "tree_verifier_record", "TREE_VERIFIERS",
           "LOSSLESS_CHILDREN", "LEVEL_RULES"]


@dataclass(frozen=True)
class TreeVerifierRecord:
    """One tree verifier: its name, exact program, lossless children, float rule and description."""

    name: str
    verifier: TreeVerifier  # the exact program (p, q, children) -> accepted index or Final(token)
    lossless_children: tuple[str, ...]  # the ways of drawing children (CHILDREN) under which it is lossless
    proof_children: str  # the children of its proof (``specmath verify tree-NAME``) and of its built-in audit
    level_rule: LevelRule  # the float counterpart, as ``tree_reference.sample_tree_rounds`` runs it
    description: str  # one line: what the rule does (the proof's title starts with it)

    def __post_init__(self) -> None:
        # each children name is one of ``specmath.speculative.tree.CHILDREN`` (tested there: tree.py reads
        # this module, so it is not imported here)
        if self.proof_children not in self.lossless_children:
            raise InvalidArgument(f"tree verifier {self.name!r}: its proof's children {self.proof_children!r} must be "
                                  f"among those it is lossless for, {self.lossless_children!r}")

    @property
    def lossless(self) -> bool:
        """Whether the verifier is lossless under some way of drawing children (every record here is)."""
        return bool(self.lossless_children)


#: every lossless tree verifier, in the order the tables list them
TREE_VERIFIER_RECORDS: dict[str, TreeVerifierRecord] = {record.name: record for record in (
    TreeVerifierRecord("specinfer", specinfer_verifier, ("iid",), "iid", specinfer_rule,
                       "SpecInfer's recursive rejection over i.i.d. children"),
    TreeVerifierRecord("without-replacement", without_replacement_verifier, ("without-replacement",),
                       "without-replacement", without_replacement_rule,
                       "recursive rejection without replacement (Jeon et al. 2024), q renormalised after each child"),
    TreeVerifierRecord("target-only", target_only_verifier, ("without-replacement", "top-k"), "top-k", target_only_rule,
                       "SGLang's target-only rule (first child j with u <= p(x_1) + ... + p(x_j)) on top-k children"),
)}


def tree_verifier_record(name: object) -> TreeVerifierRecord:
    """The record of tree verifier ``name``; ``UnknownName`` naming the choices when there is none."""
    return TREE_VERIFIER_RECORDS[check_choice(name, "tree verifier", TREE_VERIFIER_RECORDS)]


#: name -> verifier program, as ``tree_round`` and the float reference take them
TREE_VERIFIERS: dict[str, TreeVerifier] = {name: r.verifier for name, r in TREE_VERIFIER_RECORDS.items()}
#: verifier name -> the ways of drawing children (``TreeShape.children``) under which it is lossless
LOSSLESS_CHILDREN: dict[str, tuple[str, ...]] = {name: r.lossless_children for name, r in TREE_VERIFIER_RECORDS.items()}
#: name -> level rule, the float counterpart of each verifier
LEVEL_RULES: dict[str, LevelRule] = {name: r.level_rule for name, r in TREE_VERIFIER_RECORDS.items()}
