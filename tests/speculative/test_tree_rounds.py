"""Token-tree rounds, exactly: each verifier is lossless with the children it assumes and lossy without them."""

from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from specmath import strategies as sms
from specmath.exact import exact
from specmath.laws import Law, LawError, tv_distance
from specmath.sampled import empirical_counts, sample_many
from specmath.speculative import autoregressive_law, round_law
from specmath.speculative.examples import WORD_DRAFT, WORD_TARGET
from specmath.speculative.toy_lm import random_toy_lm
from specmath.speculative.tree import (
    TreeShape,
    accepted_per_round,
    node_step,
    top_k_tokens,
    tree_generation_law,
    tree_round,
    tree_round_law,
)
from specmath.speculative.tree_examples import EQUAL_NODE_SHAPES, TREE_DRAFT, TREE_TARGET
from specmath.speculative.tree_registry import LOSSLESS_CHILDREN, TREE_VERIFIERS
from specmath.speculative.tree_verifiers import target_only_verifier
from specmath.stats import detectable_tv, g_test
from specmath.validation import InvalidArgument, UnknownName

VOCAB = (0, 1, 2, 3)
PAIRS = {"tree pair": (TREE_TARGET, TREE_DRAFT), "word pair": (WORD_TARGET, WORD_DRAFT)}
PROVED = [(name, children) for name, modes in LOSSLESS_CHILDREN.items() for children in modes]


def emitted_at_node(p, q, k, children, verifier):
    """The law of the token a node emits: its accepted child or its final token."""
    return exact(node_step, p, q, k, children, TREE_VERIFIERS[verifier]).law.map(lambda outcome: outcome[1])


# a node with k <= 3 children over 4 tokens branches over at most 4^3 drafts: 60 examples take a few seconds
@settings(max_examples=60, deadline=None)
@given(p=sms.laws(vocab=VOCAB), q=sms.laws(vocab=VOCAB), k=st.integers(1, 3), case=st.sampled_from(PROVED))
@example(p=Law({0: 1, 1: 0, 2: 0, 3: 0}), q=Law({0: 0, 1: 1, 2: 1, 3: 1}, normalise=True), k=3, case=("specinfer", "iid"))
@example(p=Law({0: 1, 1: 1, 2: 0, 3: 0}, normalise=True), q=Law({0: 1, 1: 1, 2: 0, 3: 0}, normalise=True), k=2,
         case=("without-replacement", "without-replacement"))  # q's support is exhausted: p == q on it
@example(p=Law({0: 1, 1: 0, 2: 1, 3: 1}, normalise=True), q=Law({0: 0, 1: 3, 2: 2, 3: 1}, normalise=True), k=2,
         case=("without-replacement", "without-replacement"))  # judged against q, not q without x_1, the second child moves p
def test_every_verifier_emits_exactly_p_at_a_node_with_the_children_it_assumes(p, q, k, case):
    verifier, children = case
    assert emitted_at_node(p, q, k, children, verifier) == p


@pytest.mark.parametrize("pair", PAIRS)
def test_a_chain_is_the_tree_of_branching_one_and_specinfer_on_it_is_the_standard_round(pair):
    target, draft = PAIRS[pair]
    assert tree_round_law(target, draft, (), TreeShape((1, 1, 1)), "specinfer") == round_law(target, draft, (), 3)


@pytest.mark.parametrize("children", ["iid", "without-replacement", "top-k"])
@pytest.mark.parametrize("verifier", ["specinfer", "without-replacement", "target-only"])
def test_the_fast_round_law_is_the_exact_law_of_the_round_program(children, verifier):
    # deferred decisions: drafting a node's children only when the walk reaches it changes nothing
    shape = TreeShape((2, 2) if children == "top-k" else (2, 1), children)
    if (verifier, children) == ("without-replacement", "iid"):
        with pytest.raises(LawError, match="repeat a token"):
            tree_round_law(TREE_TARGET, TREE_DRAFT, (), shape, verifier)
        return
    program = exact(tree_round, TREE_TARGET, TREE_DRAFT, (), shape, TREE_VERIFIERS[verifier])
    assert tree_round_law(TREE_TARGET, TREE_DRAFT, (), shape, verifier) == program.law
    assert program.expected_cost("target") == 1  # one pass with tree attention scores every node


@pytest.mark.parametrize("case", PROVED, ids=lambda c: f"{c[0]}-{c[1]}")
@pytest.mark.parametrize("seed", range(4))
def test_repeated_tree_rounds_generate_the_autoregressive_law_on_random_toy_models(case, seed):
    verifier, children = case
    target, draft = random_toy_lm(4, seed), random_toy_lm(4, seed + 50, zero_probability=0.0)
    law = tree_generation_law(target, draft, (), TreeShape((2, 2), children), 3, verifier)
    assert law == autoregressive_law(target, (), 3)


#: TV over 3 generated tokens, 2 x 2 trees on the tree pair, of each rule with children it does not assume
LOSSY_TV = {
    ("specinfer", "without-replacement"): Fraction(3, 50),
    ("specinfer", "top-k"): Fraction(9, 20),
    ("without-replacement", "top-k"): Fraction(63, 160),
    ("target-only", "iid"): Fraction(178423453, 2007040000),
}


