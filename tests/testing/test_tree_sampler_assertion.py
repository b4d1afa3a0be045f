"""assert_tree_sampler_lossless: the reference trees pass, a loss shows its worst cells, bad output is an error.

Power: these runs use n = 300 rounds on one or two cases, enough for what each asserts: the lossy
verifier here is at completed TV 3/5 from the autoregressive law on its case, and the detectable TV
at n = 300 is 0.25 there (printed in the report); the u = 0 bug is caught by a deterministic probe.
The false-failure probability of every passing audit is <= 1e-6. Whole-battery audits at the
default n are in tests/audit/.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from tree_samplers import accept_on_u_equal_zero, specinfer_tree

from specmath.audit.trees.adapters import TreeAdapter
from specmath.audit.trees.cases import TREE_BATTERY, completed_tv, tree_case_named
from specmath.audit.trees.drafts import TreeDrafts
from specmath.audit.trees.output import tree_tokens
from specmath.audit.trees.runner import run_tree_audit
from specmath.settings import AuditSettings
from specmath.speculative.tree import TreeShape, tree_round_law
from specmath.speculative.tree_layouts import parents_from_paths, parents_from_sglang
from specmath.speculative.tree_reference import sample_tree_rounds
from specmath.speculative.tree_registry import LOSSLESS_CHILDREN
from specmath.testing import SamplerError, SamplerInputWarning, assert_tree_sampler_lossless
from specmath.validation import InvalidArgument, UnknownName

SMALL = {"n": 300, "cases": ["tree-context-2", "tree-example-2x2"]}


def named(function, name: str):
    function.__name__ = function.__qualname__ = name
    return function


def reference(verifier: str):
    def sample_tree(parents, target_probs, draft_probs, draft_tokens, rng):
        return sample_tree_rounds(parents, target_probs, draft_probs, draft_tokens, rng, verifier=verifier)

    return named(sample_tree, f"sample_tree_rounds_{verifier}")


@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.slow) if c.vocab_size > 10 else c for c in TREE_BATTERY],
                         ids=lambda c: c.name)
def test_every_lossless_verifier_completes_to_the_autoregressive_law_on_every_tree_case_exactly(case):
    # the battery's criterion, proved with the exact tree programs: TV(C, A) is 0 for each verifier
    # under the children it is proved for (Fractions, ==)
    for verifier, kinds in LOSSLESS_CHILDREN.items():
        for children in kinds:
            law = tree_round_law(case.target, case.draft, (), TreeShape(case.branching, children), verifier)
            assert completed_tv(case, law) == 0, (verifier, children)


@pytest.mark.parametrize("verifier,children", [(v, k) for v, kinds in LOSSLESS_CHILDREN.items() for k in kinds])
def test_the_reference_tree_sampler_passes_under_the_children_its_verifier_is_proved_for(verifier, children):
    report = assert_tree_sampler_lossless(reference(verifier), children=children, **SMALL)
    assert report.passed and [c.n for c in report.cases] == [300, 300]
    assert all(len(c.probes) == 2 * (tree_case_named(c.case).nodes + 1) for c in report.cases)


def test_a_loss_names_its_cases_and_the_worst_cells_of_the_completed_law():
    # SpecInfer's rule on top-k children: completed TV 3/5 on tree-context-2 (its root's top-1 token is always kept)
    case = tree_case_named("tree-context-2")
    lossy = tree_round_law(case.target, case.draft, (), TreeShape((2,), "top-k"), "specinfer")
    assert completed_tv(case, lossy) == Fraction(3, 5)
    with pytest.raises(AssertionError) as failure:
        assert_tree_sampler_lossless(reference("specinfer"), children="top-k", n=300, cases="tree-context-2")
    text = str(failure.value)
    assert text.startswith("the sampler sample_tree_rounds_specinfer is NOT lossless: 1 of 1 cases fail")
    assert "tree-context-2 (gamma = 2, V = 4, N = 300): 2 tree" in text
    assert "position 0: G = " in text and "worst cells (observed vs expected count):" in text


def test_accepting_a_child_at_u_zero_is_caught_by_the_zero_probe_alone():
    case = tree_case_named("tree-zeros-in-target-2x2")
    result = run_tree_audit(TreeAdapter("u <= p/q", "", accept_on_u_equal_zero, "numpy", "iid"), (case,), AuditSettings(n=300)).cases[0]
    assert not any(t.rejects for t in result.tests)  # u = 0 has probability 2^-53 per draw: no histogram sees it
    zero = [p for p in result.probes if p["problem"]]
    assert zero and all(p["edge"] == "zero" for p in zero)
    assert zero[0]["problem"].startswith("zero probe k=0 (draw 0 = 0.0; tree tokens [0, 4, 1, 4, 1, 4]")
    assert zero[0]["problem"].endswith("which no p-sample starts with (exact probability 0)")
    with pytest.raises(AssertionError, match="zero probe k=0"):
        assert_tree_sampler_lossless(accept_on_u_equal_zero, children="iid", n=300, cases=[case])


def _rows(output):
    """A sampler that returns ``output(correct rows, draft_tokens)`` in place of SpecInfer's rows."""
    return named(lambda par, tp, dp, dt, rng: output(sample_tree_rounds(par, tp, dp, dt, rng), dt), "my_tree")


