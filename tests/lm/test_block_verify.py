"""Batched block verification in torch: the exact algorithm's numbers, its gain, and G-tests with stated power.

The algorithm is proved lossless exactly in ``specmath.speculative.block``; here the float version is
checked against it (the same weights w_i, stop probabilities h_i and residuals r_i, float64 within
1e-12: the same few operations on numbers <= 1, each rounding by <= 2^-53), and its sampling code by
G-tests of the first three tokens of whole speculative runs on a tiny model.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest
import torch

pytest.importorskip("transformers")

from lm_tiny import noisy_copy, tiny_llama  # noqa: E402

from specmath.laws import Law  # noqa: E402
from specmath.lm.accept_reject import AcceptReject, accept_reject  # noqa: E402
from specmath.lm.block_verify import block_accept_reject, block_stop_probabilities, expected_accepted  # noqa: E402
from specmath.lm.decode_options import DecodeOptions  # noqa: E402
from specmath.lm.drafts import PromptLookupDraft  # noqa: E402
from specmath.lm.generation import Draws  # noqa: E402
from specmath.lm.histogram import histogram_check, sample_prefixes  # noqa: E402
from specmath.lm.plain_decode import plain_generate  # noqa: E402
from specmath.lm.speculative_decode import speculative_generate  # noqa: E402
from specmath.sampling_options import SamplingOptions  # noqa: E402
from specmath.speculative.block import PAPER_EXAMPLE, block_weights  # noqa: E402

TOL = 1e-12  # float64, a handful of roundings of numbers <= 1 (see the module docstring)


def _law(t: torch.Tensor) -> Law:
    return Law.from_weights({i: Fraction(float(v)) for i, v in enumerate(t)})


def _random_block(seed: int, B: int, gamma: int, V: int, one_hot: bool):
    gen = torch.Generator().manual_seed(seed)
    p = torch.softmax(2 * torch.randn(B, gamma + 1, V, generator=gen, dtype=torch.float64), -1)
    q = torch.softmax(2 * torch.randn(B, gamma, V, generator=gen, dtype=torch.float64), -1)
    drafts = torch.stack([torch.multinomial(q[:, i], 1, generator=gen)[:, 0] for i in range(gamma)], 1)
    return p, None if one_hot else q, drafts


@pytest.mark.parametrize("one_hot", [False, True])
def test_weights_stops_and_residuals_equal_the_exact_block_verifier(one_hot):
    """Every row, every proposed length 0..gamma: w, h and r equal ``block_weights`` on the same laws."""
    B, gamma, V = 6, 4, 5
    p, q, drafts = _random_block(0, B, gamma, V, one_hot)
    lengths = torch.tensor([0, 1, 2, 3, 4, 4])
    w, h, r = block_stop_probabilities(p, q, drafts, lengths)
    for b in range(B):
        n = int(lengths[b])
        point = [torch.nn.functional.one_hot(drafts[b, i], V).double() for i in range(gamma)]
        q_laws = tuple(_law(point[i] if q is None else q[b, i]) for i in range(n))
        p_laws = tuple(_law(p[b, i]) for i in range(n + 1))
        W, H, R = block_weights(p_laws, tuple(drafts[b, :n].tolist()), q_laws)
        assert torch.allclose(w[b, : n + 1], torch.tensor([float(x) for x in W], dtype=torch.float64), atol=TOL, rtol=0)
        # h_0 is not a coin (tau = 0 is the default); positions past n_b never come up
        expected_h = [0.0] + [float(x) for x in H[1:]] + [0.0] * (gamma - n)
        assert torch.allclose(h[b], torch.tensor(expected_h, dtype=torch.float64), atol=TOL, rtol=0), (b, h[b], expected_h)
        for i in range(n):
            exact = torch.tensor([float(R[i].get(x, 0)) for x in range(V)], dtype=torch.float64)
            assert torch.allclose(r[b, i], exact, atol=TOL, rtol=0)


def test_the_papers_example_accepts_11_9_tokens_against_10_9_token_wise():
    """Sun et al.'s pair (p = {a: 1/3, b: 2/3}, q = {a: 2/3, b: 1/3}, gamma = 2), every drafted path weighted by q."""
    target, draft = PAPER_EXAMPLE
    vocab = ("a", "b")
    p_row = torch.tensor([float(target(())[x]) for x in vocab], dtype=torch.float64)
    q_row = torch.tensor([float(draft(())[x]) for x in vocab], dtype=torch.float64)
    paths = torch.tensor(list(itertools.product(range(len(vocab)), repeat=2)))  # (4, 2)
    weight = q_row[paths].prod(1)  # q(x_0) q(x_1)
    p, q = p_row.expand(4, 3, -1), q_row.expand(4, 2, -1)
    token_rows, block_rows = expected_accepted(p, q, paths)
    block, token_wise = (weight * block_rows).sum(), (weight * token_rows).sum()
    assert abs(float(block) - 11 / 9) < TOL and abs(float(token_wise) - 10 / 9) < TOL


