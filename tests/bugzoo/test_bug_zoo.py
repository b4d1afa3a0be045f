"""Every bug-zoo entry is lossy by an exact TV on its instance; the correct algorithm is exact there."""

from fractions import Fraction

import numpy as np
import pytest

from specmath.bugzoo import BUGS
from specmath.laws import tv_distance
from specmath.speculative import round_law
from specmath.speculative.reference_round import draw_index, reference_sample_round
from specmath.stats import detectable_tv, g_test

#: the exact TV distance of each entry from its target law, on its instance (see the report table)
EXPECTED_TV = {
    "residual-softmax": Fraction(562949953421312, 2982195031933351),
    "accept-on-u-equal-zero": Fraction(1, 2**25),
    "uniform-fixed-at-zero": Fraction(1, 4),
    "residual-clamped-at-tiny": Fraction(1, 2**126 + 2),
    "q-from-raw-logits": Fraction(1, 6),
    "target-probs-unwarped": Fraction(1, 3),
    "first-draft-unverified": Fraction(1, 4),
    "logits-off-by-one": Fraction(1, 4),
    "bonus-from-wrong-row": Fraction(1, 2),
    "one-uniform-for-all-positions": Fraction(1, 4),
}


def test_the_zoo_has_at_least_eight_entries_each_explained_with_a_claim_record_or_what_it_is_modelled_on():
    assert len(BUGS) >= 8 and set(BUGS) == set(EXPECTED_TV)
    for bug in BUGS.values():
        assert bug.explanation and "\n" not in bug.explanation
        assert (bug.claim is None) != (not bug.modelled_on)
        assert bug.source.startswith("modelled on") if bug.claim is None else bug.claim.engine in bug.source


@pytest.mark.parametrize("name", sorted(EXPECTED_TV))
def test_each_bug_has_its_exact_tv_and_the_correct_algorithm_has_tv_zero_on_its_instance(name):
    bug = BUGS[name]
    assert bug.tv() == EXPECTED_TV[name] > 0
    assert bug.correct_law() == bug.target_law()


def test_the_residual_softmax_tv_is_half_the_softmax_weight_of_the_rejected_token():
    # P(reject) = 1/2, and softmax({A: 0, B: 1/2}) puts e^0 / (e^0 + e^(1/2)) on A, where p(A) - q(A) < 0
    e_half = Fraction(float(np.exp(0.5)))
    assert BUGS["residual-softmax"].tv() == Fraction(1, 2) * 1 / (1 + e_half)


def _sample_counts(inst, sampler, n, seed):
    rng = np.random.default_rng(seed)
    vocab = inst.vocabulary
    index = {x: i for i, x in enumerate(vocab)}
    draft_rows, arrays, counts = {}, {}, {}
    for _ in range(n):
        # draft tokens come from the law the draft really samples, w(q), one position at a time
        tokens = ()
        for _ in range(inst.gamma):
            if tokens not in draft_rows:
                law = inst.drawn_draft(inst.prefix + tokens)
                draft_rows[tokens] = np.array([float(law.prob(x)) for x in vocab])
            tokens += (vocab[draw_index(draft_rows[tokens], rng)],)
        if tokens not in arrays:
            arrays[tokens] = (*inst.probs(inst.prefix, tokens), np.array([index[x] for x in tokens], dtype=np.int64))
        target_probs, draft_probs, ids = arrays[tokens]
        out = tuple(vocab[i] for i in sampler(target_probs, draft_probs, ids, rng))
        counts[out] = counts.get(out, 0) + 1
    return counts


N = 2000


@pytest.mark.parametrize("name", sorted(EXPECTED_TV))
def test_each_float_reference_sampler_fits_its_exact_round_law_and_the_big_ones_are_caught(name):
    """Power: at N = 2000 the G-test at level 1e-6 detects every deviation of TV >= detectable_tv (about 0.1 here)."""
    bug = BUGS[name]
    inst = bug.instance()
    lossy = bug.lossy_round_law()
    counts = _sample_counts(inst, bug.sample_round, N, seed=sum(map(ord, name)))
    assert g_test(counts, lossy).p_value > 1e-6
    correct = round_law(inst.wanted_target, inst.drawn_draft, inst.prefix, inst.gamma)
    if tv_distance(lossy, correct) >= detectable_tv(correct, N):
        assert g_test(counts, correct).p_value < 1e-6


@pytest.mark.parametrize("name", sorted(EXPECTED_TV))
def test_the_float_reference_round_fits_the_correct_round_law_on_every_instance(name):
    bug = BUGS[name]
    inst = bug.instance()

    def sampler(tp, dp, x, rng):
        return reference_sample_round(tp, dp, x, rng, warp=bug.warp)

    counts = _sample_counts(inst, sampler, N, seed=7)
    assert g_test(counts, round_law(inst.wanted_target, inst.drawn_draft, inst.prefix, inst.gamma)).p_value > 1e-6


def test_the_zoo_is_the_join_of_its_modules_tuples_and_refuses_a_name_twice():
    from specmath.bugzoo.logit_bugs import LOGIT_BUGS
    from specmath.bugzoo.position_bugs import POSITION_BUGS
    from specmath.bugzoo.rule_bugs import RULE_BUGS
    from specmath.bugzoo.zoo import bugs_by_name

    assert list(BUGS.values()) == [*LOGIT_BUGS, *POSITION_BUGS, *RULE_BUGS]
    with pytest.raises(ValueError, match="two bug-zoo entries are named"):
        bugs_by_name(RULE_BUGS, RULE_BUGS[:1])
