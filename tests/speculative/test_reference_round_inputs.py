"""The float reference sampler names bad input with a ValueError instead of returning a wrong token."""

import numpy as np
import pytest

from specmath.laws import Law
from specmath.sampling_options import SamplingOptions
from specmath.speculative.reference_round import numpy_warp, reference_sample_round
from specmath.speculative.sampling_warp import warped

P = np.array([[0.5, 0.5], [0.25, 0.75]])
Q = np.array([[0.75, 0.25]])
RNG = np.random.default_rng(0)


@pytest.mark.parametrize(
    "target, draft, tokens, message",
    [
        (P[:1], Q, [0], "target_probs must have shape"),
        (P, np.array([[0.5, 0.5, 0.0]]), [0], "draft_probs must have shape"),
        (np.array([[np.nan, 1.0], [0.5, 0.5]]), Q, [0], "NaN"),
        (np.array([[1.5, -0.5], [0.5, 0.5]]), Q, [0], "negative"),
        (np.array([[0.5, 0.6], [0.5, 0.5]]), Q, [0], "do not sum to 1"),
        (P, Q, [2], "outside 0..1"),
        (P, Q, [0.5], "integer token ids"),
        (P, np.array([[1.0, 0.0]]), [1], "draft probability 0"),
    ],
)
def test_bad_round_arrays_raise_a_value_error_naming_the_problem(target, draft, tokens, message):
    with pytest.raises(ValueError, match=message):
        reference_sample_round(target, draft, np.array(tokens), np.random.default_rng(0))


def test_a_missing_generator_is_a_value_error():
    with pytest.raises(ValueError, match="numpy.random.Generator"):
        reference_sample_round(P, Q, np.array([0]), 42)


@pytest.mark.parametrize("w", [SamplingOptions(top_k=2), SamplingOptions(top_p="1/2"), SamplingOptions(temperature="1/2"), SamplingOptions(temperature=0), SamplingOptions(top_p="0.9", top_k=3)])
def test_numpy_warp_agrees_with_the_exact_warp(w):
    law = Law.from_weights({0: 4, 1: 3, 2: 2, 3: 1, 4: 2})
    exact = warped(law, w)
    got = numpy_warp(np.array([[float(law[i]) for i in range(5)]]), w)[0]
    # which tokens survive must agree exactly (ties at 2/12 included); the kept mass is float64
    # arithmetic on rounded inputs (relative error ~1e-16 per operation), hence 1e-12
    assert [v > 0 for v in got] == [exact[i] > 0 for i in range(5)]
    assert np.allclose(got, [float(exact[i]) for i in range(5)], atol=1e-12)
