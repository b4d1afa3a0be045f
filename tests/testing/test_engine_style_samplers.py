"""Acceptance suite: samplers written the ways engines write them (tests/testing/engine_samplers.py).

Every correct one passes ``assert_sampler_lossless``; every lossy one whose loss is detectable fails
with an AssertionError (a loss), never a SamplerError. Power: at N rounds per case the joint test of
each case rejects every round law at TV >= eps with probability >= 0.99, eps = 0.10..0.17 at
N = 2000 and 0.03..0.06 at N = 20000 (``detectable TV`` in the report). Ten of the lossy samplers
emit tuples of exact probability 0 (a certain failure once one is seen; at N = 2000 each does so
hundreds of times, or on an edge probe) or move a per-position law by far more than eps. The
eleventh, ``float16-ratio``, is lossy by float16 rounding of p/q: its exact TV is computed here and
is at most 1.8e-4 on every case, below a hundredth of its detectable TV at N = 20000 (seeing it
would take some 5e8 rounds per case).

The fast tests run the batched interface at N = 2000; the ``slow`` ones run every correct sampler at the
default N = 20000 (a lossy one that fails at N = 2000 fails at any larger N with at least that power), and the
one-round interface on one sampler of each kind its adapter meets (below).
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest
from engine_samplers import CORRECT, LOSSY, TOP_K, float16_ratio, one_round, vectorised_uniforms

from specmath.audit import BATTERY
from specmath.laws import tv_distance
from specmath.sampling_options import SamplingOptions
from specmath.speculative.round import round_law
from specmath.speculative.step import residual_law
from specmath.testing import SamplerError, SamplerInputWarning, assert_sampler_lossless

DETECTABLE = {name: entry for name, entry in LOSSY.items() if name != "float16-ratio"}


def audit(entry, n: int, batched: bool = True, **kwargs):
    sampler, kind, warp = entry
    sampling = SamplingOptions(**warp) if warp else None
    return assert_sampler_lossless(sampler if batched else one_round(sampler), generator=kind, n=n, batched=batched,
                                   sampling=sampling, **kwargs)


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_every_correct_engine_style_sampler_passes_batched(name):
    report = audit(CORRECT[name], 2000)
    assert report.passed and all(c.n == 2000 for c in report.cases)
    assert max(c.tests[0].detectable_tv for c in report.cases) < 0.18


@pytest.mark.parametrize("name", sorted(DETECTABLE))
def test_every_detectable_lossy_sampler_fails_batched(name):
    with pytest.raises(AssertionError, match=r"is NOT lossless: \d+ of 14 cases fail"):
        audit(LOSSY[name], 2000)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CORRECT))
def test_at_the_default_n_correct_samplers_pass(name):
    report = audit(CORRECT[name], 20_000)
    assert report.passed and max(c.tests[0].detectable_tv for c in report.cases) < 0.07


#: the one-round interface runs the same sampler code through another adapter (a batch of one per call), so one
#: sampler of each kind it handles stands for the rest: a numpy generator and a torch one, a declared warp, a loss
#: that emits impossible tuples, one that only moves a law, one at the bonus row, and an undeclared warp
ONE_ROUND = ["vectorised-uniforms", "torch-multinomial", "top-k-both-sides", "u-le-ratio-closed-zero",
             "residual-normalised-by-p", "bonus-from-wrong-row", "top-k-target-only"]


@pytest.mark.slow
@pytest.mark.parametrize("name", ONE_ROUND)
def test_the_one_round_interface_gives_the_same_verdicts(name):
    if name in CORRECT:
        assert audit(CORRECT[name], 2000, batched=False).passed
    else:
        with pytest.raises(AssertionError, match="is NOT lossless"):
            audit(LOSSY[name], 2000, batched=False)


def test_top_k_on_both_sides_passes_only_when_the_warp_is_declared():
    sampler, kind, warp = CORRECT["top-k-both-sides"]
    assert warp == {"top_k": TOP_K}
    assert assert_sampler_lossless(sampler, n=2000, batched=True, sampling=SamplingOptions(top_k=TOP_K),
                                   cases=["context-g3", "top-k-draft-only"]).passed
    # undeclared, its target is not p: a loss, like the target-only warp
    with pytest.raises(AssertionError, match="NOT lossless"):
        assert_sampler_lossless(sampler, n=2000, batched=True, cases=["context-g3"])


def _float16_rule(p, q, x):
    # accept with the probability u < float16(p(x)/q(x)) has, for u on numpy's 2^-53 grid; residual as correct
    ratio = Fraction(float(np.float16(float(p[x]) / float(q[x]))))
    accept = min(Fraction(1), Fraction(-((-ratio * 2**53) // 1), 2**53))
    return accept, (residual_law(p, q) if accept < 1 and p != q else None)


def test_float16_ratio_is_lossy_by_far_less_than_any_audit_here_detects():
    report = assert_sampler_lossless(float16_ratio, n=20_000, batched=True)  # passes: the loss is invisible
    for case, result in zip(BATTERY, report.cases, strict=True):
        lossy = round_law(case.target, case.draft, (), case.gamma, _float16_rule)
        tv = tv_distance(lossy, case.expected().joint)
        assert tv < Fraction(result.tests[0].detectable_tv) / 100, (case.name, float(tv))


def _writes_its_residual_into_target_probs(tp, dp, dt, rng):
    """Correct, but computes max(0, p - q) in place in the target rows it was handed (as
    ``torch.as_tensor(tp)[i].sub_(q)`` does), then samples from the originals it saved."""
    saved = np.array(tp, copy=True)
    out = vectorised_uniforms(saved, dp, dt, rng)
    np.maximum(np.subtract(tp[:, :-1], dp, out=tp[:, :-1]), 0.0, out=tp[:, :-1])
    return out


def test_a_sampler_that_writes_into_its_inputs_is_told_so_and_the_next_one_is_unaffected():
    cases = ["context-g3", "zeros-in-draft"]
    with pytest.warns(SamplerInputWarning, match=r"wrote into its inputs in 2 case\(s\), first in context-g3, rounds "
                                                  r"0\.\.1999 \(one call\): target_probs\[0, 0, 0\] changed"):
        assert assert_sampler_lossless(_writes_its_residual_into_target_probs, n=2000, batched=True, cases=cases).passed
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the correct sampler after it: no warning, and it passes
        assert assert_sampler_lossless(vectorised_uniforms, n=2000, batched=True, cases=cases).passed
        assert assert_sampler_lossless(one_round(vectorised_uniforms), n=500, cases=cases).passed


def test_a_clobbering_one_round_sampler_is_told_too():
    def clobbers(tp, dp, dt, rng):
        emitted = one_round(vectorised_uniforms)(tp, dp, dt, rng)
        tp[:] = np.nan  # an engine's scratch use of its input buffer
        return emitted

    with pytest.warns(SamplerInputWarning, match=r"round 0, drafts \[\d(, \d)*\]: target_probs\[0, 0\] changed from .* to nan"):
        assert assert_sampler_lossless(clobbers, n=300, cases=["context-g1", "vocab-2"]).passed


def test_a_numpy_sampler_handed_a_torch_generator_is_told_which_kind_to_ask_for():
    with pytest.raises(SamplerError, match=r"handed a torch\.Generator \(generator='torch'\) and failed with "
                                           r"AttributeError: .*audit it with generator='numpy'$"):
        assert_sampler_lossless(vectorised_uniforms, generator="torch", n=50, batched=True, cases="vocab-2")
