"""The round audit's edge probes run on every case, and catch what a histogram cannot; the output reader's bounds."""

import numpy as np
import pytest

from specmath.audit import adapter_named, case_named, run_case
from specmath.audit.edge_draws import numpy_edge_generator
from specmath.audit.rounds.output import InvalidSamplerOutput, batch_tokens, round_tokens
from specmath.settings import AuditSettings


def test_every_case_is_probed_with_u_zero_and_u_just_below_one_at_each_draw():
    case = case_named("zeros-in-target")  # gamma = 3
    result = run_case(adapter_named("reference"), case, AuditSettings(n=200), level=1e-8)
    assert [(p["edge"], p["k"]) for p in result.probes] == [(e, k) for e in ("zero", "max") for k in range(case.gamma + 1)]
    assert {p["uniform"] for p in result.probes} == {"0.0", "1 - 2^-53"}
    assert all(p["problem"] is None and p["emitted"] for p in result.probes) and result.passed


def test_a_sampler_that_accepts_at_u_zero_passes_its_histograms_and_fails_the_zero_probe():
    # the bug zoo's u <= p/q with float32 uniforms: u = 0 has probability 2^-24 per draw, far below what 200
    # rounds see, and the zero probe puts it at draw 0, where it accepts a draft of target probability 0
    assert numpy_edge_generator(0, "zero").integers(0, 2**24, size=2).tolist() == [0, 0]
    result = run_case(adapter_named("bug:accept-on-u-equal-zero"), case_named("zeros-in-target"), AuditSettings(n=200),
                      level=1e-8)
    assert not any(t.rejects for t in result.tests)
    problems = [p for p in result.probes if p["problem"]]
    assert [(p["edge"], p["k"]) for p in problems] == [("zero", 0)]
    assert "which has exact probability 0" in problems[0]["problem"] and result.verdict == "FAIL"


@pytest.mark.parametrize("output", [[2], (2,), np.array([2]), [0, 2]])
def test_the_output_reader_refuses_the_id_one_past_the_vocabulary(output):
    with pytest.raises(InvalidSamplerOutput, match=r"token id 2 is outside the vocabulary 0\.\.1"):
        round_tokens(output, 1, 2)
    assert round_tokens(np.array([1, 0]), 1, 2) == (1, 0)  # the largest id, V - 1, is a token
    with pytest.raises(InvalidSamplerOutput, match=r"token id 2 is outside the vocabulary 0\.\.1"):
        batch_tokens(np.array([[1, -1], [2, -1]]), 2, 1, 2)
