"""How a token tree is verified at one node: pick one of the node's children, or stop with a final token.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)). Here p = p(. | prefix, path to the node), q = q(. | the same), and
the node's children x_1..x_k are the draft's proposals for the next token.

A *verifier* is a sampling program ``verifier(p, q, children)`` returning the index j of the child
it accepts (the walk goes on below x_j) or ``Final(y)`` (the round ends with token y). The walk over
the tree, the bonus token at a leaf and the laws of repeated rounds are ``specmath.speculative.tree``.
Each rule below emits a token of law p at the node exactly when the children are drawn the way it
assumes; its record in ``specmath.speculative.tree_registry`` says which way (proved by
``specmath verify tree-*`` and the tests):

* ``specinfer_verifier``: multi-step speculative sampling (SpecInfer, Miao et al. 2024). With
  p^(1) = p: accept x_j with min(1, p^(j)(x_j) / q(x_j)), else p^(j+1) = norm(max(0, p^(j) - q));
  all rejected: y ~ p^(k+1). Each stage is a standard step towards p^(j) with a *fresh independent*
  proposal x_j ~ q, so it needs i.i.d. children; for top-k children (no randomness) it is lossy.
* ``without_replacement_verifier``: recursive rejection sampling without replacement (Jeon et al.
  2024, RSD). Children x_1, x_2, ... are drawn from q without replacement, so x_j ~ q_j =
  q restricted to the tokens not drawn yet, renormalised; stage j is a standard step of p^(j)
  against q_j, p^(j+1) = norm(max(0, p^(j) - q_j)). A rejected x_j has p^(j)(x_j) < q_j(x_j), so
  p^(j+1)(x_j) = 0 and no later stage needs it: the law at the node is p.
* ``target_only_verifier``: SGLang's ``tree_speculative_sampling_target_only`` kernel (the rule
  behind its EAGLE-2/3 trees at temperature > 0). One uniform u per node; child j is accepted when
  u <= p(x_1) + ... + p(x_j) for the first such j; when u is above the whole sum, the final token is
  drawn from p with the children removed (the kernel's relu(p - q') with q' = p on the rejected
  children and 0 elsewhere). For *distinct* children this is "draw y ~ p; keep the child equal to y":
  lossless whatever the children are, top-k included; the draft law q is never read. With a repeated
  child the running sum counts p(x) twice, so P(x) = min(1, 2 p(x)) at the first level: i.i.d.
  children (which repeat) are lossy under this kernel. The kernel's final token uses a second uniform
  per request: after a rejection it comes from p without the rejected children; at a leaf (or at the
  depth limit) draft_probs is zero at that node, so relu(p - 0) = p gives the bonus token. Its
  server options speculative_accept_threshold_single / _acc (default 1) accept more when below 1,
  which is lossy; the rule here is the default.

References: X. Miao et al., "SpecInfer", ASPLOS 2024 (arXiv 2305.09781), Algorithm 2 and Theorem 4.2;
W. Jeon et al., "Recursive Speculative Decoding: Accelerating LLM Inference via Sampling Without
Replacement", 2024 (arXiv 2402.14160); sgl-project/sglang, sgl-kernel/csrc/speculative/
speculative_sampling.cuh (TreeSpeculativeSamplingTargetOnly), called from
python/sglang/srt/speculative/eagle_info.py with draft_probs = zeros.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from fractions import Fraction

from specmath.laws import Law, LawError
from specmath.program import coin, draw
from specmath.speculative.step import standard_rule

__all__ = [
    "Final",
    "TreeVerifier",
    "law_without",
    "recursive_rejection",
    "specinfer_verifier",
    "without_replacement_verifier",
    "target_only_verifier",
]


@dataclass(frozen=True)
class Final:
    """A verifier's verdict that ends the round: emit ``token`` (a resampled or corrected token)."""

    token: Hashable


#: a verifier: program (p, q, children) -> index of the accepted child, or Final(token)
TreeVerifier = Callable[[Law, Law, tuple], object]


def law_without(q: Law, excluded: Iterable[Hashable]) -> Law:
    """q restricted to the tokens not in ``excluded``, renormalised (the vocabulary is kept, with zeros).

    q_without(x) = q(x) / (1 - q(excluded)) for x not excluded, 0 otherwise: the law of the next draw
    of a sampler without replacement.
    """
    excluded = set(excluded)
    kept = {x: (Fraction(0) if x in excluded else w) for x, w in q.items()}
    if not any(kept.values()):
        raise LawError(f"no draft mass is left once {sorted(map(repr, excluded))} are removed")
    return Law.from_weights(kept, name="q without drawn tokens")


def recursive_rejection(p: Law, q_laws: list[Law], children: tuple):
    """Sampling program: child j judged by a standard step of the running target p^(j) against q_laws[j].

    p^(1) = p; accept x_j with min(1, p^(j)(x_j) / q_j(x_j)), else p^(j+1) = norm(max(0, p^(j) - q_j));
    all rejected: y ~ p^(k+1). Returns the accepted index j or Final(y).
    """
    current = p
    for j, (x, q_j) in enumerate(zip(children, q_laws, strict=True)):
        accept, residual = standard_rule(current, q_j, x)
        if (yield coin(accept, label="accept")):
            return j
        current = residual
    y = yield draw(current, label="resample")
    return Final(y)


def specinfer_verifier(p: Law, q: Law, children: tuple):
    """Multi-step speculative sampling: every child is judged against q itself (it was an independent draw)."""
    return (yield from recursive_rejection(p, [q] * len(children), children))


def without_replacement_verifier(p: Law, q: Law, children: tuple):
    """Recursive rejection without replacement: child j is judged against q_j = q without x_1..x_{j-1}."""
    if len(set(children)) != len(children):
        raise LawError(f"children {children!r} repeat a token: drawn without replacement they cannot")
    return (yield from recursive_rejection(p, [law_without(q, children[:j]) for j in range(len(children))], children))


def target_only_verifier(p: Law, q: Law, children: tuple):
    """SGLang's target-only rule: accept the first child j with u <= p(x_1) + ... + p(x_j); q is unused."""
    covered = Fraction(0)  # min(1, p(x_1) + ... + p(x_{j-1})): u is above it, given no child accepted yet
    for j, x in enumerate(children):
        reach = min(Fraction(1), covered + p[x])
        # P(u <= S_j | u > S_{j-1}) = (S_j - S_{j-1}) / (1 - S_{j-1}) for u uniform on [0, 1)
        if (yield coin((reach - covered) / (1 - covered), label="accept")):
            return j
        covered = reach
    # u > p(children): the final token comes from p with the rejected children's mass removed
    y = yield draw(law_without(p, children), label="resample")
    return Final(y)
