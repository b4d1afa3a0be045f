"""The audit of a token-tree verifier: drafted trees (parent indices), completed rounds, the exact law.

Notation: p = target law, q = draft law, gamma = the tree's nodes, d = its depth.

Modules, mirroring the round audit they build on (``specmath.audit.rounds``):

* ``adapters``  the tree interface (target_probs, draft_probs, draft_tokens, parents, generator) and the
                built-in tree samplers
* ``cases``     the tree battery and the exact law of each completed round
* ``drafts``    the auditor's trees, drafted as the adapter's ``children`` says
* ``output``    a tree sampler's output read strictly (the emitted path must be a path of the tree)
* ``runner``    the audit loop (``specmath audit --tree``)
"""
