"""The batched torch verifier emits tokens with law p: G-tests with stated power, negative controls."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import pytest
import torch

from specmath.laws import Law
from specmath.lm.accept_reject import accept_reject
from specmath.stats import detectable_tv, g_test

# p = target, q = draft at one position over 5 tokens; alpha = sum min(p, q) = 0.6
P = torch.tensor([0.40, 0.30, 0.15, 0.10, 0.05])
Q = torch.tensor([0.10, 0.20, 0.40, 0.25, 0.05])
N = 200_000


def _first_emitted(p, q, drafts, residual="standard", seed=0):
    res = accept_reject(p, q, drafts, torch.Generator().manual_seed(seed), residual)
    # the first emitted token: the first draft if accepted, else the residual draw
    return torch.where(res.n_accepted > 0, drafts[:, 0], res.next_token).tolist()


def _law(t: torch.Tensor) -> Law:
    return Law.from_weights({i: Fraction(float(v)) for i, v in enumerate(t.double())})


@pytest.mark.parametrize("one_hot", [False, True])
def test_first_emitted_token_follows_p_for_a_model_draft_and_a_one_hot_draft(one_hot):
    """N = 200000 rows in one batch; the G-test at level 1e-6 detects any TV >= detectable_tv (~0.006) w.p. 0.99."""
    gen = torch.Generator().manual_seed(1)
    drafts = torch.multinomial(Q.expand(N, -1), 2, replacement=True, generator=gen)  # (N, gamma=2)
    p = P.expand(N, 3, -1)
    q = None if one_hot else Q.expand(N, 2, -1)
    law = _law(P)
    result = g_test(Counter(_first_emitted(p, q, drafts)), law)
    power = detectable_tv(law, N)
    assert power < 0.01
    assert result.p_value > 1e-6, f"G={result.statistic:.1f}, p={result.p_value:.2e}; power: TV >= {power:.4f} detected w.p. 0.99"


@pytest.mark.parametrize("rule", ["residual-softmax", "target"])
def test_lossy_rules_are_rejected_at_the_same_n(rule):
    """Negative control: the lossy rules move the law by TV >= 0.14 (resample from p; more for softmax) > detectable_tv(N) ~0.006, so p < 1e-6."""
    gen = torch.Generator().manual_seed(2)
    drafts = torch.multinomial(Q.expand(N, -1), 2, replacement=True, generator=gen)
    result = g_test(Counter(_first_emitted(P.expand(N, 3, -1), Q.expand(N, 2, -1), drafts, rule)), _law(P))
    assert result.p_value < 1e-6, f"{rule}: p={result.p_value:.2e} should reject"


def test_a_zero_residual_falls_back_to_p_and_is_counted():
    # p(x) < q(x) but max(0, p - q) == 0 everywhere: only possible with unnormalised rounding, as here
    p = torch.tensor([[[0.3, 0.7], [0.3, 0.7]]]).expand(64, -1, -1)
    q = torch.tensor([[[0.9, 0.7]]]).expand(64, -1, -1)
    drafts = torch.zeros(64, 1, dtype=torch.long)
    res = accept_reject(p, q, drafts, torch.Generator().manual_seed(0))
    assert res.zero_residual == int((res.n_accepted == 0).sum()) > 0
    assert set(res.next_token.tolist()) <= {0, 1}


def test_verify_rejects_mismatched_shapes_and_unknown_rules():
    drafts = torch.zeros(2, 3, dtype=torch.long)
    g = torch.Generator()
    with pytest.raises(ValueError, match="p has shape"):
        accept_reject(torch.ones(2, 3, 5) / 5, None, drafts, g)
    with pytest.raises(ValueError, match="vocabularies differ"):
        accept_reject(torch.ones(2, 4, 5) / 5, torch.ones(2, 3, 6) / 6, drafts, g)
    with pytest.raises(ValueError, match="residual must be one of"):
        accept_reject(torch.ones(2, 4, 5) / 5, None, drafts, g, residual="sloppy")
