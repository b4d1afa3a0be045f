"""Speculative sampling, exactly: one step (this package's ``step``) and, built on it, whole rounds.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).
"""

from .costs import expected_round_tokens, expected_target_passes, target_passes_per_token
from .generate import (
    autoregressive_generation,
    autoregressive_law,
    completed_round_law,
    generate_law,
    speculative_generation,
)
from .round import draft_block, round_law, speculative_round, verify_block
from .round_proof import RoundProof, prove_round
from .rules import RuleReport, verify_rule
from .step import Rule, acceptance_rate, residual_law, speculative_step, standard_rule, step_law

__all__ = ["Rule", "acceptance_rate", "residual_law", "speculative_step", "standard_rule", "step_law"]
__all__ += ["draft_block", "verify_block", "speculative_round", "round_law"]
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
