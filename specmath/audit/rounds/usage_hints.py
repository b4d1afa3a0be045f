"""Internal: Likely usage mistakes with a sampler under audit, each told in a line that names it and the fix.

Notation: p = target law, q = draft law, gamma = draft tokens per round, V = vocabulary size.

The auditor calls a sampler by position, with the arguments of its interface: a chain sampler as
``sample_round(target_probs, draft_probs, draft_tokens, generator)`` (``ROUND_INTERFACE``), a token-tree
sampler as ``sample_tree(parents, target_probs, draft_probs, draft_tokens, generator)``
(``TREE_INTERFACE``). What people hand it instead, and what they are then told:

* a function that cannot take those arguments, checked before anything runs (``check_call_shape``): a
  rule ``rule(p, q, x)`` (check it with ``specmath verify-rule`` / ``assert_rule_lossless``), a tree
  sampler given to the chain audit (``--tree`` / ``assert_tree_sampler_lossless``) or a chain sampler
  given to the tree audit;
* parameters named in another order than the interface's (``draft_probs, target_probs, ...``, an
  engine's own order): told whenever the audit errs or fails, since the auditor passes by position
  (``order_hint``); an ``IndexError`` about float indices (a probability array used where token ids
  were expected) gets the same question when the names say nothing;
* ``--batched`` (``batched=True``) on a one-round sampler, which then errs on every case with an error
  about shapes: drop it; and the reverse, a sampler that errs so when called one round at a time: add it.

Each is advice, printed beside the report (``report_hints``); none changes a verdict.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

from specmath.validation import InvalidArgument

__all__ = ["ROUND_INTERFACE", "TREE_INTERFACE", "check_call_shape", "order_hint", "report_hints"]

#: the arguments the round audit passes, in order
ROUND_INTERFACE = ("target_probs", "draft_probs", "draft_tokens", "generator")
#: the arguments the tree audit passes, in order
TREE_INTERFACE = ("parents", "target_probs", "draft_probs", "draft_tokens", "generator")

#: an error a float array used as indices gives (numpy's words)
_FLOAT_INDICES = ("arrays used as indices must be of integer", "only integers, slices", "must be integers or slices")
#: what a batched sampler handed one round raises (it indexes a dimension the round does not have)
_BATCH_SIGNS = ("too many indices",)
#: a batched answer of the wrong size (the sampler is batched), and a batched answer to one round
_BATCH_ANSWER = re.compile(r"invalid output: (the sampler returned shape \(\d+, \d+\)|row \d+ of the batch)")
_BATCH_OUTPUT = re.compile(r"invalid output: the sampler returned an array of shape \(\d+, \d+\)")


def _parameters(function: Callable) -> list[inspect.Parameter] | None:
    try:
        return list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):  # a builtin or C function without a signature: nothing to say
        return None


def _call(interface: tuple[str, ...]) -> str:
    return f"{'sample_tree' if interface == TREE_INTERFACE else 'sample_round'}({', '.join(interface)})"


def check_call_shape(function: Callable, interface: tuple[str, ...], name: str, reference: str | None = None) -> None:
    """``InvalidArgument`` naming the likely mistake when ``function`` cannot be called with the
    interface's positional arguments (a rule, a tree sampler for the chain audit, or the reverse);
    ``name`` says which function in the message, ``reference`` is its ``module:function`` if it has one."""
    parameters = _parameters(function)
    if parameters is None:
        return
    try:
        inspect.signature(function).bind(*interface)
    except TypeError:
        pass
    else:
        return
    positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    takes = f"{name} takes ({', '.join(p.name for p in parameters)}), but the audit calls it as {_call(interface)}"
    if len(positional) == 3:
        fix = ("it looks like a rule(p, q, x) -> (accept probability, resample law), which is checked exactly: "
               f"specmath verify-rule {reference or 'MODULE:FUNCTION'}, or assert_rule_lossless(rule)")
    elif len(positional) == len(TREE_INTERFACE) and interface == ROUND_INTERFACE:
        fix = ("it looks like a token-tree sampler (parents first): audit it with --tree CHILDREN, or "
               "assert_tree_sampler_lossless(sample_tree, children=...)")
    elif len(positional) == len(ROUND_INTERFACE) and interface == TREE_INTERFACE:
        fix = ("it looks like a chain sampler (no parents): audit it without --tree, or with "
               "assert_sampler_lossless(sample_round)")
    else:
        fix = f"give it the {len(interface)} positional parameters ({', '.join(interface)})"
    raise InvalidArgument(f"{takes}: {fix}")


def _role(parameter: str) -> str | None:
    """Which argument of the interfaces a parameter's name says it is, or None when it says nothing."""
    name = parameter.lower()
    if name in ("generator", "gen", "g", "rng", "random_state", "key") or "rng" in name or "generator" in name:
        return "generator"
    if "parent" in name:
        return "parents"
    if "token" in name or name.endswith("ids") or name in ("x", "xs"):
        return "draft_tokens"
    if "target" in name or name in ("p", "tp", "p_probs", "p_logits") or name.startswith("p_"):
        return "target_probs"
    if "draft" in name or name in ("q", "dp", "q_probs", "q_logits") or name.startswith("q_"):
        return "draft_probs"
    return None


