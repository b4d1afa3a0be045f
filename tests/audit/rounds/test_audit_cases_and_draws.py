"""The battery's exact laws, the case arrays, and generators whose k-th draw is exactly zero."""

from fractions import Fraction

import numpy as np
import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from specmath import strategies as sms
from specmath.audit.edge_draws import edge_generator, numpy_edge_generator, torch_edge_generator
from specmath.audit.rounds.cases import BATTERY, END, AuditCase, case_named, position_law
from specmath.laws import Law
from specmath.speculative.toy_lm import ToyLM
from specmath.validation import InvalidArgument, UnknownName


def test_battery_covers_gamma_1_3_5_vocabularies_2_to_1000_and_the_named_edge_cases():
    assert {c.gamma for c in BATTERY} >= {1, 3, 5}
    sizes = {c.vocab_size for c in BATTERY}
    assert min(sizes) == 2 and max(sizes) == 1000
    names = {c.name for c in BATTERY}
    assert {"p-equals-q", "disjoint-supports", "one-hot-draft", "zeros-in-target", "zeros-in-draft",
            "top-k-target-only", "top-k-draft-only", "near-underflow"} <= names


@pytest.mark.parametrize("case", BATTERY, ids=lambda c: c.name)
def test_each_case_position_laws_are_marginals_of_the_exact_round_law(case):
    expected = case.expected()
    assert sum(expected.joint.values()) == 1
    for i, law in enumerate(expected.positions):
        # P(the round emits more than i tokens) read two ways
        longer = sum((w for s, w in expected.joint.items() if len(s) > i), Fraction(0))
        assert 1 - law.prob(END) == longer


def test_case_arrays_are_the_exact_laws_in_float64_row_by_row():
    case = case_named("context-g3")
    tokens = (1, 0, 2)
    p, q = case.arrays(tokens)
    assert p.shape == (4, 4) and q.shape == (3, 4)
    for i in range(4):
        assert p[i].tolist() == [float(case.target(tokens[:i])[x]) for x in range(4)]
    for i in range(3):
        assert q[i].tolist() == [float(case.draft(tokens[:i])[x]) for x in range(4)]


def test_near_underflow_case_keeps_float32_tiny_and_subnormal_entries_exactly():
    p, q = case_named("near-underflow").arrays((0,))
    assert p[0, 2] == 2.0**-126 and p[0, 3] == 2.0**-149 and q[0, 4] == 2.0**-133
    assert np.float32(p[0, 3]) == np.float32(2.0**-149) > 0


def test_unknown_case_name_is_a_value_error_listing_the_names():
    with pytest.raises(ValueError, match="context-g1"):
        case_named("no-such-case")


# each example builds the exact round law and its marginals (3^gamma paths): 25 examples keep it to a second
@settings(max_examples=25, deadline=None)
@given(pq=sms.law_pairs(vocab=3), gamma=st.integers(1, 3))
@example(pq=(Law({0: "1/2", 1: "1/2", 2: 0}), Law({0: 0, 1: 0, 2: 1})), gamma=2)  # disjoint: one token per round
def test_position_zero_law_of_a_context_free_round_is_the_target(pq, gamma):
    # token 0 of every round has law p exactly (the first emitted token is lossless)
    p_law, q_law = pq
    case = AuditCase("t", ToyLM(lambda c: p_law, range(3)), ToyLM(lambda c: q_law, range(3)), gamma, "")
    assert position_law(case.expected().joint, 0) == p_law


@pytest.mark.parametrize("k", [0, 1, 2, 5])
def test_numpy_edge_generator_makes_the_k_th_64_bit_draw_exactly_zero_or_the_largest_below_one(k):
    assert numpy_edge_generator(k, "zero").random(k + 2)[k] == 0.0
    assert numpy_edge_generator(k, "max").random(k + 2)[k] == 1 - 2.0**-53
    # the same output is the two 32-bit draws 2k and 2k + 1: a float32-grid integers(0, 2^24) gives it twice
    assert numpy_edge_generator(k, "zero").integers(0, 2**24, size=2 * k + 2)[2 * k:].tolist() == [0, 0]
    assert numpy_edge_generator(k, "max").integers(0, 2**24, size=2 * k + 2)[2 * k:].tolist() == [2**24 - 1] * 2
    assert numpy_edge_generator(k, "zero").random(k + 1)[:k].min(initial=1.0) > 0


