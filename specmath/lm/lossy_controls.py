"""Lossy accept/reject steps for torch: the negative controls of the histogram test and the audit.

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)).

Each control has the signature of ``specmath.lm.accept_reject.accept_reject`` and reuses its
accept step (``accept_prefix``) and its rejection laws (``rejection_laws``); only the law a rejected
row resamples from is wrong. They are *injected* where a test must show that it can fail
(``speculative_generate(..., accept_reject=...)``, ``histogram.lossless_report(control=...)``, the
audit's adapters); the production sampler has no switch that selects them.

* ``residual_softmax_accept_reject``: softmax(max(0, p - q)) instead of max(0, p - q) / (1 - alpha)
  (the bug-zoo rule "residual-softmax"): a rejected row redraws nearly uniformly over the vocabulary.
* ``target_resample_accept_reject``: resample from p instead of the residual; the first emitted
  token then has law min(p, q) + (1 - alpha) p != p unless p == q.
"""

from __future__ import annotations

import torch

from specmath.lm.accept_reject import AcceptReject, accept_prefix, check_block_shapes, rejection_laws
from specmath.lm.generation import Draws

__all__ = ["residual_softmax_accept_reject", "target_resample_accept_reject", "TORCH_CONTROLS"]


def _with_resample_law(resample, p, q, drafts, generator, lengths=None) -> AcceptReject:
    check_block_shapes(p, q, drafts, lengths)
    draws = Draws.of(generator, drafts.shape[0])
    n_accepted, accept_probability = accept_prefix(p, q, drafts, draws, lengths)
    p_n, residual, rejected = rejection_laws(p, q, drafts, n_accepted, lengths)
    law = torch.where(rejected.unsqueeze(-1), resample(p_n, residual), p_n)
    return AcceptReject(n_accepted, draws.categorical(law), accept_probability, torch.zeros_like(rejected))


def residual_softmax_accept_reject(p, q, drafts, generator, lengths=None) -> AcceptReject:
    """Lossy: after a rejection, y ~ softmax(max(0, p - q)) (the bug) instead of norm(max(0, p - q))."""
    return _with_resample_law(lambda p_n, residual: torch.softmax(residual, -1), p, q, drafts, generator, lengths)


def target_resample_accept_reject(p, q, drafts, generator, lengths=None) -> AcceptReject:
    """Lossy: after a rejection, y ~ p (the target law) instead of norm(max(0, p - q))."""
    return _with_resample_law(lambda p_n, residual: p_n, p, q, drafts, generator, lengths)


#: name -> lossy accept/reject step, for the histogram test's ``control=`` and the audit
TORCH_CONTROLS = {
    "residual-softmax": residual_softmax_accept_reject,
    "target": target_resample_accept_reject,
}
