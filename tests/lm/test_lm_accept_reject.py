"""The batched torch accept/reject step emits tokens with law p: G-tests with stated power, negative controls."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import pytest
import torch

from specmath.audit.edge_draws import torch_edge_generator
from specmath.laws import Law
from specmath.lm import accept_reject as accept_reject_module
from specmath.lm.accept_reject import accept_prefix, accept_reject, rejection_laws
from specmath.lm.generation import Draws
from specmath.lm.lossy_controls import TORCH_CONTROLS
from specmath.stats import detectable_tv, g_test

# p = target, q = draft at one position over 5 tokens; alpha = sum min(p, q) = 0.6
P = torch.tensor([0.40, 0.30, 0.15, 0.10, 0.05])
Q = torch.tensor([0.10, 0.20, 0.40, 0.25, 0.05])
N = 200_000


def _first_emitted(p, q, drafts, step=accept_reject, seed=0, lengths=None):
    res = step(p, q, drafts, torch.Generator().manual_seed(seed), lengths)
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


@pytest.mark.parametrize("rule", sorted(TORCH_CONTROLS))
def test_lossy_controls_from_the_bug_zoo_are_rejected_at_the_same_n(rule):
    """Negative control: the lossy rules move the law by TV >= 0.14 (resample from p; more for softmax) > detectable_tv(N) ~0.006, so p < 1e-6."""
    gen = torch.Generator().manual_seed(2)
    drafts = torch.multinomial(Q.expand(N, -1), 2, replacement=True, generator=gen)
    result = g_test(Counter(_first_emitted(P.expand(N, 3, -1), Q.expand(N, 2, -1), drafts, TORCH_CONTROLS[rule])), _law(P))
    assert result.p_value < 1e-6, f"{rule}: p={result.p_value:.2e} should reject"


def test_the_production_accept_reject_has_no_lossy_switch():
    # the only parameters: the block, the randomness and the proposed lengths
    import inspect

    assert list(inspect.signature(accept_reject).parameters) == ["p", "q", "drafts", "generator", "lengths"]
    assert not hasattr(accept_reject_module, "RESIDUAL_RULES")


def test_rows_of_different_proposed_lengths_follow_p_at_their_first_emitted_token():
    """Rows proposing 0, 1 or 2 tokens in one batch (padding after their length): the first emitted token has law p.

    N = 200000 rows (a third per length); the G-test at level 1e-6 detects TV >= detectable_tv (~0.015 per third) w.p. 0.99.
    """
    gen = torch.Generator().manual_seed(3)
    drafts = torch.multinomial(Q.expand(N, -1), 2, replacement=True, generator=gen)
    lengths = torch.arange(N) % 3
    first = _first_emitted(P.expand(N, 3, -1), Q.expand(N, 2, -1), drafts, lengths=lengths, seed=4)
    law = _law(P)
    for n in range(3):
        rows = [t for t, length in zip(first, lengths.tolist(), strict=True) if length == n]
        result = g_test(Counter(rows), law)
        assert detectable_tv(law, len(rows)) < 0.02
        assert result.p_value > 1e-6, f"length {n}: G={result.statistic:.1f}, p={result.p_value:.2e}"


def test_a_row_that_proposes_nothing_takes_one_plain_step_and_accepts_nothing():
    p = torch.tensor([[[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]])  # (1, 2, 3): p_0 is one-hot on token 1
    drafts = torch.tensor([[0]])
    res = accept_reject(p, None, drafts, torch.Generator().manual_seed(0), torch.tensor([0]))
    assert res.n_accepted.tolist() == [0] and res.next_token.tolist() == [1]


def test_greedy_accepts_exactly_the_drafts_equal_to_the_targets_argmax():
    # T = 0: p_i one-hot on the argmax; x_i accepted iff it is that argmax, then the argmax is emitted
    argmax = torch.tensor([[2, 0, 1, 3]])
    p = torch.nn.functional.one_hot(argmax, 4).float()  # (1, 4, 4)
    for drafts, n, nxt in [([2, 0, 1], 3, 3), ([2, 1, 1], 1, 0), ([0, 0, 1], 0, 2)]:
        x = torch.tensor([drafts])
        q = torch.nn.functional.one_hot(x, 4).float()
        for qq in (q, None):
            res = accept_reject(p, qq, x, torch.Generator().manual_seed(5))
            assert (res.n_accepted.item(), res.next_token.item()) == (n, nxt)


def test_per_row_draws_give_a_row_the_tokens_it_gets_alone():
    # Draws with one generator per row: row b's uniforms and token are those of a batch of one with its seed
    p, q = P.expand(3, 3, -1), Q.expand(3, 2, -1)
    drafts = torch.tensor([[2, 3], [0, 1], [2, 2]])
    lengths = torch.tensor([2, 1, 0])
    seeds = [11, 12, 13]
    batch = accept_reject(p, q, drafts, Draws([torch.Generator().manual_seed(s) for s in seeds], per_row=True), lengths)
    for b, s in enumerate(seeds):
        n = int(lengths[b])
        alone = accept_reject(p[b : b + 1, : n + 1], q[b : b + 1, :n], drafts[b : b + 1, :n], torch.Generator().manual_seed(s))
        assert (batch.n_accepted[b].item(), batch.next_token[b].item()) == (alone.n_accepted.item(), alone.next_token.item())


def test_a_zero_residual_falls_back_to_p_and_is_counted():
    # p(x) < q(x) but max(0, p - q) == 0 everywhere: only possible with unnormalised rounding, as here
    p = torch.tensor([[[0.3, 0.7], [0.3, 0.7]]]).expand(64, -1, -1)
    q = torch.tensor([[[0.9, 0.7]]]).expand(64, -1, -1)
    drafts = torch.zeros(64, 1, dtype=torch.long)
    res = accept_reject(p, q, drafts, torch.Generator().manual_seed(0))
    assert res.zero_residual == int((res.n_accepted == 0).sum()) > 0
    assert set(res.next_token.tolist()) <= {0, 1}


def test_accept_reject_rejects_mismatched_shapes_and_lengths():
    drafts = torch.zeros(2, 3, dtype=torch.long)
    g = torch.Generator()
    with pytest.raises(ValueError, match="p has shape"):
        accept_reject(torch.ones(2, 3, 5) / 5, None, drafts, g)
    with pytest.raises(ValueError, match="vocabularies differ"):
        accept_reject(torch.ones(2, 4, 5) / 5, torch.ones(2, 3, 6) / 6, drafts, g)
    with pytest.raises(ValueError, match="lengths must be a"):
        accept_reject(torch.ones(2, 4, 5) / 5, None, drafts, g, [3, 3])


class GivenUniforms(Draws):
    """Draws whose accept uniforms are the given (B, gamma) table; tokens from a seeded generator."""

    def __init__(self, u: torch.Tensor) -> None:
        super().__init__([torch.Generator().manual_seed(0)], per_row=False)
        self.u = u

    def uniform(self, batch, gamma, lengths=None):
        return self.u[:batch, :gamma]


def test_u_zero_rejects_a_token_the_target_never_emits():
    # p(x) = 0 < q(x) = 1/2: accept iff u q(x) < p(x), strictly, so even u = 0 rejects, and the residual
    # max(0, p - q) is the point mass on token 1
    p = torch.tensor([[[0.0, 1.0], [0.5, 0.5]]])  # (1, gamma + 1 = 2, V = 2)
    q = torch.tensor([[[0.5, 0.5]]])
    drafts = torch.tensor([[0]])
    res = accept_reject(p, q, drafts, torch_edge_generator(0, "zero"))  # its first uniform is exactly 0.0
    assert torch.rand(1, generator=torch_edge_generator(0, "zero")).item() == 0.0
    assert (res.n_accepted.item(), res.next_token.item()) == (0, 1)
    n_accepted, _ = accept_prefix(p, q, drafts, GivenUniforms(torch.zeros(1, 1)))
    assert n_accepted.item() == 0
    # a token the target does emit, however rarely, is accepted at u = 0
    rare = torch.tensor([[[1e-30, 1.0 - 1e-30], [0.5, 0.5]]])
    assert accept_prefix(rare, q, drafts, GivenUniforms(torch.zeros(1, 1)))[0].item() == 1


def test_a_draft_token_is_accepted_exactly_when_u_is_below_p_over_q():
    # a grid of uniforms u and ratios r = p(x)/q(x), no ties (u != r): accepted iff u < r, i.e. w.p. min(1, r)
    us = [0.05, 0.25, 0.45, 0.65, 0.85, 0.999]
    ratios = [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0, 2.0]
    rows = [(u, r) for u in us for r in ratios]
    q_x = 0.4
    p = torch.zeros(len(rows), 2, 3)
    q = torch.zeros(len(rows), 1, 3)
    for b, (_, r) in enumerate(rows):
        p_x = min(r * q_x, 1.0)
        p[b, 0] = torch.tensor([p_x, (1 - p_x) / 2, (1 - p_x) / 2])
        p[b, 1] = torch.tensor([1.0, 0.0, 0.0])
        q[b, 0] = torch.tensor([q_x, 0.3, 0.3])
    u = torch.tensor([[u] for u, _ in rows])
    n_accepted, accept_probability = accept_prefix(p, q, torch.zeros(len(rows), 1, dtype=torch.long), GivenUniforms(u))
    assert n_accepted.tolist() == [int(u < r) for u, r in rows]
    expected = torch.tensor([[min(1.0, min(r * q_x, 1.0) / q_x)] for _, r in rows])
    assert torch.allclose(accept_probability, expected, rtol=1e-6, atol=0)  # float32 p/q: relative 1e-6 is a few ulps


def test_a_rejected_one_hot_draft_is_never_resampled():
    # one-hot q (prompt lookup): a rejected x is resampled from p with x removed, so a rejected row never emits x
    B = 4000
    p = torch.tensor([[0.5, 0.3, 0.2], [1.0, 0.0, 0.0]]).expand(B, -1, -1)
    drafts = torch.zeros(B, 1, dtype=torch.long)
    res = accept_reject(p, None, drafts, torch.Generator().manual_seed(9))
    rejected = res.n_accepted == 0
    # P(reject) = 1 - p(0) = 1/2: about 2000 rows, and none of them emits token 0
    assert 1800 < int(rejected.sum()) < 2200
    assert not bool((res.next_token[rejected] == 0).any())
    assert set(res.next_token[rejected].tolist()) == {1, 2}


def test_the_residual_is_the_positive_part_of_p_minus_q_and_the_bonus_row_is_p_gamma():
    # every weight a multiple of 1/8, so p - q is exact in float32 and the tensors equal these values exactly
    p = torch.tensor([[0.500, 0.250, 0.125, 0.125],   # position 0
                      [0.125, 0.625, 0.125, 0.125],   # position 1
                      [0.250, 0.250, 0.250, 0.250]])  # position gamma = 2: the bonus row
    q = torch.tensor([[0.250, 0.500, 0.125, 0.125],
                      [0.375, 0.125, 0.250, 0.250]])
    B = 3
    drafts = torch.tensor([[1, 2]] * B)
    n_accepted = torch.tensor([0, 1, 2])  # row 0 rejects at 0, row 1 at 1, row 2 accepts both
    p_n, residual, rejected = rejection_laws(p.expand(B, -1, -1), q.expand(B, -1, -1), drafts, n_accepted)
    assert torch.equal(p_n, torch.stack([p[0], p[1], p[2]]))
    # max(0, p_i - q_i): never negative, zero where q >= p
    assert torch.equal(residual[0], torch.tensor([0.250, 0.0, 0.0, 0.0]))
    assert torch.equal(residual[1], torch.tensor([0.0, 0.5, 0.0, 0.0]))
    assert rejected.tolist() == [True, True, False]

