"""The work after a compiled pass as one graph (``round_graph``): the same tokens and counters as the eager step.

``round_steps`` and ``plain_sample`` are run here as plain functions (the compiled decoders run them under
``torch.compile``, tested in test_compiled_decoders.py): in float64, for the same seed, they must give
exactly the tokens, accepted counts and flags of ``accept_reject`` + ``read_round`` and of ``Draws.categorical``,
because they consume the same draws in the same order and take the draw as torch.multinomial's own one-sample
form argmax(law / Exp(1) noise). Only alpha_sum, a float counter, is summed in another order (masked by
``where`` rather than indexed), so it is compared to 1e-12 relative.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from specmath.lm import round_graph, speculative_decode  # noqa: E402
from specmath.lm.accept_reject import accept_reject  # noqa: E402
from specmath.lm.drafts import Proposal  # noqa: E402
from specmath.lm.generation import Draws  # noqa: E402
from specmath.lm.lossy_controls import TORCH_CONTROLS  # noqa: E402
from specmath.lm.plain_decode import plain_step  # noqa: E402
from specmath.lm.round_bookkeeping import RoundRecord  # noqa: E402
from specmath.lm.speculative_decode import verify_round  # noqa: E402
from specmath.lm.warps import warp  # noqa: E402
from specmath.sampling_options import SamplingOptions  # noqa: E402

V = 12
SAMPLINGS = [SamplingOptions(), SamplingOptions(temperature=0.7, top_k=5), SamplingOptions(top_p=0.8),
             SamplingOptions(temperature=0.0)]


def _draws(seed: int, batch: int, per_row: bool) -> Draws:
    return Draws.from_seed([seed + b for b in range(batch)] if per_row else seed, batch, "cpu")


def _proposal(batch: int, g: int, lengths: list[int], one_hot: bool, seed: int) -> tuple[torch.Tensor, Proposal]:
    gen = torch.Generator().manual_seed(seed)
    logits = 2 * torch.randn(batch, g + 1, V, generator=gen, dtype=torch.float64)
    q = torch.softmax(2 * torch.randn(batch, g, V, generator=gen, dtype=torch.float64), -1)
    # drafts from near the target's likely tokens, so that rounds accept some and reject some
    tokens = torch.zeros(batch, g, dtype=torch.long)
    if g:
        likely = torch.softmax(logits[:, :g].reshape(-1, V), -1)
        tokens = torch.multinomial(likely, 1, generator=gen).reshape(batch, g)
    for b, n in enumerate(lengths):
        tokens[b, n:] = 0
    return logits, Proposal(tokens, lengths, torch.tensor(lengths), None if one_hot else q)


def _graph_round(logits, proposal, sampling, draws):
    """``compiled_round`` with ``round_steps`` called as a plain function (no compiling)."""
    original = round_graph.compiled
    round_graph.compiled = lambda function, device_kind: function
    try:
        return round_graph.compiled_round(logits, proposal, sampling, draws)
    finally:
        round_graph.compiled = original


def _same_record(a: RoundRecord, b: RoundRecord) -> None:
    assert a.alpha_sum == pytest.approx(b.alpha_sum, rel=1e-12, abs=1e-300)
    assert {**vars(a), "alpha_sum": 0} == {**vars(b), "alpha_sum": 0}


@pytest.mark.parametrize("sampling", SAMPLINGS, ids=str)
@pytest.mark.parametrize("one_hot", [False, True], ids=["model draft", "one-hot draft"])
@pytest.mark.parametrize("per_row", [False, True], ids=["shared generator", "per-row generators"])
@pytest.mark.parametrize("lengths", [[3, 3, 3], [3, 1, 0], [0, 0, 0]], ids=["full", "ragged", "no drafts"])
def test_the_graph_round_gives_the_eager_rounds_tokens_and_counters(sampling, one_hot, per_row, lengths):
    for seed in range(6):
        logits, proposal = _proposal(3, max(lengths), lengths, one_hot, seed)
        eager_result, eager = verify_round(logits, proposal, sampling, accept_reject, _draws(seed, 3, per_row))
        graph_result, graph = _graph_round(logits, proposal, sampling, _draws(seed, 3, per_row))
        _same_record(graph, eager)
        assert torch.equal(graph_result.accept_probability, eager_result.accept_probability)


def test_the_graph_round_flags_invalid_logits_and_an_invalid_draft():
    logits, proposal = _proposal(2, 2, [2, 2], False, 0)
    logits[1, 0, 3] = float("nan")
    _, record = _graph_round(logits, proposal, SamplingOptions(), _draws(0, 2, False))
    assert not record.logits_ok and record.draft_ok
    flagged = Proposal(proposal.tokens, proposal.lengths, proposal.length_tensor, proposal.q, torch.tensor(False))
    _, record = _graph_round(_proposal(2, 2, [2, 2], False, 0)[0], flagged, SamplingOptions(), _draws(0, 2, False))
    assert record.logits_ok and not record.draft_ok


@pytest.mark.parametrize("per_row", [False, True], ids=["shared generator", "per-row generators"])
def test_the_graph_plain_step_draws_the_eager_token(per_row):
    logits = 3 * torch.randn(4, V, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    for sampling in SAMPLINGS:
        eager_draws, graph_draws = _draws(7, 4, per_row), _draws(7, 4, per_row)
        for _ in range(20):
            expected = eager_draws.categorical(warp(logits, sampling))
            noise = graph_draws.categorical_noise(4, V, torch.float64)
            x, flat = round_graph.plain_sample(logits, noise, sampling)
            assert torch.equal(x, expected)
            assert flat.tolist() == [*map(float, expected.tolist()), 1.0]


def test_only_the_token_by_token_step_is_compiled_and_an_injected_step_stays_eager(monkeypatch):
    """A lossy control passed as ``accept_reject`` must run as given, compiled decoder or not."""
    calls = []
    monkeypatch.setattr(speculative_decode, "compiled_round", lambda *args: calls.append("graph") or _graph_round(*args))
    logits, proposal = _proposal(2, 2, [2, 2], False, 0)
    verify_round(logits, proposal, SamplingOptions(), accept_reject, _draws(0, 2, False), compiled=True)
    assert calls == ["graph"]
    for control in TORCH_CONTROLS.values():
        verify_round(logits, proposal, SamplingOptions(), control, _draws(0, 2, False), compiled=True)
    assert calls == ["graph"]
    verify_round(logits, proposal, SamplingOptions(), accept_reject, _draws(0, 2, False), compiled=False)
    assert calls == ["graph"]


def test_the_compiled_plain_step_reads_the_tokens_it_returns(monkeypatch):
    monkeypatch.setattr(round_graph, "compiled", lambda function, device_kind: function)
    logits = torch.randn(3, V, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    x, step = plain_step(logits, SamplingOptions(), _draws(3, 3, True), compiled=True)
    expected, eager = plain_step(logits, SamplingOptions(), _draws(3, 3, True))
    assert torch.equal(x, expected) and step == eager and step.logits_ok
