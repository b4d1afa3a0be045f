"""The audit's tests have the power they state, and exact replay reproduces a torch sampler's draws."""

from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
import torch

from specmath.audit import adapter_named, case_named, run_case
from specmath.audit.power import looks, run_tests
from specmath.audit.rounds.adapters import DrawProtocol
from specmath.audit.rounds.replay import replay_round
from specmath.laws import Law
from specmath.settings import AuditSettings
from specmath.stats import detectable_tv
from specmath.validation import InvalidArgument


def test_looks_are_n_alone_or_sixteenths_to_n_in_sequential_mode():
    assert looks(1000, False) == [1000]
    assert looks(1600, True) == [100, 200, 400, 800, 1600]
    for bad in (0, -5, 2.5, True):
        with pytest.raises(InvalidArgument, match=r"^n \(rounds per case\) must be an int >= 1, got "):
            looks(bad, False)


def test_a_round_law_moved_by_the_stated_detectable_tv_is_rejected_with_probability_at_least_099():
    """The joint test's detectable TV at n = 4000 rounds, and 200 samples of n = 4000 rounds from a law moved
    by that TV: the worst case of the power bound (``specmath.stats``: eps of mass moved between two halves
    of the support, in proportion to p) is rejected in >= 194 of 200 (power 0.99: binomial(200, 0.01)
    exceeds 6 misses with probability < 0.005)."""
    case = case_named("context-g3")
    expected = case.expected()
    n, level = 4000, 1e-6 / 50
    # the detectable TV the audit states after n rounds: run_tests at the final look, with counts summing to n
    stated = Counter({s: 0 for s in expected.joint if expected.joint[s]})
    stated[next(iter(stated))] = n
    eps = run_tests(expected, stated, level, 0.99, True)[0].detectable_tv
    assert eps == detectable_tv(expected.joint, n, level, 0.99)
    outcomes = sorted((s for s in expected.joint if expected.joint[s]), key=lambda s: -expected.joint[s])
    probs = np.array([float(expected.joint[s]) for s in outcomes])
    heavy = np.cumsum(probs) <= 0.5
    shifted = probs * np.where(heavy, 1 + eps / probs[heavy].sum(), 1 - eps / probs[~heavy].sum())
    assert abs(0.5 * np.abs(shifted - probs).sum() - eps) < 1e-9
    rng = np.random.default_rng(7)
    rejected = 0
    trials = 200
    for _ in range(trials):
        draws = rng.multinomial(n, shifted / shifted.sum())
        counts = Counter({s: int(c) for s, c in zip(outcomes, draws, strict=True) if c})
        rejected += run_tests(expected, counts, level, 0.99, False)[0].rejects
    assert rejected >= trials - 6, (rejected, eps)


def test_exact_expected_counts_are_far_from_rejection():
    expected = case_named("context-g5").expected()
    counts = Counter({s: round(100_000 * float(w)) for s, w in expected.joint.items() if round(100_000 * float(w))})
    assert all(t.p_value > 0.5 for t in run_tests(expected, counts, 1e-8, 0.99, False))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("vocab", [2, 50, 1000])
def test_torch_multinomial_of_one_sample_is_the_exponential_race_the_replay_assumes(dtype, vocab):
    for seed in range(30):
        law = torch.rand(1, vocab, generator=torch.Generator().manual_seed(10_000 + seed), dtype=dtype)
        law[0, ::3] = 0  # zeros must never win
        law /= law.sum()
        g1, g2 = torch.Generator().manual_seed(seed), torch.Generator().manual_seed(seed)
        token = torch.multinomial(law, 1, generator=g1).item()
        race = (law[0] / torch.empty(vocab, dtype=dtype).exponential_(generator=g2)).argmax().item()
        assert token == race
        assert torch.equal(g1.get_state(), g2.get_state())


def test_replay_of_specmath_torch_sampler_matches_every_round_exactly():
    adapter = adapter_named("specmath-torch")
    for name in ("context-g5", "zeros-in-target", "vocab-1000"):
        result = run_case(adapter, case_named(name), AuditSettings(n=150, seed=3), level=1e-8, replay_rounds=150)
        assert result.replay_counts().get("match", 0) == len(result.replays) >= 150
        assert result.passed, result.reasons


def test_replay_reports_the_negative_control_mismatches_with_the_round_and_draws():
    adapter = adapter_named("specmath-torch-target-residual")
    result = run_case(adapter, case_named("context-g1"), AuditSettings(n=200), level=1e-8, replay_rounds=200)
    assert result.replay_failures and result.replay_failures[0]["where"].startswith("round ")
    assert len(result.replay_failures[0]["uniforms"]) == 1


def test_replay_round_with_u_zero_rejects_a_token_of_target_probability_zero():
    # u = 0 < p/q fails when p(x) = 0: the exact round resamples (here the residual is the point on 1)
    p = [Law({0: 0, 1: 1}), Law({0: Fraction(1, 2), 1: Fraction(1, 2)})]
    q = [Law({0: Fraction(1, 2), 1: Fraction(1, 2)})]
    from specmath.audit.edge_draws import torch_edge_generator

    outcome = replay_round(torch_edge_generator(0).get_state(), DrawProtocol("float32", "float32"), p, q, (0,), (0, 1))
    assert outcome.uniforms == (0.0,) and outcome.expected == (1,)
    assert outcome.kind == "mismatch"
