"""Tree adapters: a token-tree verifier, wrapped as one batched function the tree audit can call.

Notation: p = target law, q = draft law, gamma = draft tokens per round (a tree's nodes),
alpha = sum_x min(p(x), q(x)).

The interface is the layout of ``specmath.speculative.tree_reference`` (the one engines hand their
tree verification kernels, one tree shape for the batch)::

    sample_tree(parents [nodes] int64, target_probs [N, nodes + 1, V] float64,
                draft_probs [N, nodes, V] float64, draft_tokens [N, nodes] int64, generator)
        -> [N, depth + 1] integer ids: the accepted path, then one token, then -1

``parents[i]`` is node i's parent (-1: a child of the root), parents before children, siblings in
index order; row 0 of ``target_probs`` is p(. | context), row i + 1 is p after node i's path;
``draft_probs[i]`` is the q node i was drawn from (its parent's). ``children`` says how the auditor
draws each node's children: the premise of the sampler's verifier (SpecInfer's rule needs ``iid``,
recursive rejection without replacement needs ``without-replacement``, SGLang's target-only rule
takes distinct children: ``without-replacement`` or ``top-k``).

The built-in tree adapters (``TREE_ADAPTERS``): ``tree-NAME`` for each record NAME of
``specmath.speculative.tree_registry`` (``tree-specinfer``, ``tree-without-replacement``,
``tree-target-only``), the float reference (``tree_reference.sample_tree_rounds``) with that verifier
under the children it is proved for, each a ``TreeAdapter`` of ``specmath.audit.trees.builtin_adapters``,
imported on first use. Besides them:

* ``tree-bug:NAME`` for the entries of ``specmath.bugzoo.TREE_BUGS`` whose float sampler takes these
  trees, under the children of their instance. Medusa's fast mode is not one of them: its first token
  is argmax p and the tree hangs below that token, which the battery's trees do not do (its loss,
  deterministic output, is exact in the zoo);
* ``module:function`` or ``path/to/file.py:function``: any function with the interface.

``tree_adapter_names()`` names them all without loading any: what ``specmath audit`` offers and checks.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from specmath.audit.trees.tree_adapter import TreeAdapter
from specmath.speculative.tree import CHILDREN
from specmath.speculative.tree_registry import TREE_VERIFIER_RECORDS
from specmath.validation import check_choice

__all__ = ["TreeAdapter", "TREE_ADAPTERS", "tree_adapter_names", "tree_adapters", "tree_adapter_named",
           "is_user_tree_function", "audited_tree_bugs"]


#: the built-in tree adapters' names, one per tree verifier record: ``specmath audit`` offers them and
#: ``--list`` shows them (``tree_adapter_names``); each is built in ``builtin_adapters`` (imported on first
#: use), and ``tests/audit/trees`` checks that each loads as a TreeAdapter of its name.
TREE_ADAPTERS: tuple[str, ...] = tuple(f"tree-{name}" for name in TREE_VERIFIER_RECORDS)
#: the prefix of the tree zoo's adapters: ``tree-bug:NAME`` for the audited entries of ``specmath.bugzoo.TREE_BUGS``
TREE_BUG_PREFIX = "tree-bug:"


def audited_tree_bugs() -> dict:
    """The tree zoo's entries the tree audit runs, by name: all but those whose tree hangs below argmax p."""
    from specmath.bugzoo import TREE_BUGS

    return {bug.name: bug for bug in TREE_BUGS if not bug.greedy_root}


def tree_adapter_names() -> tuple[str, ...]:
    """Every tree adapter's name, the registry's then ``tree-bug:NAME``; loads none of them."""
    return (*TREE_ADAPTERS, *(TREE_BUG_PREFIX + name for name in audited_tree_bugs()))


def _bug_sampler(bug, parents, target_probs, draft_probs, draft_tokens, generator):
    from specmath.speculative.tree_reference import TreeArrays

    vocabulary = tuple(range(target_probs.shape[-1]))
    return bug.sample_rounds(TreeArrays(parents, target_probs, draft_probs, draft_tokens, vocabulary), generator)


def _loaded(name: str) -> TreeAdapter:
    """The tree adapter ``name`` (a registry entry, or ``tree-bug:NAME`` under its instance's children)."""
    if name in TREE_ADAPTERS:
        from specmath.audit.trees.builtin_adapters import REFERENCE_TREE_ADAPTERS

        return REFERENCE_TREE_ADAPTERS[name]
    bug = audited_tree_bugs()[name.removeprefix(TREE_BUG_PREFIX)]
    return TreeAdapter(name, bug.explanation, partial(_bug_sampler, bug), "numpy", bug.instance().shape.children)


def tree_adapters() -> dict[str, TreeAdapter]:
    """Every tree adapter by name, loaded: the references, then the tree zoo's entries."""
    return {name: _loaded(name) for name in tree_adapter_names()}


def is_user_tree_function(name: str) -> bool:
    """Whether ``name`` names a user's ``module:function`` rather than a tree adapter."""
    return isinstance(name, str) and ":" in name and not name.startswith(TREE_BUG_PREFIX)


def tree_adapter_named(name: str, generator_kind: str = "numpy", *, children: str | None = None) -> TreeAdapter:
    """The tree adapter ``name`` (audited under ``children`` when given), or a user's ``module:function``
    drawing from ``generator_kind`` under ``children`` (required then); ValueError naming the problem."""
    if name not in TREE_ADAPTERS and is_user_tree_function(name):
        from specmath.function_reference import resolve_function
        from specmath.validation import InvalidArgument

        if children is None:
            raise InvalidArgument(f"say how the children of the tree sampler {name!r} are drawn: children one of {', '.join(CHILDREN)}")
        from specmath.audit.rounds.usage_hints import TREE_INTERFACE, check_call_shape

        function = resolve_function(name, "tree sampler")
        check_call_shape(function, TREE_INTERFACE, f"the tree sampler {name!r}", name)
        doc = (function.__doc__ or "").strip().splitlines()
        return TreeAdapter(name, doc[0] if doc else f"user tree sampler {name}", function, generator_kind, children)
    adapter = _loaded(check_choice(name, "tree adapter", tree_adapter_names(), also="or module:function"))
    return adapter if children is None else replace(adapter, children=children)
