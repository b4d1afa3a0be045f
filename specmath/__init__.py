"""specmath: prove exactly that speculative decoding (and its classic cousins) is lossless.

Notation everywhere: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

Layer 1 (core) of the layers in docs/explanation/architecture.md: the modules at the top of the package
(laws, validation, program, driver, exact, ...) import only one another, never a package below.

What is public: a package's docstring and ``__all__`` name its public API, and every module is public
unless its docstring's first line starts with "Internal:" (a package so marked is internal with all
its modules: ``specmath.commands``, ``specmath.course``, ``specmath.plots``, ``specmath.explorers``).
The reference documents the public modules, the internals page the others
(``tests/docs/test_reference_api.py``).
"""

from specmath.exact import ExactResult, Limits, NotExactError, exact, exact_paths, exact_symbolic
from specmath.laws import Law, LawError, check_same_vocabulary, difference_table, point, tv_distance, uniform
from specmath.program import RESTART, Recur, coin, die, draw, tick
from specmath.sampled import sample, sample_many, sample_with_costs
from specmath.source_view import show

__version__ = "0.1.0"

__all__ = [
    "ExactResult", "Limits", "NotExactError", "exact", "exact_paths", "exact_symbolic",
    "Law", "LawError", "check_same_vocabulary", "difference_table", "point", "tv_distance", "uniform",
    "RESTART", "Recur", "coin", "die", "draw", "tick",
    "sample", "sample_many", "sample_with_costs",
    "show",
]