def _off_path(rows, dt):
    out = rows.copy()
    out[:, 0], out[:, 1] = (dt[:, 0] + 1) % 4, 0  # a first token no root child has, followed by another
    return out


def _raises(par, tp, dp, dt, rng):
    raise RuntimeError("no tree kernel yet")


#: (what the sampler returns, the start of the SamplerError's detail)
BAD_OUTPUTS = [
    (_rows(_off_path), "is followed by more tokens, so it must be an accepted child, but the path before it offers only"),
    (_rows(lambda r, dt: np.where(np.arange(r.shape[1]) == 0, -1, np.maximum(r, 0))),
     "-1 (no token) may only follow the last emitted token"),
    (_rows(lambda r, dt: r[:, :1]), "the sampler returned shape (300, 1), expected (N, depth + 1) = (300, 2)"),
    (_rows(lambda r, dt: r.astype(float)), "the sampler returned an array of dtype float64"),
    (_rows(lambda r, dt: None), "the sampler returned None; it must return an [N, depth + 1] array of token ids"),
    (_rows(lambda r, dt: np.where(r >= 0, 7, -1)), "token id 7 is outside the vocabulary 0..3"),
    (_rows(lambda r, dt: np.full_like(r, -1)), "no token emitted"),
]


@pytest.mark.parametrize("sampler,detail", BAD_OUTPUTS, ids=range(len(BAD_OUTPUTS)))
def test_output_that_is_not_a_path_of_the_tree_then_one_token_is_invalid_output_never_a_loss(sampler, detail):
    with pytest.raises(SamplerError) as error:
        assert_tree_sampler_lossless(sampler, children="iid", n=300, cases="tree-context-2")
    text = str(error.value)
    assert text.startswith("the sampler my_tree returned invalid output (an error, not a loss) in 1 of 1 case(s); "
                           "first, tree-context-2: rounds 0..299 (one call): invalid output: ")
    assert detail in text


def test_a_sampler_that_raises_is_an_error_with_its_exception_chained():
    with pytest.raises(SamplerError, match="raised on valid input .* RuntimeError: no tree kernel yet") as error:
        assert_tree_sampler_lossless(_raises, children="top-k", n=300, cases="tree-context-2")
    assert isinstance(error.value.__cause__, RuntimeError)


def test_a_sampler_that_writes_into_its_inputs_is_told_where_and_its_verdict_stands():
    def in_place(par, tp, dp, dt, rng):
        out = sample_tree_rounds(par, tp, dp, dt, rng)
        tp[:, 0, 0] = -1.0  # scribbles on the root row after sampling
        return out

    with pytest.warns(SamplerInputWarning, match=r"target_probs\[0, 0, 0\] changed from .* to -1.0"):
        report = assert_tree_sampler_lossless(in_place, children="iid", **SMALL)
    assert report.passed