def test_gamma_one_is_the_token_wise_step():
    """With one draft h_1 = min(1, p/q) and r_0 = max(0, p - q): the same decisions and tokens from the same seed.

    The two compare u < p/q and u q < p; they part only for a uniform within one rounding of p/q
    (chance about 1e-16 per row, 4000 rows here).
    """
    p, q, drafts = _random_block(1, 4000, 1, 7, one_hot=False)
    block = block_accept_reject(p, q, drafts, torch.Generator().manual_seed(3))
    token = accept_reject(p, q, drafts, torch.Generator().manual_seed(3))
    assert torch.equal(block.n_accepted, token.n_accepted)
    assert torch.equal(block.next_token, token.next_token)


def test_rows_that_propose_nothing_take_a_plain_step_and_padding_is_never_accepted():
    p, q, drafts = _random_block(2, 3, 3, 5, one_hot=False)
    lengths = torch.tensor([0, 2, 3])
    q[0], q[1, 2] = 0.0, 0.0  # padding may carry an all-zero q (0/0 in p/q): it must not leak into the result
    for seed in range(50):
        result = block_accept_reject(p, q, drafts, torch.Generator().manual_seed(seed), lengths)
        assert isinstance(result, AcceptReject)
        assert int(result.n_accepted[0]) == 0 and int(result.n_accepted[1]) <= 2 and int(result.n_accepted[2]) <= 3
        assert not result.zero_residual_rows.any()
    token_wise, block = expected_accepted(p, q, drafts, lengths)
    assert torch.isfinite(token_wise).all() and torch.isfinite(block).all()
    # nothing proposed, nothing to accept: both are sums of terms set to exactly 0 (torch.where), no rounding
    assert float(token_wise[0]) == float(block[0]) == 0.0
    assert float(token_wise[1]) <= 2 and float(block[1]) <= 2


def test_a_round_where_no_row_proposed_anything_is_a_plain_step():
    """gamma = 0 (prompt lookup found no match in any row): tau = 0 and the token comes from p_0."""
    p = torch.tensor([[[0.0, 1.0, 0.0]], [[0.0, 0.0, 1.0]]])
    drafts = torch.zeros(2, 0, dtype=torch.long)
    result = block_accept_reject(p, None, drafts, torch.Generator().manual_seed(0), torch.tensor([0, 0]))
    assert result.n_accepted.tolist() == [0, 0] and result.next_token.tolist() == [1, 2]
    assert [float(v) for v in expected_accepted(p, None, drafts)[1]] == [0.0, 0.0]  # empty sums: exactly 0


def test_an_all_zero_residual_falls_back_to_p_and_is_flagged():
    """p <= q everywhere with q unnormalised (what rounding can produce): tau = 0 w.p. 2/3 and r_0 = 0."""
    p = torch.tensor([[[0.3, 0.7], [0.3, 0.7]]]).expand(64, -1, -1)
    q = torch.tensor([[[0.9, 0.7]]]).expand(64, -1, -1)
    drafts = torch.zeros(64, 1, dtype=torch.long)
    result = block_accept_reject(p, q, drafts, torch.Generator().manual_seed(0))
    assert result.zero_residual == int((result.n_accepted == 0).sum()) > 0
    assert set(result.next_token.tolist()) <= {0, 1}  # drawn from p_0, not from a 0/0 residual


def test_shapes_are_checked():
    p, q, drafts = _random_block(3, 2, 3, 5, one_hot=False)
    with pytest.raises(ValueError, match="q has shape"):
        block_accept_reject(p, q[:, :, :4], drafts, torch.Generator())
    with pytest.raises(ValueError, match="p has shape"):
        block_accept_reject(p[:, :3], q, drafts, torch.Generator())


# --- whole speculative runs on a tiny model -------------------------------------------------------

V = 6
N = 20_000


def _three_token_law(target, prompt) -> Law:
    """P(x1, x2, x3) = p(x1) p(x2 | x1) p(x3 | x1 x2), from one batched forward over every prefix."""
    rows = [list(prompt)] + [list(prompt) + [a] for a in range(V)] + [list(prompt) + [a, b] for a in range(V) for b in range(V)]
    width = max(map(len, rows))
    ids = torch.tensor([r + [0] * (width - len(r)) for r in rows])
    with torch.no_grad():
        logits = target(input_ids=ids).logits
    probs = [torch.softmax(logits[i, len(r) - 1].double(), -1) for i, r in enumerate(rows)]
    p1, p2, p3 = probs[0], probs[1 : 1 + V], probs[1 + V :]
    weights = {(a, b, c): Fraction(float(p1[a])) * Fraction(float(p2[a][b])) * Fraction(float(p3[a * V + b][c]))
               for a in range(V) for b in range(V) for c in range(V)}
    return Law.from_weights(weights, name="three-token target law")


@pytest.fixture(scope="module")
def world():
    target = tiny_llama(0, vocab_size=V, sharpness=3.0)
    return target, noisy_copy(target, 0.6, 1)


def _with_law_p(p, q, drafts, generator, lengths=None):
    """Negative control: block verification that resamples from p_tau instead of norm(r_tau)."""
    result = block_accept_reject(p, q, drafts, generator, lengths)
    rows = torch.arange(p.shape[0])
    nxt = Draws.of(generator, p.shape[0]).categorical(p[rows, result.n_accepted])
    return AcceptReject(result.n_accepted, nxt, result.accept_probability, result.zero_residual_rows)


