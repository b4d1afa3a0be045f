"""One speculative decoding round: draft gamma tokens, accept/reject them in order, emit 1..gamma+1 tokens.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)). A toy LM is ``lm(context) -> Law`` (see ``specmath.speculative.toy_lm``).

The round (Leviathan et al. 2023, Algorithm 1; Chen et al. 2023, Algorithm 2):

1. draft: x_1 ~ q(. | prefix), x_2 ~ q(. | prefix x_1), ..., x_gamma (gamma draft passes);
2. score: one target pass gives p_i = p(. | prefix x_1..x_{i-1}) for i = 1..gamma+1 at once
   (position t's logits predict token t+1, so all gamma+1 laws come out of one forward pass);
3. for i = 1..gamma accept x_i with probability min(1, p_i(x_i)/q_i(x_i)); at the first rejection
   emit y ~ norm(max(0, p_i - q_i)) and stop (the rest of the draft is discarded);
4. if all gamma are accepted, emit a *bonus* token y ~ p_{gamma+1}.

The round is written once as a sampling program from two blocks, ``draft_block`` and
``accept_block``, so a variant (a bug, block verification) swaps one block and keeps the other.
``exact(speculative_round, ...)`` is the reference meaning, and what ``specmath verify
speculative-round`` and ``speculative-generate`` interpret. ``round_law`` computes the same law by a
direct recursion over the tree of accepted prefixes (much faster than replaying the program), a second
path for the property tests, the prover and the notebooks; the tests prove it equal to the program for
every rule of the battery, lossy ones included (tests/speculative/test_round_law.py).

Why the round is lossless: at every position the accept/resample step emits a token with law p_i
exactly (``specmath.speculative.step``), and the next position's laws are conditioned on the token
actually emitted, so the emitted tokens are a prefix of an autoregressive sample from p.

References: Leviathan, Kalman, Matias, "Fast Inference from Transformers via Speculative Decoding",
ICML 2023; Chen et al., "Accelerating Large Language Model Decoding with Speculative Sampling", 2023.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from fractions import Fraction

from specmath.laws import Law, LawError, as_law, check_same_vocabulary
from specmath.program import coin, draw, tick
from specmath.speculative.rule_output import read_rule_output
from specmath.speculative.step import Rule, standard_rule
from specmath.validation import InvalidArgument, check_integer

__all__ = [
    "LM",
    "draft_block",
    "accept_block",
    "speculative_round",
    "drafted_round",
    "round_law",
    "check_round_arguments",
    "law_at",
]

#: a (toy) language model: context tuple -> next-token law
LM = Callable[[tuple], Law]


def law_at(lm: LM, context: tuple, role: str) -> Law:
    """``lm(context)`` as a Law: any Mapping token -> probability is one (``as_law``); a LawError names the
    model and context when the model returns something else or an invalid law."""
    law = lm(context)
    if isinstance(law, Law):
        return law
    if not isinstance(law, Mapping):
        raise LawError(f"the {role} model returned {type(law).__name__} for context {context!r}: "
                       "a model returns a Mapping token -> probability (a dict, a Law)")
    return as_law(law, name=f"the {role} model's law at context {context!r}")


def check_round_arguments(prefix: object, gamma: object) -> tuple:
    """Validate a round's prefix (a tuple/list of tokens) and gamma (an int >= 0); return the prefix tuple."""
    if isinstance(prefix, (str, bytes)) or not isinstance(prefix, (tuple, list)):
        raise InvalidArgument(f"prefix must be a tuple of tokens, got {type(prefix).__name__} {prefix!r}")
    check_integer(gamma, "gamma (draft tokens per round)", min_value=0)
    return tuple(prefix)


def draft_block(draft: LM, prefix: tuple, gamma: int):
    """Sampling program: draft gamma tokens autoregressively, x_i ~ q(. | prefix x_1..x_{i-1}).

    Returns ``(tokens, q_laws)``: the drafted tokens and the law q_i each one was drawn from (the
    accept/reject step must use exactly these laws). One "draft" request per draft pass.
    """
    tokens: tuple = ()
    q_laws: tuple = ()
    for _ in range(gamma):
        q = law_at(draft, prefix + tokens, "draft")
        x = yield draw(q, label="draft")
        tokens += (x,)
        q_laws += (q,)
    return tokens, q_laws