@pytest.mark.parametrize("k", [0, 1, 3])
def test_torch_edge_generator_makes_the_k_th_float32_uniform_exactly_zero_or_one_minus_2_to_minus_24(k):
    u = torch.rand(k + 2, generator=torch_edge_generator(k, "zero"))
    assert u[k].item() == 0.0 and u[k + 1].item() > 0
    u = torch.rand(k + 2, generator=torch_edge_generator(k, "max"))
    assert u[k].item() == 1 - 2.0**-24 and u[k + 1].item() < u[k].item()


def test_edge_generators_reject_bad_arguments():
    with pytest.raises(InvalidArgument, match=r"^draw index k must be an int >= 0, got -1$"):
        numpy_edge_generator(-1)
    with pytest.raises(InvalidArgument, match=r"^draw index k must be an int in \[0, 64\], got 10000$"):
        torch_edge_generator(10_000)
    with pytest.raises(UnknownName, match=r"^unknown edge 'middle'; choose from: zero, max$"):
        numpy_edge_generator(0, "middle")
    with pytest.raises(UnknownName, match=r"^unknown generator kind 'jax'; choose from: numpy, torch$"):
        edge_generator("jax", 0)


def test_the_stored_torch_edge_states_are_the_skipped_ones():
    import json

    from specmath.audit.edge_draws import TORCH_EDGE_STATES_FILE, torch_edge_states

    assert json.loads(TORCH_EDGE_STATES_FILE.read_text()) == torch_edge_states()


@pytest.mark.parametrize("name", ["context-g5", "zeros-in-draft", "vocab-1000"])
def test_batched_drafts_are_the_round_by_round_inverse_cdf_draws_of_the_same_stream(name):
    from specmath.audit.rounds.drafts import RoundDrafts

    case = case_named(name)
    drafts = RoundDrafts(case)
    tokens, nodes = drafts.draw(300, np.random.default_rng(5))
    more, _ = drafts.draw(200, np.random.default_rng(6))
    rng, rng_more = np.random.default_rng(5), np.random.default_rng(6)
    for stream, drawn in ((rng, tokens), (rng_more, more)):
        for row in drawn:
            context: tuple = ()
            for x in row:
                law = case.draft(context)
                cdf = np.cumsum([float(law[y]) for y in range(case.vocab_size)])
                # the first index whose cumulative weight exceeds u * total: a token of weight 0 is never drafted
                assert x == np.searchsorted(cdf, stream.random() * cdf[-1], side="right") and law[int(x)] > 0
                context += (int(x),)
    # each round's arrays are the raw rows of its prefixes, handed out as fresh copies
    target_probs, draft_probs = drafts.arrays(nodes[:2])
    assert np.array_equal(target_probs[1, -1], case.raw_rows(tuple(tokens[1].tolist()), "p"))
    assert np.array_equal(draft_probs[0, 0], case.raw_rows((), "q"))
    target_probs[:] = np.nan
    assert not np.isnan(drafts.arrays(nodes[:2])[0]).any()


def test_case_names_are_read_with_did_you_mean():
    from specmath.audit.rounds.cases import cases_named

    assert cases_named("vocab-2") == (case_named("vocab-2"),)
    assert cases_named(["vocab-2", case_named("context-g1")]) == (case_named("vocab-2"), case_named("context-g1"))
    assert cases_named(None) == BATTERY
    with pytest.raises(UnknownName, match=r"^unknown audit case 'vocab_2' \(did you mean 'vocab-2'\?\)"):
        cases_named(["vocab_2"])
    with pytest.raises(InvalidArgument, match=r"^cases is empty"):
        cases_named([])
