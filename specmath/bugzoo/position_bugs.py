"""Bugs in positions and randomness: a wrong row of target logits, a skipped check, a shared uniform.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)); p_i = p(. | prefix x_1..x_i) is row i of the target's logits.

The correct round accepts/rejects x_{i+1} against row i and draws the bonus from row gamma, with a fresh
uniform per position. The first three entries keep ``accept_block`` and hand it a *view* of the
target that returns the wrong row; the last swaps the accept/reject step for one with a single uniform.

Sources: dated records in ``specmath.bugzoo.claims`` (lattice issue #243, fixed by PR #258: claim
lattice-first-draft-unverified; a review of mlx-node PR #11, unconfirmed: claim mlx-node-logits-off-by-one);
the other two are modelled on code paths of vLLM, and no engine is claimed to have them.
"""

from __future__ import annotations

from fractions import Fraction
from functools import partial

import numpy as np

from specmath.bugzoo.claims import CLAIMS
from specmath.bugzoo.zoo import Bug, Instance, context_free, pair_instance
from specmath.laws import Law
from specmath.program import coin, draw, tick
from specmath.speculative.reference_round import numpy_round
from specmath.speculative.round import accept_block, draft_block
from specmath.speculative.step import residual_law
from specmath.speculative.toy_lm import ToyLM

__all__ = ["POSITION_BUGS", "first_draft_unverified_round", "logits_off_by_one_round", "bonus_wrong_position_round", "shared_uniform_round"]


def first_draft_unverified_round(inst: Instance, context: tuple):
    """Row 0 is never computed: x_1 is compared with its own draft law (accepted surely)."""
    tokens, q_laws = yield from draft_block(inst.drawn_draft, context, inst.gamma)
    t = inst.wanted_target
    view = ToyLM(lambda c: q_laws[0] if c == context else t(c), t.vocabulary, name="target, row 0 unverified")
    emitted = yield from accept_block(view, context, tokens, q_laws)
    return emitted


def logits_off_by_one_round(inst: Instance, context: tuple):
    """x_{i+1} is accepted/rejected against row i + 1 (the law *after* it) instead of row i."""
    tokens, q_laws = yield from draft_block(inst.drawn_draft, context, inst.gamma)
    t = inst.wanted_target

    def shifted(c: tuple) -> Law:
        i = len(c) - len(context)
        return t(context + tokens[: i + 1]) if i < len(tokens) else t(c)

    emitted = yield from accept_block(ToyLM(shifted, t.vocabulary, name="target shifted by one row"), context, tokens, q_laws)
    return emitted


def bonus_wrong_position_round(inst: Instance, context: tuple):
    """The bonus token is drawn from row gamma - 1 (the last position accepted/rejected) instead of row gamma."""
    tokens, q_laws = yield from draft_block(inst.drawn_draft, context, inst.gamma)
    t = inst.wanted_target
    view = ToyLM(lambda c: t(c[:-1]) if c == context + tokens else t(c), t.vocabulary, name="target, bonus row off by one")
    emitted = yield from accept_block(view, context, tokens, q_laws)
    return emitted


def shared_uniform_accept(target, prefix: tuple, tokens: tuple, q_laws: tuple):
    """Token-wise verification with ONE uniform u for all positions: accept x_i iff u < r_i = min(1, p_i/q_i).

    Exactly: given x_1..x_{i-1} accepted, u is uniform on [0, h) with h = min(r_1..r_{i-1}), so
    P(accept x_i | history) = min(r_i, h) / h.
    """
    yield tick("target")
    h = Fraction(1)
    for i, (x, q) in enumerate(zip(tokens, q_laws, strict=True)):
        p = target(prefix + tokens[:i])
        r = min(Fraction(1), p[x] / q[x])
        # the same u must also lie below r: probability min(r, h) / h given u < h
        accepted = yield coin(min(r, h) / h, label="accept")
        if not accepted:
            y = yield draw(residual_law(p, q), label="resample")
            return tokens[:i] + (y,)
        h = min(r, h)
    bonus = yield draw(target(prefix + tokens), label="bonus")
    return tokens + (bonus,)


def shared_uniform_round(inst: Instance, context: tuple):
    """``draft_block`` then ``shared_uniform_accept``."""
    tokens, q_laws = yield from draft_block(inst.drawn_draft, context, inst.gamma)
    emitted = yield from shared_uniform_accept(inst.wanted_target, context, tokens, q_laws)
    return emitted


