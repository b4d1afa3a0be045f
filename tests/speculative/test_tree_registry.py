"""The tree verifier records: valid children, and every table of tree verifiers one view of them."""

from __future__ import annotations

import pytest

from specmath.audit.trees.adapters import TREE_ADAPTERS, tree_adapter_named
from specmath.proofs.tree_proofs import PROOFS
from specmath.speculative.tree import CHILDREN, TreeShape, tree_round_law
from specmath.speculative.tree_examples import TREE_DRAFT, TREE_TARGET
from specmath.speculative.tree_registry import (
    LEVEL_RULES,
    LOSSLESS_CHILDREN,
    TREE_VERIFIER_RECORDS,
    TREE_VERIFIERS,
    TreeVerifierRecord,
    tree_verifier_record,
)
from specmath.speculative.tree_verifiers import specinfer_verifier
from specmath.validation import InvalidArgument, UnknownName

RECORDS = list(TREE_VERIFIER_RECORDS.values())


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r.name)
def test_each_record_names_ways_of_drawing_children_the_tree_round_knows(record):
    assert record.lossless and set(record.lossless_children) <= set(CHILDREN)
    assert record.proof_children in record.lossless_children
    assert record.description and "\n" not in record.description


def test_the_tables_of_tree_verifiers_are_views_of_the_records():
    names = list(TREE_VERIFIER_RECORDS)
    assert list(TREE_VERIFIERS) == list(LOSSLESS_CHILDREN) == list(LEVEL_RULES) == names
    assert all(TREE_VERIFIERS[r.name] is r.verifier and LEVEL_RULES[r.name] is r.level_rule
               and LOSSLESS_CHILDREN[r.name] == r.lossless_children for r in RECORDS)
    assert [name for name in PROOFS if name.startswith("tree-")] == [f"tree-{name}" for name in names]
    assert TREE_ADAPTERS == tuple(f"tree-{name}" for name in names)


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r.name)
def test_each_record_gives_its_proof_and_its_built_in_audit_the_same_children(record):
    verification = PROOFS[f"tree-{record.name}"]()
    assert verification.name == f"tree-{record.name}" and verification.description.startswith(record.description)
    assert f"2 x 2 {record.proof_children} trees" in verification.description
    assert tree_adapter_named(f"tree-{record.name}").children == record.proof_children


def test_a_verifier_named_by_its_record_is_the_records_program():
    shape = TreeShape((2, 1), "iid")
    assert tree_round_law(TREE_TARGET, TREE_DRAFT, (), shape, "specinfer") == \
        tree_round_law(TREE_TARGET, TREE_DRAFT, (), shape, specinfer_verifier)
    with pytest.raises(UnknownName, match=r"unknown tree verifier 'specinfr' \(did you mean 'specinfer'\?\)"):
        tree_verifier_record("specinfr")


def test_a_record_whose_proof_children_it_is_not_lossless_for_is_refused():
    record = TREE_VERIFIER_RECORDS["specinfer"]
    with pytest.raises(InvalidArgument, match="proof's children 'top-k' must be among those it is lossless for"):
        TreeVerifierRecord("x", record.verifier, ("iid",), "top-k", record.level_rule, "x")