def test_repeated_children_are_read_as_either_sibling():
    # i.i.d. siblings may repeat: a path through either copy of token 2 is a path of the tree
    parents = np.array([-1, -1, 0, 1])
    draft_tokens = np.array([[2, 2, 0, 1], [2, 2, 0, 1]])
    lengths, ids = tree_tokens(np.array([[2, 0, 3], [2, 1, 0]]), parents, draft_tokens, 4)
    assert lengths.tolist() == [3, 3] and ids.tolist() == [[2, 0, 3], [2, 1, 0]]


def test_the_auditor_drafts_each_kind_of_children_as_the_verifier_assumes():
    case = tree_case_named("tree-example-2x2")
    rng = np.random.default_rng(0)
    for children in ("without-replacement", "top-k"):
        tokens, _ = TreeDrafts(case, children).draw(2000, rng)
        assert (tokens[:, 0] != tokens[:, 1]).all() and (tokens[:, 2] != tokens[:, 3]).all()
    tokens, contexts = TreeDrafts(case, "top-k").draw(3, rng)
    # q = {0: 1/2, 1: 1/10, 2: 2/5} at the root: the top two are 0 then 2, in every tree
    assert tokens[:, :2].tolist() == [[0, 2]] * 3
    iid, _ = TreeDrafts(case, "iid").draw(4000, rng)
    assert (iid[:, 0] == iid[:, 1]).any()  # i.i.d. siblings repeat (P = 1/4 + 1/100 + 4/25 per tree)


def test_bad_arguments_name_the_problem():
    good = reference("specinfer")
    with pytest.raises(UnknownName, match=r"unknown way of drawing children 'topk' \(did you mean 'top-k'\?\)"):
        assert_tree_sampler_lossless(good, children="topk", n=10, cases="tree-context-2")
    with pytest.raises(UnknownName, match=r"unknown tree audit case 'context-g1'"):
        assert_tree_sampler_lossless(good, children="iid", cases="context-g1")
    with pytest.raises(InvalidArgument, match=r"n \(rounds per case\) must be an int >= 1, got 0"):
        assert_tree_sampler_lossless(good, children="iid", n=0)
    with pytest.raises(InvalidArgument, match="sample_tree must be callable, got str 'my_tree'"):
        assert_tree_sampler_lossless("my_tree", children="iid")
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'children'"):
        assert_tree_sampler_lossless(good)


def test_a_numpy_tree_sampler_handed_a_torch_generator_is_told_which_to_use():
    pytest.importorskip("torch")
    with pytest.raises(SamplerError, match="if it draws from a numpy.random.Generator, audit it with generator='numpy'"):
        assert_tree_sampler_lossless(specinfer_tree, generator="torch", children="iid", n=10, cases="tree-context-2")


def test_engine_layouts_become_parent_indices():
    # vLLM's speculative_token_tree / Medusa's medusa_choices: child-rank paths, depth by depth
    assert parents_from_paths([(0,), (1,), (0, 0), (0, 1), (1, 0), (0, 0, 0)]).tolist() == [-1, -1, 0, 0, 1, 2]
    # SGLang: first child / next sibling per position, position 0 the root (its kernel test's second request)
    assert parents_from_sglang([4, 2, 3, -1, 5, -1], [-1, -1, -1, -1, 1, -1]).tolist() == [-1, 0, 1, -1, 3]
    with pytest.raises(InvalidArgument, match=r"path 1 is \(1, 0\), but its parent \(1,\) is not listed before it"):
        parents_from_paths([(0,), (1, 0), (1,)])
    with pytest.raises(InvalidArgument, match="position 2 is not reached from the root"):
        parents_from_sglang([1, -1, -1], [-1, -1, -1])