def _alternating_target() -> ToyLM:
    # p(. | ()) = {A: 3/4, B: 1/4}; after A prefer B, after B prefer A
    laws = {
        None: Law({"A": Fraction(3, 4), "B": Fraction(1, 4)}),
        "A": Law({"A": Fraction(1, 4), "B": Fraction(3, 4)}),
        "B": Law({"A": Fraction(3, 4), "B": Fraction(1, 4)}),
    }
    return ToyLM(lambda c: laws[c[-1] if c else None], ("A", "B"), name="alternating target")


def _uniform_draft() -> ToyLM:
    return context_free(Law({"A": Fraction(1, 2), "B": Fraction(1, 2)}), "uniform draft")


def _first_draft_instance() -> Instance:
    return pair_instance(Law({"A": Fraction(1, 2), "B": Fraction(1, 2)}), Law({"A": Fraction(3, 4), "B": Fraction(1, 4)}))


def _off_by_one_instance() -> Instance:
    return Instance(_alternating_target(), _uniform_draft(), description="p(.|()) = {A: 3/4, B: 1/4}, p(.|..A) = {A: 1/4, B: 3/4}, p(.|..B) = {A: 3/4, B: 1/4}; q uniform; gamma = 1")


def _bonus_instance() -> Instance:
    flip = {None: Law({"A": Fraction(1, 2), "B": Fraction(1, 2)}), "A": Law({"A": 0, "B": 1}), "B": Law({"A": 1, "B": 0})}
    target = ToyLM(lambda c: flip[c[-1] if c else None], ("A", "B"), name="flip target")
    return Instance(target, context_free(flip[None], "q = p(. | ())"), length=2,
                    description="p(.|()) = {A: 1/2, B: 1/2}, then the other token surely; q = p(.|()); gamma = 1, 2 tokens")


def _shared_uniform_instance() -> Instance:
    return pair_instance(Law({"A": Fraction(1, 2), "B": Fraction(1, 2)}), Law({"A": 1, "B": 0}), gamma=2, length=2)


def _one_uniform(gamma: int, rng: np.random.Generator) -> np.ndarray:
    return np.full(gamma, rng.random())


#: this module's entries of the bug zoo (joined into ``specmath.bugzoo.BUGS``)
POSITION_BUGS: tuple[Bug, ...] = (
    Bug(
        name="first-draft-unverified",
        explanation="the verify loop feeds x_1 first and only checks x_2..x_gamma, so x_1 is committed unverified and the first token follows q, not p",
        claim=CLAIMS["lattice-first-draft-unverified"],
        make_instance=_first_draft_instance,
        lossy_round=first_draft_unverified_round,
        sample_round=partial(numpy_round, check_first=False),
    ),
    Bug(
        name="logits-off-by-one",
        explanation="verification logits are sliced from position 1, so x_i is judged by the law of the token after it, p(. | prefix x_1..x_i)",
        claim=CLAIMS["mlx-node-logits-off-by-one"],
        make_instance=_off_by_one_instance,
        lossy_round=logits_off_by_one_round,
        sample_round=partial(numpy_round, target_row=lambda i, gamma: min(i + 1, gamma)),
    ),
    Bug(
        name="bonus-from-wrong-row",
        explanation="after all gamma drafts are accepted the bonus token is drawn from row gamma - 1, the law of x_gamma, not the law after it",
        modelled_on="the bonus-logit index `recover_logits_idx = np.cumsum(sample_lens) - 1` of vLLM's v1 GPU model runner (vllm-project/vllm PR #13933), taken one row too early",
        make_instance=_bonus_instance,
        lossy_round=bonus_wrong_position_round,
        sample_round=partial(numpy_round, bonus_row=lambda gamma: gamma - 1),
    ),
    Bug(
        name="one-uniform-for-all-positions",
        explanation="one uniform u is drawn per round instead of per position, so after accepting x_1 (u < r_1) later acceptances are correlated and too likely",
        modelled_on="the batched acceptance test of vLLM's V0 rejection sampler (vllm-project/vllm PR #2336), which draws one uniform per (sequence, position), here drawn once per sequence",
        make_instance=_shared_uniform_instance,
        lossy_round=shared_uniform_round,
        sample_round=partial(numpy_round, uniforms=_one_uniform),
    ),
)
