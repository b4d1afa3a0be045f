"""Exact replay: feed the draws a torch sampler used to the exact algorithm, compare token by token.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)); p_i, q_i are the exact (Fraction) laws at position i.

A sampler with a known ``DrawProtocol`` consumes, per round, ``torch.rand(gamma)`` (u_1..u_gamma)
and then one ``torch.multinomial`` of one sample, which on CPU is the exponential race
argmax_y law(y) / E_y with E = exponential_(V) (checked in the tests). From the generator state
saved before the call, the replay regenerates the same u and E and runs the exact round:

    accept x_i  iff  u_i < p_i(x_i) / q_i(x_i)          (Fractions; u_i converted exactly)
    first rejection at n: law = max(0, p_n - q_n) / (1 - alpha_n);  all accepted: law = p_gamma
    emitted token y = argmax_y law(y) / E_y             (exact ratios; first index wins ties)

A correct float sampler agrees except when a draw lies within rounding of a decision boundary
(|u_i - p_i/q_i| or the race's top two ratios within relative 1e-5): such disagreements are
reported as ``rounding``, every other one as a ``mismatch`` (a failure), with the case, the round
and the draws.

Reference: PyTorch ``multinomial`` (aten/src/ATen/native/Distributions.cpp: for one sample without
replacement it computes argmax(p / q) with q ~ Exp(1)).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from fractions import Fraction

from specmath.audit.rounds.adapters import DrawProtocol
from specmath.laws import Law
from specmath.speculative.step import residual_law

__all__ = ["ReplayOutcome", "replay_round", "record_replay", "ROUNDING_MARGIN"]

#: decisions closer than this (relative) to a boundary may legitimately flip in float arithmetic
ROUNDING_MARGIN = 1e-5


@dataclass(frozen=True)
class ReplayOutcome:
    """One replayed round: what the exact algorithm emits with the sampler's own draws."""

    expected: tuple
    emitted: tuple
    uniforms: tuple  # the u_i as floats
    margin: float  # smallest relative distance of a decision from its boundary

    @property
    def agrees(self) -> bool:
        return self.expected == self.emitted

    @property
    def kind(self) -> str:
        """"match", "rounding" (disagreement within float rounding of a boundary) or "mismatch"."""
        if self.agrees:
            return "match"
        return "rounding" if self.margin < ROUNDING_MARGIN else "mismatch"

    def to_json(self) -> dict:
        return {**asdict(self), "kind": self.kind}


def replay_round(state, draws: DrawProtocol, p_laws: list[Law], q_laws: list[Law], tokens: tuple, emitted: tuple) -> ReplayOutcome:
    """Replay one round from generator ``state`` (``torch.Generator.get_state()`` before the call).

    ``p_laws`` are the gamma + 1 exact target laws (w(p) for a warped adapter), ``q_laws`` the gamma
    draft laws the tokens were drawn from, over tokens 0..V-1.
    """
    import torch

    g = torch.Generator()
    g.set_state(state)
    gamma = len(tokens)
    u = torch.rand(gamma, generator=g, dtype=getattr(torch, draws.uniform_dtype)).tolist()
    margin = float("inf")
    law = p_laws[gamma]
    accepted: tuple = ()
    for i, x in enumerate(tokens):
        p, q = p_laws[i], q_laws[i]
        ratio = p[x] / q[x]
        ui = Fraction(u[i])
        if ratio > 0:
            # a float ratio p/q is off by ~1e-16 (float64) or ~1e-7 (float32) relative: near-ties may flip
            margin = min(margin, abs(float(ui - ratio)) / float(ratio))
        # accept x_i with probability min(1, p_i(x_i) / q_i(x_i)):  u_i < p_i(x_i) / q_i(x_i)
        if not ui < ratio:
            law = residual_law(p, q)
            break
        accepted += (x,)
    vocab = len(p_laws[0])
    exponentials = torch.empty(vocab, dtype=getattr(torch, draws.law_dtype)).exponential_(generator=g).tolist()
    # the exponential race: argmax_y law(y) / E_y has law ``law`` exactly (E_y ~ Exp(1) independent)
    scores = [(law[y] / Fraction(e) if e > 0 else Fraction(10**400), -y) for y, e in enumerate(exponentials) if law[y] > 0]
    scores.sort(reverse=True)
    best = -scores[0][1]
    if len(scores) > 1:
        margin = min(margin, float((scores[0][0] - scores[1][0]) / scores[0][0]))
    return ReplayOutcome(accepted + (best,), tuple(emitted), tuple(u), margin)


def record_replay(result, case, adapter, state, tokens: tuple, emitted: tuple, where: str) -> None:
    """Replay one round of ``adapter`` on ``case`` and record it in ``result`` (``replays``, and the first
    five mismatches in ``replay_failures`` with the drafts and uniforms; later ones briefly)."""
    target, draft = case.models(adapter.warp)
    p_laws = [target(tokens[:i]) for i in range(len(tokens) + 1)]
    q_laws = [draft(tokens[:i]) for i in range(len(tokens))]
    outcome = replay_round(state, adapter.draws, p_laws, q_laws, tokens, emitted)
    result.replays.append(outcome)
    if outcome.kind == "mismatch" and len(result.replay_failures) < 5:
        result.replay_failures.append({"where": where, "drafts": list(tokens), "uniforms": list(outcome.uniforms),
                                       "expected": list(outcome.expected), "emitted": list(emitted)})
    elif outcome.kind == "mismatch":
        result.replay_failures.append({"where": where, "expected": list(outcome.expected), "emitted": list(emitted)})
