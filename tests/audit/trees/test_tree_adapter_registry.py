"""The tree audit's adapters: a lazy registry, each entry a TreeAdapter of its name, loaded only when asked for."""

from __future__ import annotations

import pytest

from specmath.audit.trees.adapters import (
    TREE_ADAPTERS,
    TreeAdapter,
    tree_adapter_named,
    tree_adapter_names,
    tree_adapters,
)
from specmath.bugzoo import TREE_BUGS
from specmath.choices import TREE_CHILDREN
from specmath.validation import UnknownName


@pytest.mark.parametrize("name", TREE_ADAPTERS)
def test_each_built_in_tree_adapter_loads_as_a_tree_adapter_of_its_name(name):
    adapter = tree_adapter_named(name)
    assert isinstance(adapter, TreeAdapter) and adapter.name == name and adapter.children in TREE_CHILDREN
    assert tree_adapter_named(name) is adapter
    assert tree_adapter_named(name, children="top-k").children == "top-k"


def test_the_tree_zoo_adapters_are_the_entries_whose_tree_hangs_below_the_context():
    listed = tree_adapters()
    audited = [bug for bug in TREE_BUGS if not bug.greedy_root]
    assert tuple(listed) == tree_adapter_names() == (*TREE_ADAPTERS, *(f"tree-bug:{bug.name}" for bug in audited))
    assert all(listed[f"tree-bug:{bug.name}"].children == bug.instance().shape.children for bug in audited)


def test_a_near_miss_of_a_tree_adapter_name_is_one_line_with_did_you_mean():
    with pytest.raises(UnknownName, match=r"^unknown tree adapter 'tree-specinfr' \(did you mean 'tree-specinfer'\?\)"):
        tree_adapter_named("tree-specinfr")