@pytest.mark.parametrize("case", sorted(LOSSY_TV), ids=lambda c: f"{c[0]}-{c[1]}")
def test_a_rule_given_children_it_does_not_assume_is_lossy_by_an_exact_tv(case):
    verifier, children = case
    law = tree_generation_law(TREE_TARGET, TREE_DRAFT, (), TreeShape((2, 2), children), 3, verifier)
    assert tv_distance(law, autoregressive_law(TREE_TARGET, (), 3)) == LOSSY_TV[case] > 0


def test_specinfer_on_children_drawn_without_replacement_is_lossy():
    # x_2 is drawn from q without x_1, but SpecInfer judges it against q itself (Jeon et al. 2024 fix this)
    target, draft = random_toy_lm(4, 0), random_toy_lm(4, 100)
    law = tree_generation_law(target, draft, (), TreeShape((3,), "without-replacement"), 2, "specinfer")
    assert tv_distance(law, autoregressive_law(target, (), 2)) == Fraction(29, 420)
    fixed = tree_generation_law(target, draft, (), TreeShape((3,), "without-replacement"), 2, "without-replacement")
    assert fixed == autoregressive_law(target, (), 2)


def test_top_k_children_break_specinfer_because_the_first_child_is_proposed_with_probability_one():
    # p = {a: 3/10, b: 1/5, c: 1/2}, q = {a: 1/2, b: 1/10, c: 2/5}: top-1 child a is accepted w.p. p(a)/q(a) = 3/5
    p, q = TREE_TARGET(()), TREE_DRAFT(())
    emitted = emitted_at_node(p, q, 1, "top-k", "specinfer")
    assert emitted["a"] == Fraction(3, 5) != p["a"]
    # a child proposed with certainty is judged against q = one-hot: keep it w.p. p(a), else p without a
    assert emitted_at_node(p, q, 1, "top-k", "target-only") == p


def test_sglang_target_only_counts_a_repeated_child_twice():
    # the running sum p(x_1) + p(x_2) reaches 2 p(a) for children (a, a): P(a) = min(1, 2 p(a))
    p = Law({"a": Fraction(1, 5), "b": Fraction(4, 5)})
    law = exact(target_only_verifier, p, p, ("a", "a")).law
    assert law[0] + law[1] == Fraction(2, 5)


def test_equal_node_count_comparison_a_sampled_chain_wins_here_and_top_k_trees_beat_the_greedy_chain():
    iid = accepted_per_round(TREE_TARGET, TREE_DRAFT, (), list(EQUAL_NODE_SHAPES), "specinfer")
    chain, tree = EQUAL_NODE_SHAPES[0], EQUAL_NODE_SHAPES[3]
    assert chain.nodes == tree.nodes == 6 and (chain.depth, tree.depth) == (6, 2)
    assert iid[chain] == Fraction(56679, 20480) and iid[tree] == Fraction(5151, 3200)
    top = accepted_per_round(TREE_TARGET, TREE_DRAFT, (), [replace(s, children="top-k") for s in EQUAL_NODE_SHAPES], "target-only")
    by_branching = {s.branching: a for s, a in top.items()}
    assert by_branching[(1,) * 6] == Fraction(156849, 327680) < by_branching[(3, 1)] == Fraction(11, 8)
    assert by_branching[(2, 2)] == Fraction(21, 16)


def test_the_sampled_interpreter_runs_the_same_round_program():
    """Power: at N = 3000 the G-test at level 1e-6 detects any round law at TV >= detectable_tv (about 0.1)."""
    shape = TreeShape((2, 1), "iid")
    law = tree_round_law(TREE_TARGET, TREE_DRAFT, (), shape, "specinfer")
    runs = sample_many(tree_round, 3000, TREE_TARGET, TREE_DRAFT, (), shape, TREE_VERIFIERS["specinfer"], rng=np.random.default_rng(11))
    counts = empirical_counts(runs)
    assert detectable_tv(law, 3000) < 0.12
    assert g_test(counts, law).p_value > 1e-6


def test_tree_shapes_count_their_nodes_and_reject_bad_arguments_in_one_line():
    assert TreeShape((2, 2)).nodes == 6 and TreeShape((3, 1)).nodes == 6 and TreeShape((1,) * 6).depth == 6
    with pytest.raises(InvalidArgument, match="branching factor must be an int >= 1"):
        TreeShape((2, 0))
    with pytest.raises(InvalidArgument, match="at least one level"):
        TreeShape(())
    with pytest.raises(UnknownName, match="did you mean 'top-k'"):
        TreeShape((2,), "top_k")
    with pytest.raises(InvalidArgument, match=r"shape must be a TreeShape\(branching, children\)"):
        tree_round_law(TREE_TARGET, TREE_DRAFT, (), (2, 2), "specinfer")
    with pytest.raises(UnknownName, match="unknown tree verifier 'spec-infer'"):
        tree_round_law(TREE_TARGET, TREE_DRAFT, (), TreeShape((1,)), "spec-infer")


def test_top_k_takes_the_most_likely_tokens_with_ties_in_listing_order_and_never_a_zero():
    q = Law({"x": Fraction(1, 4), "y": Fraction(1, 2), "z": Fraction(1, 4), "w": 0})
    assert top_k_tokens(q, 2) == ("y", "x")
    assert top_k_tokens(q, 9) == ("y", "x", "z")
