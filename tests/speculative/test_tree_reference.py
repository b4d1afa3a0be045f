"""The batched float tree sampler fits the exact round laws; its layout and its errors are what the docs say.

Power, for every G-test here: N = 4000 rounds, level 1e-6; the test detects every round law at TV >=
``detectable_tv(law, N)`` from the exact one with probability >= 0.99, asserted to be below 0.1.
"""

from fractions import Fraction

import numpy as np
import pytest

from specmath.laws import tv_distance
from specmath.speculative.tree import TreeShape, tree_round_law
from specmath.speculative.tree_examples import TREE_DRAFT, TREE_TARGET
from specmath.speculative.tree_reference import (
    check_tree_arrays,
    draft_tree_arrays,
    draw_rows,
    sample_tree_rounds,
    tree_parents,
)
from specmath.speculative.tree_registry import LOSSLESS_CHILDREN
from specmath.stats import detectable_tv, g_test
from specmath.validation import InvalidArgument, UnknownName

N = 4000
PROVED = [(name, children) for name, modes in LOSSLESS_CHILDREN.items() for children in modes]


def counts_of(arrays, out):
    counts = {}
    for row in out:
        emitted = tuple(arrays.vocabulary[i] for i in row if i >= 0)
        counts[emitted] = counts.get(emitted, 0) + 1
    return counts


@pytest.mark.parametrize("case", PROVED, ids=lambda c: f"{c[0]}-{c[1]}")
@pytest.mark.parametrize("context", [(), ("c",)])
def test_the_float_sampler_fits_the_exact_round_law_of_its_verifier(case, context):
    verifier, children = case
    shape = TreeShape((2, 2), children)
    rng = np.random.default_rng(sum(map(ord, verifier + children)) + len(context))
    arrays = draft_tree_arrays(TREE_TARGET, TREE_DRAFT, context, shape, N, rng)
    out = sample_tree_rounds(arrays.parents, arrays.target_probs, arrays.draft_probs, arrays.draft_tokens, rng, verifier=verifier)
    law = tree_round_law(TREE_TARGET, TREE_DRAFT, context, shape, verifier)
    assert detectable_tv(law, N) < 0.1
    assert g_test(counts_of(arrays, out), law).p_value > 1e-6


def test_the_same_test_has_the_power_to_reject_a_lossy_pairing():
    # SpecInfer's rule on top-k children: its round law is at TV 9/20 from the target-only round's, far above 0.1
    shape = TreeShape((2, 2), "top-k")
    lossy, correct = (tree_round_law(TREE_TARGET, TREE_DRAFT, (), shape, v) for v in ("specinfer", "target-only"))
    assert tv_distance(lossy, correct) == Fraction(9, 20)
    rng = np.random.default_rng(5)
    arrays = draft_tree_arrays(TREE_TARGET, TREE_DRAFT, (), shape, N, rng)
    out = sample_tree_rounds(arrays.parents, arrays.target_probs, arrays.draft_probs, arrays.draft_tokens, rng, verifier="specinfer")
    counts = counts_of(arrays, out)
    assert g_test(counts, lossy).p_value > 1e-6
    assert g_test(counts, correct).p_value < 1e-6


def test_the_layout_root_row_first_then_one_row_per_node_siblings_sharing_their_draft_row():
    shape = TreeShape((2, 2), "without-replacement")
    arrays = draft_tree_arrays(TREE_TARGET, TREE_DRAFT, ("a",), shape, 3, np.random.default_rng(0))
    assert arrays.parents.tolist() == tree_parents(shape).tolist() == [-1, -1, 0, 0, 1, 1]
    vocab = arrays.vocabulary
    for b in range(3):
        tokens = [vocab[i] for i in arrays.draft_tokens[b]]
        paths = {-1: ("a",)}
        for i, parent in enumerate(arrays.parents.tolist()):
            paths[i] = paths[parent] + (tokens[i],)
            # the same float() of the same Fraction: one computation path, so == is exact
            assert arrays.target_probs[b, i + 1].tolist() == [float(TREE_TARGET(paths[i])[x]) for x in vocab]
            assert arrays.draft_probs[b, i].tolist() == [float(TREE_DRAFT(paths[parent])[x]) for x in vocab]
        assert arrays.target_probs[b, 0].tolist() == [float(TREE_TARGET(("a",))[x]) for x in vocab]
        assert tokens[0] != tokens[1] and tokens[2] != tokens[3]  # drawn without replacement


def test_output_is_the_path_then_one_token_padded_with_minus_one():
    shape = TreeShape((1, 1, 1), "iid")
    rng = np.random.default_rng(2)
    arrays = draft_tree_arrays(TREE_TARGET, TREE_DRAFT, (), shape, 500, rng)
    out = sample_tree_rounds(arrays.parents, arrays.target_probs, arrays.draft_probs, arrays.draft_tokens, rng)
    assert out.shape == (500, 4) and out.dtype == np.int64
    lengths = (out >= 0).sum(axis=1)
    assert lengths.min() >= 1 and all((out[b, lengths[b]:] == -1).all() for b in range(500))
    # the emitted path follows the drafted chain up to the last token
    for b in range(500):
        n = lengths[b] - 1
        assert out[b, :n].tolist() == arrays.draft_tokens[b, :n].tolist()


def test_draw_rows_never_draws_a_zero_and_takes_unnormalised_rows():
    probs = np.array([[0.0, 2.0, 0.0, 2.0]] * 2000)
    drawn = draw_rows(probs, np.random.default_rng(4))
    assert set(drawn.tolist()) == {1, 3}


def test_bad_arrays_and_arguments_raise_one_clear_error():
    shape = TreeShape((2,), "iid")
    a = draft_tree_arrays(TREE_TARGET, TREE_DRAFT, (), shape, 2, np.random.default_rng(0))
    with pytest.raises(InvalidArgument, match="parent comes before its children"):
        check_tree_arrays([1, -1], a.target_probs, a.draft_probs, a.draft_tokens)
    with pytest.raises(InvalidArgument, match=r"target_probs must have shape \[N, nodes \+ 1, V\]"):
        check_tree_arrays(a.parents, a.target_probs[:, :2], a.draft_probs, a.draft_tokens)
    with pytest.raises(InvalidArgument, match="rows must sum to 1"):
        check_tree_arrays(a.parents, a.target_probs * 2, a.draft_probs, a.draft_tokens)
    with pytest.raises(InvalidArgument, match="ids in 0..2"):
        check_tree_arrays(a.parents, a.target_probs, a.draft_probs, a.draft_tokens + 3)
    with pytest.raises(InvalidArgument, match="numpy.random.Generator"):
        sample_tree_rounds(a.parents, a.target_probs, a.draft_probs, a.draft_tokens, 0)
    with pytest.raises(UnknownName, match="did you mean 'target-only'"):
        sample_tree_rounds(a.parents, a.target_probs, a.draft_probs, a.draft_tokens, np.random.default_rng(0), verifier="target_only")
    with pytest.raises(InvalidArgument, match="fewer than the 4 children"):
        draft_tree_arrays(TREE_TARGET, TREE_DRAFT, (), TreeShape((4,), "top-k"), 1, np.random.default_rng(0))
