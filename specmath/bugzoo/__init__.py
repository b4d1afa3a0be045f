"""The bug zoo: lossy variants of speculative decoding, each modelled on a bug in a real engine.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

``BUGS`` maps a name to a ``Bug`` (``specmath.bugzoo.zoo``) with its smallest instance, the exact
law of generation with the bug, the target law, the exact TV distance between them, a one-line
explanation, the citation, and a float reference ``sample_round(target_probs, draft_probs,
draft_tokens, rng)`` for auditing engines. The correct algorithm has TV exactly 0 on every instance.

Modules: ``rules`` (the accept/resample rule), ``logits`` (which law is handed to the verifier),
``positions`` (which position's law is used, and the uniforms).
"""

from specmath.bugzoo import logit_bugs, position_bugs, rule_bugs  # noqa: F401  (each registers its entries)
from specmath.bugzoo.numpy_reference import numpy_round, reference_sample_round
from specmath.bugzoo.zoo import BUGS, Bug, Instance

__all__ = ["BUGS", "Bug", "Instance", "numpy_round", "reference_sample_round"]
