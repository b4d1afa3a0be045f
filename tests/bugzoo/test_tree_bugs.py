"""The tree zoo: each lossy tree verifier has its exact TV, the lossless one has TV 0, the float samplers fit.

Power of the G-tests: N = 4000 rounds, level 1e-6; every round law at TV >= detectable_tv(law, N)
(asserted below 0.1) from the exact one is detected with probability >= 0.99.
"""

from fractions import Fraction

import numpy as np
import pytest

from specmath.bugzoo import BUGS, TREE_BUGS
from specmath.bugzoo.tree_bugs import MEDUSA, greedy_root_arrays, sibling_rule_without_residual
from specmath.bugzoo.typical_acceptance import typical_thresholds
from specmath.exact import exact
from specmath.laws import Law, tv_distance
from specmath.speculative.tree import tree_round_law
from specmath.speculative.tree_examples import TREE_DRAFT, TREE_TARGET
from specmath.stats import detectable_tv, g_test

N = 4000

#: exact TV of each entry from the target's autoregressive law, on its instance
EXPECTED_TV = {
    "top-k-children-specinfer-rule": Fraction(27, 64),
    "top-k-siblings-no-residual": Fraction(7, 16),
    "medusa-typical-acceptance": Fraction(29, 32),
    "typical-acceptance-sampled-correction": Fraction(3, 10),
}
BY_NAME = {bug.name: bug for bug in TREE_BUGS}


def test_the_tree_zoo_is_explained_cited_and_apart_from_the_chain_zoo():
    assert set(BY_NAME) == set(EXPECTED_TV) and len(BY_NAME) == len(TREE_BUGS)
    assert not set(BY_NAME) & set(BUGS)
    for bug in TREE_BUGS:
        assert bug.explanation and "\n" not in bug.explanation and bug.source


@pytest.mark.parametrize("name", sorted(EXPECTED_TV))
def test_each_tree_bug_has_its_exact_tv_and_the_correct_verifier_is_exact_on_the_same_trees(name):
    bug = BY_NAME[name]
    assert bug.tv() == EXPECTED_TV[name] > 0
    assert bug.correct_law() == bug.target_law()


def test_specinfer_on_top_k_children_over_samples_the_draft_s_first_choice():
    # after c: p = {a: 3/8, b: 1/2, c: 1/8}, q = {a: 1/2, b: 1/8, c: 3/8}, children (a, c) always:
    # a kept w.p. p(a)/q(a) = 3/4; else the residual norm(max(0, p - q)) = {b: 1} rejects c and emits b
    law = BY_NAME["top-k-children-specinfer-rule"].lossy_round_law()
    first = law.map(lambda emitted: emitted[0])
    assert first == Law({"a": Fraction(3, 4), "b": Fraction(1, 4)}) != TREE_TARGET(("c",))


def test_tensorrt_llm_sibling_rule_judges_every_sibling_against_the_same_p_and_q():
    # a: min(1, (3/8)/(1/2)) = 3/4; c: min(1, (1/8)/(3/8)) = 1/3 of the rest; else b from norm(max(0, p - q)) = {b: 1}
    p, q = TREE_TARGET(("c",)), TREE_DRAFT(("c",))
    law = exact(sibling_rule_without_residual, p, q, ("a", "c")).law
    assert law[0] == Fraction(3, 4) and law[1] == Fraction(1, 12)
    assert sum(w for verdict, w in law.items() if not isinstance(verdict, int)) == Fraction(1, 6)


@pytest.mark.parametrize("name", [n for n in sorted(EXPECTED_TV) if n != "medusa-typical-acceptance"])
def test_each_float_tree_bug_fits_its_exact_round_law_and_is_told_apart_from_the_correct_round(name):
    bug = BY_NAME[name]
    inst = bug.instance()
    lossy = bug.lossy_round_law()
    counts = bug.float_counts(N, np.random.default_rng(sum(map(ord, name))))
    assert detectable_tv(lossy, N) < 0.1
    assert g_test(counts, lossy).p_value > 1e-6
    correct = tree_round_law(inst.target, inst.draft, inst.prefix, inst.shape, bug.correct_verifier)
    if tv_distance(lossy, correct) >= detectable_tv(correct, N):
        assert g_test(counts, correct).p_value < 1e-6


def test_medusa_emits_one_sequence_in_floats_as_in_the_exact_law():
    bug = BY_NAME["medusa-typical-acceptance"]
    law = bug.lossy_round_law()
    assert len(law.support) == 1  # greedy first token, deterministic top-k tree, deterministic acceptance
    (emitted,) = law.support
    arrays = greedy_root_arrays(bug.instance(), 1, np.random.default_rng(0))
    # float and exact decide p(x) > threshold alike when no p(x) is within 1e-9 of its float threshold
    # (float64 exp and log err by about 1e-16 relative); the margin here is far larger
    judged = np.arange(1, len(arrays.parents))
    rows = arrays.parents[judged] + 1
    prob = arrays.target_probs[0, rows, arrays.draft_tokens[0, judged]]
    assert np.min(np.abs(prob - typical_thresholds(arrays.target_probs[0, rows], MEDUSA))) > 1e-3
    assert bug.float_counts(200, np.random.default_rng(0)) == {emitted: 200}
