"""The bug zoo: lossy variants of speculative decoding, each with its exact TV and its source.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

``BUGS`` maps a name to a ``Bug`` (``specmath.bugzoo.zoo``) with its smallest instance, the exact
law of generation with the variant, the target law, the exact TV distance between them, a one-line
explanation, its source, and a float reference ``sample_round(target_probs, draft_probs,
draft_tokens, rng)`` for auditing engines: the correct float round of ``specmath.speculative.reference_round``
with one block swapped. The correct algorithm has TV exactly 0 on every instance.

An entry's source is a dated claim about an engine (``specmath.bugzoo.claims``: the version or commit
checked, the date, the status and the evidence), so the zoo holds engine bugs (open, latent, or seen
upstream), rules that engines document as lossy by design, and bugs since fixed upstream; or, for a
variant that no engine is claimed to have, the code path it is modelled on (``Bug.modelled_on``).

Each module exports a tuple of its entries and ``BUGS`` joins them here (importing a module adds
nothing anywhere): ``logit_bugs.LOGIT_BUGS`` (which law is handed to the accept/reject step),
``position_bugs.POSITION_BUGS`` (which position's law is used, and the uniforms),
``rule_bugs.RULE_BUGS`` (the accept/resample rule). ``TREE_BUGS`` (``tree_bugs``) holds the lossy
token-tree verifiers; their float samplers take batched trees, not chains, so they stay out of ``BUGS``.

Layer 3 (proofs and zoo) of the layers in docs/explanation/architecture.md: imports the core and the
samplers (numpy and Fractions), never torch; torch's lossy controls live in ``specmath.lm.lossy_controls``.
"""

from specmath.bugzoo.logit_bugs import LOGIT_BUGS
from specmath.bugzoo.position_bugs import POSITION_BUGS
from specmath.bugzoo.rule_bugs import RULE_BUGS
from specmath.bugzoo.tree_bugs import TREE_BUGS
from specmath.bugzoo.zoo import Bug, Instance, bugs_by_name

#: every entry of the zoo, by name
BUGS: dict[str, Bug] = bugs_by_name(LOGIT_BUGS, POSITION_BUGS, RULE_BUGS)

__all__ = ["BUGS", "Bug", "Instance", "TREE_BUGS"]