def accept_block(target: LM, prefix: tuple, tokens: tuple, q_laws: tuple, rule: Rule = standard_rule):
    """Sampling program: accept/reject drafted ``tokens`` in order with ``rule``; return the emitted tuple.

    One target forward pass (``tick("target")``) scores every position. Position i accepts x_i with
    the rule's probability (standard: min(1, p_i(x_i)/q_i(x_i))); the first rejection emits a token
    from the rule's resample law (standard: norm(max(0, p_i - q_i))) and ends the round; if all are
    accepted a bonus token is drawn from p(. | prefix x_1..x_gamma).
    """
    if len(tokens) != len(q_laws):
        raise LawError(f"accept_block got {len(tokens)} draft tokens but {len(q_laws)} draft laws")
    # one forward pass over prefix + drafted tokens yields all gamma + 1 next-token laws
    yield tick("target")
    for i, (x, q) in enumerate(zip(tokens, q_laws, strict=True)):
        # position i's law is conditioned on the accepted tokens x_1..x_{i-1}
        p = law_at(target, prefix + tokens[:i], "target")
        check_same_vocabulary(p, q, p_name=f"target({prefix + tokens[:i]!r})", q_name="its draft law")
        accept_probability, resample = read_rule_output(rule(p, q, x), p, x)
        accepted = yield coin(accept_probability, label="accept")
        if not accepted:
            if resample is None:
                raise LawError(f"the rule rejected token {x!r} but gave no law to resample from")
            y = yield draw(resample, label="resample")
            return tokens[:i] + (y,)
    # all gamma accepted: the last position's law is already computed, sample a bonus token
    bonus = yield draw(law_at(target, prefix + tokens, "target"), label="bonus")
    return tokens + (bonus,)


def speculative_round(target: LM, draft: LM, prefix: tuple, gamma: int, rule: Rule = standard_rule):
    """Sampling program for one round: ``draft_block`` then ``accept_block``; returns the emitted tuple."""
    prefix = check_round_arguments(prefix, gamma)
    tokens, q_laws = yield from draft_block(draft, prefix, gamma)
    emitted = yield from accept_block(target, prefix, tokens, q_laws, rule)
    return emitted


def drafted_round(accept: Callable, target: LM, draft: LM, prefix: tuple, gamma: int):
    """Sampling program for a variant that keeps the draft phase: ``draft_block``, then
    ``accept(target, prefix, tokens, q_laws)`` (a program returning the emitted tuple)."""
    prefix = check_round_arguments(prefix, gamma)
    tokens, q_laws = yield from draft_block(draft, prefix, gamma)
    emitted = yield from accept(target, prefix, tokens, q_laws)
    return emitted


def round_law(target: LM, draft: LM, prefix: tuple, gamma: int, rule: Rule | None = None) -> Law:
    """Exact law of the tuple emitted by one round (lengths 1..gamma+1), by recursion over accepted prefixes.

    For an accepted prefix a = x_1..x_k with probability w(a) (all accepted so far):

        standard rule:  w(a x) = w(a) min(p_k(x), q_k(x))   and   P(emit a y) += w(a) max(0, p_k(y) - q_k(y)),
        general rule:   w(a x) = w(a) q_k(x) acc(x)         and   P(emit a y) += w(a) sum_z q_k(z)(1 - acc(z)) R_z(y),
        k = gamma:      P(emit a y) = w(a) p(y | prefix a)  (the bonus token).

    Draft tokens after a rejection are discarded, so their laws sum out to 1. Equal to
    ``exact(speculative_round, target, draft, prefix, gamma, rule).law`` (proved in the tests).
    """
    prefix = check_round_arguments(prefix, gamma)
    out: dict[Hashable, Fraction] = {}
    standard = rule is None or rule is standard_rule

    def emit(sequence: tuple, weight: Fraction) -> None:
        out[sequence] = out.get(sequence, Fraction(0)) + weight

    def visit(accepted: tuple, weight: Fraction) -> None:
        context = prefix + accepted
        p = law_at(target, context, "target")
        if len(accepted) == gamma:
            # bonus token from the target law after all gamma draft tokens
            for y, py in p.items():
                if py:
                    emit(accepted + (y,), weight * py)
            return
        q = law_at(draft, context, "draft")
        check_same_vocabulary(p, q, p_name=f"target({context!r})", q_name=f"draft({context!r})")
        if standard:
            for x, px in p.items():
                qx = q[x]
                # q(x) min(1, p(x)/q(x)) = min(p(x), q(x)) is the mass that keeps x
                kept = min(px, qx)
                if kept:
                    visit(accepted + (x,), weight * kept)
                # P(reject) residual(x) = (1 - alpha) max(0, p - q)(x) / (1 - alpha) = max(0, p(x) - q(x))
                if px > qx:
                    emit(accepted + (x,), weight * (px - qx))
            return
        for x, qx in q.items():
            if not qx:
                continue
            a, resample = read_rule_output(rule(p, q, x), p, x)
            if a:
                visit(accepted + (x,), weight * qx * a)
            if a < 1:
                if resample is None:
                    raise LawError(f"the rule rejected token {x!r} but gave no law to resample from")
                for y, r in resample.items():
                    if r:
                        emit(accepted + (y,), weight * qx * (1 - a) * r)

    visit((), Fraction(1))
    return Law(out, name="round law")