def order_hint(function: Callable, interface: tuple[str, ...]) -> str | None:
    """A line when the function's parameter names put the interface's arguments in another order, else None."""
    parameters = _parameters(function)
    if parameters is None:
        return None
    names = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)][: len(interface)]
    roles = [_role(name) for name in names]
    known = [(position, role) for position, role in enumerate(roles) if role is not None]
    if len(known) < 2 or len({role for _, role in known}) < len(known):
        return None
    if all(interface.index(role) == position for position, role in known if role in interface):
        return None
    wrapped = ", ".join(interface[interface.index(role)] if role else name for name, role in zip(names, roles, strict=True))
    return (f"its parameters ({', '.join(names)}) name another order than the audit's {_call(interface)}, which passes "
            f"them by position: reorder them, or audit lambda {', '.join(interface)}: f({wrapped})")


def report_hints(function: Callable, interface: tuple[str, ...], report: Any, *, batched: bool = False) -> list[str]:
    """The likely mistakes an audit ``report`` of ``function`` points at (see the module docstring), as lines."""
    if report.passed:
        return []
    hints = []
    order = order_hint(function, interface)
    if order:
        hints.append(order)
    errors = [error for case in report.cases for error in case.errors]
    every_case_erred = bool(report.cases) and all(case.errors for case in report.cases)
    if not order and any(words in error for error in errors for words in _FLOAT_INDICES):
        hints.append(f"a float array was used as indices: the audit passes {', '.join(interface)} in this order, by "
                     "position; are the sampler's parameters in this order?")
    # a batch handed to a one-round sampler breaks it in many ways; only an answer of a batch's shape, or
    # a generator of the other kind, says the sampler is batched or went wrong for another reason
    answered_a_batch = any(_BATCH_ANSWER.search(error) for error in errors)
    other_generator = any("audit it with generator=" in error for error in errors)
    if interface == ROUND_INTERFACE and every_case_erred and batched and not answered_a_batch and not other_generator:
        hints.append("it erred on every case when called with every round of a case at once (target_probs "
                     "[N, gamma+1, V], draft_probs [N, gamma, V], draft_tokens [N, gamma]): if it takes one round per "
                     "call, drop --batched (batched=False)")
    elif interface == ROUND_INTERFACE and every_case_erred and not batched and (
            any(words in error for error in errors for words in _BATCH_SIGNS) or all(_BATCH_OUTPUT.search(e) for e in errors)):
        hints.append("it erred on every case when called one round at a time (target_probs [gamma+1, V], "
                     "draft_probs [gamma, V], draft_tokens [gamma]): if it takes every round at once "
                     "([N, gamma+1, V] ... -> [N, gamma+1], -1 padded), add --batched (batched=True)")
    return hints
