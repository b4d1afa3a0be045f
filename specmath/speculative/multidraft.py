"""Multi-draft speculative sampling: k drafts verified by recursive rejection sampling (SpecInfer-style).

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)); here there are k drafts with laws q^(1..k).

One position, k independent proposals x_j ~ q^(j) (Miao et al. 2023, multi-step speculative sampling;
Chen et al. 2023 for k = 1):

    p^(1) = p;  for j = 1..k: accept x_j with min(1, p^(j)(x_j) / q^(j)(x_j)), else
                p^(j+1) = norm(max(0, p^(j) - q^(j)))        (the residual becomes the next target);
    if all k are rejected, emit y ~ p^(k+1).

Each stage is a standard step towards p^(j) with a fresh, independent proposal, so the emitted token
has law p (the proof of one step, applied k times). Over gamma positions the k drafts form a tree:
at depth i only drafts that agree with the accepted prefix stay candidates, and their next tokens are
fresh draws from q^(j)(. | accepted prefix), so the argument repeats position by position.

Deterministic drafts (n-gram / prompt lookup) are the case q^(j) = one-hot on the proposed token:
x_j is accepted with probability p^(j)(x_j) and the residual removes it, norm(p^(j) - p^(j)(x_j) 1_{x_j}).
Proposing the same token twice gains nothing: after its rejection p^(j+1)(x_j) = 0.

References: X. Miao et al., "SpecInfer: Accelerating Generative LLM Serving with Tree-based
Speculative Inference and Verification", ASPLOS 2024 (arXiv 2305.09781), multi-step speculative sampling;
Z. Sun et al., "SpecTr: Fast Speculative Decoding via Optimal Transport", NeurIPS 2023;
A. Saxena, "Prompt Lookup Decoding", 2023 (n-gram drafts from the prompt).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from fractions import Fraction

from specmath.laws import Law, LawError, as_law, check_same_vocabulary
from specmath.program import coin, draw, tick
from specmath.speculative.round import LM, check_round_arguments, draft_block
from specmath.speculative.step import standard_rule
from specmath.speculative.toy_lm import ToyLM
from specmath.speculative.variants import expected_accepted, round_law_of, variant_generation_law, variant_round_law
from specmath.validation import InvalidArgument

__all__ = [
    "one_hot",
    "one_hot_drafter",
    "multidraft_step",
    "multidraft_step_law",
    "multidraft_acceptance",
    "multidraft_round",
    "multidraft_round_law",
    "multidraft_generation_law",
    "accepted_length_against_k",
]


def one_hot(token: Hashable, vocabulary: Sequence[Hashable]) -> Law:
    """The law with all mass on ``token`` that still lists the whole vocabulary (zeros elsewhere)."""
    if token not in vocabulary:
        raise LawError(f"one-hot token {token!r} is not in the vocabulary {tuple(vocabulary)!r}")
    return Law({x: (1 if x == token else 0) for x in vocabulary}, name=f"one-hot({token!r})")


def one_hot_drafter(propose: Callable[[tuple], Hashable], vocabulary: Sequence[Hashable], name: str = "n-gram drafter") -> ToyLM:
    """A deterministic drafter (n-gram, prompt lookup): q(. | c) = one-hot on ``propose(c)``."""
    return ToyLM(lambda c: one_hot(propose(c), vocabulary), vocabulary, name=name)


def _check_drafts(drafts: Sequence) -> tuple:
    drafts = tuple(drafts)
    if not drafts:
        raise InvalidArgument("multi-draft needs k >= 1 drafts, got none")
    return drafts


def multidraft_step(p: Law, q_laws: tuple):
    """Sampling program: draw x_j ~ q^(j) for every draft, then recursive rejection; return the token."""
    q_laws = _check_drafts(q_laws)
    for j, q in enumerate(q_laws):
        check_same_vocabulary(p, q, q_name=f"draft law {j}")
    proposals = []
    for q in q_laws:
        proposals.append((yield draw(q, label="draft")))
    current = p
    for q, x in zip(q_laws, proposals, strict=True):
        # a standard step towards the current target p^(j); on rejection the residual is the next target
        accept_probability, residual = standard_rule(current, q, x)
        accepted = yield coin(accept_probability, label="accept")
        if accepted:
            return x
        current = residual
    y = yield draw(current, label="resample")
    return y


def multidraft_step_law(p: Law, q_laws: Sequence[Law]) -> Law:
    """Exact law of the token ``multidraft_step`` emits (equals p, proved in the tests)."""
    return round_law_of(multidraft_step, as_law(p, name="p"), tuple(as_law(q, name="q") for q in q_laws))


def multidraft_acceptance(p: Law, q_laws: Sequence[Law]) -> Fraction:
    """P(some draft is accepted) = 1 - prod_j (1 - alpha(p^(j), q^(j))), the residual chain p^(j+1) = norm(max(0, p^(j) - q^(j)))."""
    q_laws = _check_drafts(tuple(as_law(q, name="q") for q in q_laws))
    current, rejected = as_law(p, name="p"), Fraction(1)
    for q in q_laws:
        check_same_vocabulary(current, q)
        alpha = sum((min(current[x], q[x]) for x in current), Fraction(0))
        if alpha == 1:
            return Fraction(1)
        # all k rejected: each stage rejects with 1 - alpha_j given the previous rejections
        rejected *= 1 - alpha
        current = Law.from_weights({x: max(Fraction(0), current[x] - q[x]) for x in current})
    return 1 - rejected


def multidraft_round(target: LM, drafts: tuple, prefix: tuple, gamma: int):
    """Sampling program: k drafts of gamma tokens (one ``draft_block`` each), verified as a tree.

    At depth i the candidates are the drafts whose first i tokens equal the accepted prefix, in
    draft order; recursive rejection picks one of their i-th tokens or resamples and ends the round.
    """
    prefix = check_round_arguments(prefix, gamma)
    drafts = _check_drafts(drafts)
    blocks = []
    for draft in drafts:
        blocks.append((yield from draft_block(draft, prefix, gamma)))
    # one target pass over the token tree scores every node
    yield tick("target")
    accepted: tuple = ()
    for i in range(gamma):
        current = target(prefix + accepted)
        alive = [(tokens[i], q_laws[i]) for tokens, q_laws in blocks if tokens[:i] == accepted]
        for x, q in alive:
            accept_probability, residual = standard_rule(current, q, x)
            ok = yield coin(accept_probability, label="accept")
            if ok:
                accepted += (x,)
                break
            current = residual
        else:
            y = yield draw(current, label="resample")
            return accepted + (y,)
    bonus = yield draw(target(prefix + accepted), label="bonus")
    return accepted + (bonus,)


def multidraft_round_law(target: LM, drafts: Sequence[LM], prefix: tuple, gamma: int) -> Law:
    """Exact law of the tuple one multi-draft round emits (k = len(drafts))."""
    return variant_round_law(multidraft_round, target, _check_drafts(drafts), prefix, gamma)


def multidraft_generation_law(target: LM, drafts: Sequence[LM], prefix: tuple, gamma: int, length: int) -> Law:
    """Law of the first ``length`` tokens of repeated multi-draft rounds (equals autoregressive_law)."""
    return variant_generation_law(multidraft_round, target, _check_drafts(drafts), prefix, gamma, length)


def accepted_length_against_k(target: LM, draft: LM, prefix: tuple, gamma: int, ks: Sequence[int]) -> dict[int, Fraction]:
    """E[accepted draft tokens per round] with k independent copies of ``draft``, for each k in ``ks``."""
    return {k: expected_accepted(multidraft_round_law(target, (draft,) * k, prefix, gamma)) for k in ks}
