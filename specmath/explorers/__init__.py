"""Internal: specmath.explorers: the computations behind the course's interactive explorers (notebook 08).

Notation as everywhere in specmath: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)) (Leviathan et al. 2023; Chen et al. 2023 swap the names p and q).

Each explorer is a pure function from the widget's inputs to a small frozen view, tested like the
rest of the library; ``widgets`` only wires ipywidgets sliders to these functions and prints the view.

* ``two_token``   p(A), q(A) -> acceptance per token, alpha, residual, the path table, the output law
* ``rand``        method, a, b -> the exact law of rand_a -> rand_b and its exact expected die calls
* ``rounds``      alpha, gamma, c -> expected tokens per round, speedup, the best gamma
* ``model_step``  (torch) a prompt through a real target/draft pair -> p, q bars, acceptance per draft token

Layer 5 (audits and views) of the layers in docs/explanation/architecture.md: imports the layers
before it (``model_step`` imports ``specmath.lm`` and torch when it runs).
"""

from specmath.explorers.rand_explorer import METHODS, RandView, rand_view
from specmath.explorers.round_explorer import RoundView, round_view
from specmath.explorers.step_explorer import TwoTokenView, two_token_view

__all__ = ["two_token_view", "TwoTokenView", "rand_view", "RandView", "METHODS", "round_view", "RoundView"]
