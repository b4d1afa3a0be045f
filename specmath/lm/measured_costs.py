"""What ``cost_measure.measure_costs`` found for one pair on this machine, and the speedup model's costs from it.

Notation: gamma = draft tokens per round, t_1 = one cached target pass over 1 token (the unit of every
ratio). The record holds seconds; its methods give the ratios of the model (k(gamma), c, o_round,
o_plain, see ``cost_measure``) and the ``theory.RoundCosts`` that ``theory.cost_model_speedup`` takes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from specmath.theory import RoundCosts

__all__ = ["Costs"]


@dataclass(frozen=True)
class Costs:
    """Measured costs of one target/draft pair on this machine (seconds), and the ratios of the model."""

    t1: float  # one cached target pass over 1 token
    passes: Mapping[int, float]  # n -> target pass over n tokens, in a round (after the draft)
    rollback: Mapping[int, float]  # n -> rolling the target cache back after a pass over n tokens
    draft_round: Mapping[int, float]  # gamma -> one propose of gamma tokens + rollback
    round_extra: Mapping[int, float]  # gamma -> warps, accept/reject, the round's bookkeeping and host read
    plain_extra: float  # a plain step besides its pass
    context: int  # KV cache length the costs were measured at
    alone: Mapping[int, float]  # n -> target pass over n tokens, the target alone (no draft work in between)

    def k(self, gamma: int) -> float:
        """k(gamma) = verify pass over gamma + 1 tokens (in a round, after the draft) / plain pass over 1 token."""
        return self.passes[gamma + 1] / self.t1

    def k_alone(self, gamma: int) -> float:
        """The same ratio with the target alone: what the hardware's GEMMs cost, without cache interference."""
        return self.alone[gamma + 1] / self.alone[1]

    def c(self, gamma: int) -> float:
        """c = draft time per drafted token / t_1 (the draft's forwards, warps, sampling and rollback)."""
        return self.draft_round[gamma] / (gamma * self.t1)

    def o_round(self, gamma: int) -> float:
        """o_round(gamma) = (the round's work besides the passes + the target's rollback) / t_1."""
        return (self.round_extra[gamma] + self.rollback[gamma + 1]) / self.t1

    @property
    def o_plain(self) -> float:
        """o_plain = a plain step's work besides its pass / t_1."""
        return self.plain_extra / self.t1

    def model(self, gamma: int, *, prefill: float = 0.0, draft_prefill: float = 0.0) -> RoundCosts:
        """The model's costs for a draft that proposes gamma tokens every round."""
        return RoundCosts(self.c(gamma), self.k(gamma), self.o_round(gamma), self.o_plain, prefill, draft_prefill)

    def model_of_rounds(self, width_hist: Sequence[int], draft_steps_per_round: float, gamma: int, *,
                        prefill: float = 0.0, draft_prefill: float = 0.0) -> RoundCosts:
        """The model's costs for the rounds as they ran (an adaptive draft verifies g <= gamma drafts).

        A round verifying g drafts pays k(g) and o_round(g) (g = 0: a plain step, 1 + o_plain), averaged
        over ``width_hist`` (rounds by g); the draft pays c(gamma) per draft step it made (c(gamma) is one
        proposal of gamma tokens, gamma steps, divided by gamma), spread over the gamma positions.
        """
        rounds = sum(width_hist)
        used = [(g, n) for g, n in enumerate(width_hist) if n]
        k = sum(n * (self.k(g) if g else 1.0) for g, n in used) / rounds
        o_round = sum(n * (self.o_round(g) if g else self.o_plain) for g, n in used) / rounds
        c = self.c(gamma) * draft_steps_per_round / gamma
        return RoundCosts(c, k, o_round, self.o_plain, prefill, draft_prefill)

    def to_json(self, gammas: Sequence[int]) -> dict:
        """The ratios for ``gammas`` (JSON keys: context_tokens, target_1_token_s, k, k_alone, c, o_round, o_plain)."""
        return {
            "context_tokens": self.context,
            "target_1_token_s": self.t1,
            "k": {g: self.k(g) for g in gammas},
            "k_alone": {g: self.k_alone(g) for g in gammas},
            "c": {g: self.c(g) for g in gammas},
            "o_round": {g: self.o_round(g) for g in gammas},
            "o_plain": self.o_plain,
        }
