"""Speculative sampling, exactly: one step (this package's ``step``) and, built on it, whole rounds.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

Layer 2 (samplers) of the layers in docs/explanation/architecture.md: imports only the core.
"""

from specmath.speculative.costs import expected_round_tokens, expected_target_passes, target_passes_per_token
from specmath.speculative.generate import (
    autoregressive_generation,
    autoregressive_law,
    completed_round_law,
    generate_law,
    speculative_generation,
)
from specmath.speculative.round import accept_block, draft_block, round_law, speculative_round
from specmath.speculative.round_prover import RoundProof, prove_round
from specmath.speculative.rule_check import RuleReport, verify_rule
from specmath.speculative.step import Rule, acceptance_rate, residual_law, speculative_step, standard_rule, step_law

__all__ = ["Rule", "acceptance_rate", "residual_law", "speculative_step", "standard_rule", "step_law"]
__all__ += ["draft_block", "accept_block", "speculative_round", "round_law"]
__all__ += [
    "autoregressive_generation",
    "autoregressive_law",
    "completed_round_law",
    "generate_law",
    "speculative_generation",
]
__all__ += ["expected_round_tokens", "expected_target_passes", "target_passes_per_token"]
__all__ += ["RuleReport", "verify_rule"]
__all__ += ["RoundProof", "prove_round"]
