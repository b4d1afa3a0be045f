"""Acceptance suite for trees: samplers written the ways engines write them (tests/testing/tree_samplers.py).

Each sampler is audited under the children its engine drafts. What each lossy one does to each case
is computed exactly first, with its node rule as a tree verifier program: the completed TV, TV(C, A)
of its round law completed with p against the autoregressive law (``specmath.audit.trees.cases``).
The audit must then pass every case of completed TV 0 (probability >= 1 - 1e-6 for the whole audit)
and fail every case whose completed TV is at least the joint test's detectable TV at its N
(probability >= 0.99 each; 0.09-0.13 at N = 2000 on the fast cases, printed per case in the report).
Between the two either verdict is allowed. Each lossy sampler is asserted to have at least two such
detectable cases, so no assertion here is vacuous. The u = 0 bug has probability 2^-53 per draw:
only the zero probe sees it, deterministically.

The fast tests run N = 2000 on the cases of vocabulary <= 5 (SGLang's double count, completed TV
0.04-0.08 there, at N = 20000: detectable TV 0.03-0.04); the ``slow`` ones the whole battery (the
64-token case included) at the default N = 20000.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from tree_samplers import (
    accept_on_u_equal_zero,
    residual_never_updated,
    sglang_target_only_tree,
    specinfer_tree,
    typical_first_child,
    without_replacement_tree,
)

from specmath.audit.trees.adapters import TreeAdapter
from specmath.audit.trees.cases import TREE_BATTERY, completed_tv, tree_cases_named
from specmath.audit.trees.runner import run_tree_audit
from specmath.bugzoo.tree_bugs import sibling_rule_without_residual
from specmath.bugzoo.typical_acceptance import TypicalAcceptance, exceeds_typical_threshold
from specmath.program import draw
from specmath.settings import AuditSettings
from specmath.speculative.tree import TreeShape, tree_round_law
from specmath.speculative.tree_verifiers import Final
from specmath.testing import assert_tree_sampler_lossless

FAST = [c.name for c in TREE_BATTERY if c.vocab_size <= 5]
#: the constants of ``typical_first_child``, exact (Medusa's defaults; the sampled variant: y ~ p when none is kept)
TYPICAL = TypicalAcceptance(epsilon=Fraction(9, 100), delta=Fraction(3, 10), entropy_offset=Fraction(1, 100000),
                            greedy_first=False)


def typical_first_child_rule(p, q, children):
    """The exact node rule of ``typical_first_child``: the first child above the threshold, else y ~ p."""
    for j, x in enumerate(children):
        if exceeds_typical_threshold(p, x, TYPICAL):
            return j
    y = yield draw(p, label="target sample")
    return Final(y)


#: name -> (sampler, the children its engine drafts)
CORRECT = {
    "specinfer, i.i.d. children": (specinfer_tree, "iid"),
    "without replacement": (without_replacement_tree, "without-replacement"),
    "sglang target-only, top-k children": (sglang_target_only_tree, "top-k"),
    "sglang target-only, children without replacement": (sglang_target_only_tree, "without-replacement"),
}
#: name -> (sampler, children, the exact node rule it runs)
LOSSY = {
    "specinfer rule on top-k children": (specinfer_tree, "top-k", "specinfer"),
    "tensorrt-llm residual never updated": (residual_never_updated, "top-k", sibling_rule_without_residual),
    "sglang running sum on i.i.d. children": (sglang_target_only_tree, "iid", "target-only"),
    "typical acceptance, first child above the threshold": (typical_first_child, "top-k", typical_first_child_rule),
}


def exact_tvs(children: str, rule, names) -> dict[str, Fraction]:
    cases = {c.name: c for c in TREE_BATTERY}
    return {name: completed_tv(cases[name], tree_round_law(cases[name].target, cases[name].draft, (),
                                                          TreeShape(cases[name].branching, children), rule))
            for name in names}


def check_lossy(name: str, n: int, names) -> None:
    """The audit fails every case where the exact completed TV reaches its detectable TV, and passes those of TV 0."""
    sampler, children, rule = LOSSY[name]
    tvs = exact_tvs(children, rule, names)
    adapter = TreeAdapter(sampler.__name__, sampler.__doc__, sampler, "numpy", children)
    report = run_tree_audit(adapter, tree_cases_named(list(names)), AuditSettings(n=n))
    assert not any(c.errors for c in report.cases), [c.errors for c in report.cases]
    must_fail = [c.case for c in report.cases if tvs[c.case] >= c.tests[0].detectable_tv]
    assert len(must_fail) >= 2, (name, {case: float(tv) for case, tv in tvs.items()})
    verdicts = {c.case: c.passed for c in report.cases}
    assert not any(verdicts[case] for case in must_fail), (name, verdicts, must_fail)
    assert all(verdicts[case] for case, tv in tvs.items() if tv == 0), (name, verdicts)


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_every_correct_engine_style_tree_sampler_passes(name):
    sampler, children = CORRECT[name]
    report = assert_tree_sampler_lossless(sampler, children=children, n=2000, cases=FAST)
    assert report.passed and all(c.n == 2000 for c in report.cases)
    assert max(c.tests[0].detectable_tv for c in report.cases) < 0.14


@pytest.mark.parametrize("name", sorted(LOSSY))
def test_every_lossy_engine_style_tree_sampler_fails_where_its_exact_loss_is_detectable(name):
    # SGLang's double count is small (completed TV 0.04-0.08 on the fast cases): it needs N = 20000
    check_lossy(name, 20_000 if "i.i.d." in name else 2000, FAST)


def test_accepting_a_child_at_u_zero_is_caught_by_the_zero_probe():
    with pytest.raises(AssertionError, match=r"zero probe k=\d+ .*which no p-sample starts with"):
        assert_tree_sampler_lossless(accept_on_u_equal_zero, children="iid", n=300, cases="tree-zeros-in-target-2x2")


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CORRECT) + sorted(LOSSY))
def test_at_the_default_n_on_the_whole_battery(name):
    if name in CORRECT:
        sampler, children = CORRECT[name]
        assert assert_tree_sampler_lossless(sampler, children=children).passed
    else:
        check_lossy(name, 20_000, [c.name for c in TREE_BATTERY])
