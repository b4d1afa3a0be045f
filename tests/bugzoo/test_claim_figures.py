"""The exact figures the claim records quote, computed from specmath's models of the engines' rules.

Each is an exact Fraction compared with ==; the records say which engine rule each models and that the
model, not the engine, was run.
"""

from dataclasses import replace
from fractions import Fraction

from specmath.bugzoo import TREE_BUGS
from specmath.bugzoo.claims import CLAIMS
from specmath.bugzoo.tree_bugs import MEDUSA, VLLM_TYPICAL, node_token_law, sibling_rule_without_residual
from specmath.bugzoo.typical_acceptance import typical_generation_law, typical_tv_grid
from specmath.laws import Law, tv_distance
from specmath.speculative.tree import TreeShape, tree_generation_law, tv_by_verifier_and_children
from specmath.speculative.tree_examples import TREE_DRAFT, TREE_TARGET
from specmath.speculative.tree_verifiers import target_only_verifier
from specmath.speculative.variants import autoregressive_law

BY_NAME = {bug.name: bug for bug in TREE_BUGS}


def test_sglang_running_sum_with_iid_children_costs_9_over_175_over_two_tokens():
    law = tree_generation_law(TREE_TARGET, TREE_DRAFT, (), TreeShape((2,), "iid"), 2, "target-only")
    assert tv_distance(law, autoregressive_law(TREE_TARGET, (), 2)) == Fraction(9, 175)
    assert "TV 9/175" in CLAIMS["sglang-target-only-running-sum"].claim


def test_sglang_ngram_padding_makes_token_0_min_1_k_p0():
    # no n-gram match: the root's 7 children are all pads (token 0); p(0) = 1/50
    p = Law({0: Fraction(1, 50), 1: Fraction(29, 50), 2: Fraction(2, 5)})
    for k in range(1, 8):
        assert node_token_law(target_only_verifier, p, p, (0,) * k)[0] == min(1, k * p[0])
    assert node_token_law(target_only_verifier, p, p, (0,) * 7)[0] == Fraction(7, 50)
    assert node_token_law(target_only_verifier, p, p, (0,))[0] == p[0]  # one pad: exact
    assert "7/50" in CLAIMS["sglang-ngram-zero-padding"].claim


def test_tensorrt_llm_sibling_rule_costs_7_16_and_9_20_but_nothing_with_one_sampled_child():
    assert BY_NAME["top-k-siblings-no-residual"].tv() == Fraction(7, 16)
    verifiers = {"siblings": sibling_rule_without_residual}
    three = tv_by_verifier_and_children(TREE_TARGET, TREE_DRAFT, (), (2, 2), 3, verifiers)
    assert three["siblings", "top-k"] == Fraction(9, 20)
    one = tv_by_verifier_and_children(TREE_TARGET, TREE_DRAFT, (), (1, 1), 3, verifiers)
    assert one["siblings", "iid"] == 0  # one i.i.d. child per node: the standard step
    assert three["siblings", "iid"] > 0  # two i.i.d. siblings: lossy
    claim = CLAIMS["tensorrt-llm-sibling-rule"].claim
    assert "7/16" in claim and "9/20" in claim and "TV 0" in claim


def test_medusa_fast_mode_costs_29_32_and_vllm_v0_typical_acceptance_3_10_with_either_closing_token():
    assert BY_NAME["medusa-typical-acceptance"].tv() == Fraction(29, 32) and MEDUSA.greedy_first
    wanted = autoregressive_law(TREE_TARGET, (), 3)
    chain = TreeShape((1, 1), "iid")
    sampled = typical_generation_law(TREE_TARGET, TREE_DRAFT, (), chain, 3, VLLM_TYPICAL)
    argmax = typical_generation_law(TREE_TARGET, TREE_DRAFT, (), chain, 3, replace(VLLM_TYPICAL, argmax_correction=True))
    assert tv_distance(sampled, wanted) == Fraction(3, 10) and argmax == sampled  # nothing is rejected here
    assert "29/32" in CLAIMS["medusa-fast-mode"].claim and "3/10" in CLAIMS["vllm-v0-typical-acceptance"].claim


def test_vllm_v0_argmax_correction_moves_the_law_where_drafts_are_rejected():
    # a threshold above some p(x) rejects drafts; then argmax p and a sample of p differ
    grid = {}
    for argmax in (False, True):
        rule = replace(VLLM_TYPICAL, argmax_correction=argmax, epsilon=Fraction(1, 5), delta=Fraction(3))
        grid[argmax] = typical_generation_law(TREE_TARGET, TREE_DRAFT, (), TreeShape((1, 1), "iid"), 3, rule)
    assert grid[False] != grid[True]
    # the float sampler follows the exact one (checked in test_tree_bugs for the sampled correction); the grid helper
    # still computes the sampled correction
    assert typical_tv_grid(TREE_TARGET, TREE_DRAFT, (), TreeShape((1, 1)), 3, [Fraction(1, 5)], [Fraction(3)],
                           greedy_first=False)[Fraction(1, 5), Fraction(3)] == tv_distance(
        grid[False], autoregressive_law(TREE_TARGET, (), 3))


def test_the_float_sampler_with_vllm_s_argmax_correction_fits_its_exact_round_law():
    """Power: N = 4000 rounds, level 1e-6; a round law at TV >= detectable_tv (asserted below 0.1) is caught w.p. 0.99."""
    import numpy as np

    from specmath.bugzoo.typical_acceptance import sample_typical_rounds, typical_round_law
    from specmath.speculative.tree_reference import draft_tree_arrays
    from specmath.stats import detectable_tv, g_test

    rule = replace(VLLM_TYPICAL, argmax_correction=True, epsilon=Fraction(1, 5), delta=Fraction(3))
    shape = TreeShape((1, 1), "iid")
    exact_law = typical_round_law(TREE_TARGET, TREE_DRAFT, (), shape, rule)
    sampled_law = typical_round_law(TREE_TARGET, TREE_DRAFT, (), shape, replace(rule, argmax_correction=False))
    rng = np.random.default_rng(11)
    arrays = draft_tree_arrays(TREE_TARGET, TREE_DRAFT, (), shape, 4000, rng)
    out = sample_typical_rounds(arrays.parents, arrays.target_probs, arrays.draft_probs, arrays.draft_tokens, rng, rule=rule)
    counts = {}
    for row in out:
        emitted = tuple(arrays.vocabulary[i] for i in row if i >= 0)
        counts[emitted] = counts.get(emitted, 0) + 1
    assert detectable_tv(exact_law, 4000) < 0.1 <= tv_distance(exact_law, sampled_law)
    assert g_test(counts, exact_law).p_value > 1e-6 and g_test(counts, sampled_law).p_value < 1e-6