@pytest.mark.no_float_paths  # sampled histograms / the bench's shape, no float comparison of two paths
@pytest.mark.parametrize("kind", ["model", "lookup"])
def test_block_verified_runs_sample_the_exact_three_token_law_and_a_lossy_control_does_not(world, kind):
    """N = 20000 runs, gamma = 3, V = 6 (216 cells): the G-test at level 1e-6 detects TV >= detectable_tv
    (asserted < 0.06) with probability 0.99; the control that resamples from p instead of the block
    residual moves the law by more and must be rejected at the same N. Prompt lookup (one-hot q) proposes
    0-3 tokens depending on the row's sampled tokens, so rows of one batch verify blocks of different lengths."""
    target, model = world
    draft = PromptLookupDraft() if kind == "lookup" else model
    prompt = [1, 2, 3, 1, 2, 4, 1] if kind == "lookup" else [1, 2, 3]
    law = _three_token_law(target, prompt)
    block = DecodeOptions(gamma=3, verify="block")
    good = sample_prefixes(target, draft, prompt, N, 3, block, batch_size=N)
    check = histogram_check("first three tokens", good, law)
    assert check.detectable_tv < 0.06, f"N too small: detects only TV >= {check.detectable_tv:.3f}"
    assert check.p_value > 1e-6, f"G={check.statistic:.1f} p={check.p_value:.2e}"
    bad = sample_prefixes(target, draft, prompt, N, 3, block.replace(seed=1), accept_reject=_with_law_p, batch_size=N)
    assert histogram_check("control", bad, law).p_value < 1e-6, "the lossy control was not detected"


def test_block_verification_accepts_more_than_token_wise_on_the_same_paths(world):
    """E[accepted | drafted path] from h (block) and from the min(1, p/q) products (token-wise), averaged over
    the 4000 paths one round of the decoder drafts (gamma = 4): block ahead by more than 4 paired standard errors."""
    target, draft = world
    seen = []

    def recording(p, q, drafts, generator, lengths=None):
        seen.append((p, q, drafts))
        return accept_reject(p, q, drafts, generator, lengths)

    speculative_generate(target, draft, [[1, 2, 3]] * 4000, 1, DecodeOptions(gamma=4), accept_reject=recording)
    (p, q, drafts), = seen  # one round: every row emits at least its one token
    token_wise, block = expected_accepted(p, q, drafts)
    gain = block - token_wise
    assert float(gain.mean()) > 4 * float(gain.std()) / len(gain) ** 0.5, (float(block.mean()), float(token_wise.mean()))


def test_greedy_block_verified_decoding_equals_plain_greedy(world):
    """T = 0: p is one-hot, every weight is 0 or 1, and the output is the target's argmax chain."""
    target, draft = world
    prompts = [[1, 2, 3], [4, 0, 5, 1]]
    plain = plain_generate(target, prompts, 12, DecodeOptions(sampling=SamplingOptions(0.0), seed=0))
    spec = speculative_generate(target, draft, prompts, 12, DecodeOptions(gamma=3, sampling=SamplingOptions(0.0), seed=0, verify="block"))
    assert spec.tokens == plain.tokens


@pytest.mark.no_float_paths  # sampled histograms / the bench's shape, no float comparison of two paths
def test_bench_pair_runs_the_named_verifier_everywhere_a_round_runs(world, monkeypatch):
    """``verify="block"`` reaches the timed runs, the gamma calibration and the o_round timing; the JSON names it."""
    from lm_tiny import tiny_pair

    from specmath.lm import block_verify
    from specmath.lm.bench import bench_pair
    from specmath.lm.drafts import ModelDraft

    target, model = world
    pair = tiny_pair(target, ModelDraft(model))
    calls = []

    def counting(*args, **kwargs):
        calls.append(1)
        return block_accept_reject(*args, **kwargs)

    monkeypatch.setitem(block_verify.VERIFIERS, "block", counting)
    r = bench_pair(pair, None, 8, DecodeOptions(sampling=SamplingOptions(0.0), verify="block"), calibrate_gamma=True,
                   progress=False, hf=False).to_json()
    assert r["verify"] == "block" and r["decode_options"] == {}
    assert r["new_tokens"]["plain"] == r["new_tokens"]["speculative"] == 8  # greedy: the same tokens
    assert len(calls) > 10  # calibration run, warm-up, timed run, o_round repeats
    with pytest.raises(ValueError, match="unknown verifier 'tree'"):
        DecodeOptions(verify="tree")


def test_the_verifier_registry_is_keyed_by_the_command_lines_choices():
    from specmath.choices import VERIFY
    from specmath.lm.block_verify import VERIFIERS, verifier

    assert tuple(VERIFIERS) == VERIFY
    assert verifier("token") is accept_reject and verifier("block") is block_accept_reject
    with pytest.raises(ValueError, match="did you mean 'block'"):
        verifier("blocks")
