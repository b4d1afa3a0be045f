"""Speculative sampling, exactly: one step (this package's ``step``) and, built on it, whole rounds.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).
"""

from .step import Rule, acceptance_rate, residual_law, speculative_step, standard_rule, step_law

__all__ = ["Rule", "acceptance_rate", "residual_law", "speculative_step", "standard_rule", "step_law"]
