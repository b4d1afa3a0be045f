"""The audit of one speculative round: any sampler with the adapter interface, against the round's exact law.

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)).

Modules, one idea each:

* ``adapters``  the interface (target_probs, draft_probs, draft_tokens, generator) -> tokens, one round per
                call or batched ([N, gamma+1, V] ... -> [N, gamma+1], -1 padded), and the built-in adapters
* ``cases``     the battery of (p, q, gamma) and the exact law of the whole round for each
* ``drafts``    the auditor's drafts for many rounds at once, and fresh arrays for each call
* ``output``    a sampler's output read strictly (invalid output is an error, not a loss)
* ``calls``     one call of the sampler: fresh inputs, writes into them noticed, errors named
* ``probes``    the edge probes: which draw is 0 or just below 1, and what the sampler must emit
* ``replay``    the sampler's own torch draws fed to the exact algorithm, token by token
* ``runner``    the audit loop; ``report`` the table, what points at a bug, and JSON (``specmath audit ADAPTER``)
"""
