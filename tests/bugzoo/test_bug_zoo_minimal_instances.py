"""The zoo's instances are minimal: one token fewer, one draft fewer or one generated token fewer is lossless."""

from dataclasses import replace

import pytest

from specmath.bugzoo import BUGS
from specmath.bugzoo.zoo import context_free
from specmath.laws import Law


def _with_instance(bug, make):
    return replace(bug, make_instance=make, _cache={})


@pytest.mark.parametrize("name", sorted(BUGS))
def test_every_bug_is_lossless_on_a_one_token_vocabulary(name):
    bug = BUGS[name]
    inst = bug.instance()
    one = context_free(Law({"A": 1}), "one-token LM")
    smaller = _with_instance(bug, lambda: replace(inst, target=one, draft=one))
    assert smaller.tv() == 0


def test_q_from_raw_logits_needs_three_tokens_for_top_2_to_bite():
    bug = BUGS["q-from-raw-logits"]
    inst = bug.instance()
    # drop C: on two tokens top-2 is the identity, so raw and processed q coincide
    two = replace(
        inst,
        target=context_free(Law({"A": "1/2", "B": "1/2"}), "p"),
        draft=context_free(Law({"A": "2/3", "B": "1/3"}), "q"),
    )
    assert _with_instance(bug, lambda: two).tv() == 0


def test_the_shared_uniform_needs_two_drafts_and_the_bonus_row_needs_two_tokens():
    shared = BUGS["one-uniform-for-all-positions"]
    assert _with_instance(shared, lambda: replace(shared.instance(), gamma=1)).tv() == 0
    bonus = BUGS["bonus-from-wrong-row"]
    assert _with_instance(bonus, lambda: replace(bonus.instance(), length=1)).tv() == 0
