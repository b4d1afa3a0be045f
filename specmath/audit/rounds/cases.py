"""The audit battery: target/draft pairs chosen so that each known way to break a sampler shows.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)). Tokens are vocabulary indices 0..V-1.

A case is a pair of toy LMs (``specmath.speculative.toy_lm``) and a gamma. The auditor draws the draft tokens
x_i ~ q(. | x_<i) itself, hands the sampler the arrays ``target_probs[i] = p(. | x_<i)``
(i = 0..gamma, row gamma is the bonus position) and ``draft_probs[i] = q(. | x_<i)``, and records the
emitted tuple. So the law under test is the law of the *whole round*, drafts included:

    P(emit x_1..x_k y) = prod_{i<=k} min(p_i(x_i), q_i(x_i)) * [k < gamma: max(0, p_k(y) - q_k(y))
                                                                 k = gamma: p_gamma(y)]

which ``specmath.speculative.round.round_law`` computes exactly (Fractions). Position-dependent,
context-dependent laws make an off-by-one row or a bonus drawn from the wrong row change this law.
The per-position laws are its marginals: the token emitted at position i, or ``END`` (-1) when the
round emitted fewer than i + 1 tokens.

The case arrays are float64(p), float64(q) of exact rational laws: a float64 sampler sees the law up
to relative rounding 2^-53 (a TV far below anything N samples can detect). The ``near-underflow``
case uses powers of two (2^-126 = float32 tiny, 2^-133, 2^-149 = smallest float32 subnormal), exact
in float64 and float32. The ``equal-up-to-rounding`` case has p and q that differ by 2^-21 relative at
one token and less than float32 resolution elsewhere: a float32 sampler sees p <= q everywhere, so a
rejection (probability 2^-21 q(0) per round, forced by the "max" edge probe) leaves max(0, p - q) = 0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from specmath.audit.power import END, ExpectedLaws
from specmath.laws import Law
from specmath.sampling_options import SamplingOptions
from specmath.speculative.round import round_law
from specmath.speculative.toy_lm import ToyLM, random_toy_lm, top_k, warp
from specmath.validation import InvalidArgument, check_choice

__all__ = ["END", "AuditCase", "BATTERY", "case_named", "cases_named", "named_cases", "position_law", "ExpectedLaws"]

@dataclass(frozen=True)
class AuditCase:
    """One target/draft pair and a draft length gamma, with what it is there to expose."""

    name: str
    target: ToyLM
    draft: ToyLM
    gamma: int
    description: str
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def vocab_size(self) -> int:
        return len(self.target.vocabulary)

    def models(self, w: SamplingOptions | None = None) -> tuple[ToyLM, ToyLM]:
        """(w(p), w(q)): the laws verified and drafted from when a sampler applies warp w."""
        if w is None:
            return self.target, self.draft
        key = ("models", w)
        if key not in self._cache:
            self._cache[key] = (warp(self.target, w), warp(self.draft, w))
        return self._cache[key]

    def expected(self, w: SamplingOptions | None = None) -> ExpectedLaws:
        """Exact round law of w(p), w(q) from the empty prefix, and its per-position marginals."""
        key = ("expected", w)
        if key not in self._cache:
            target, draft = self.models(w)
            joint = round_law(target, draft, (), self.gamma)
            positions = tuple(position_law(joint, i) for i in range(self.gamma + 1))
            self._cache[key] = ExpectedLaws(joint, positions)
        return self._cache[key]

    def raw_rows(self, context: tuple, model: str) -> np.ndarray:
        """float64 probabilities p(. | context) (model "p") or q(. | context) (model "q"), unwarped."""
        key = (model, context)
        if key not in self._cache:
            lm = self.target if model == "p" else self.draft
            law = lm(context)
            self._cache[key] = np.array([float(law[x]) for x in range(self.vocab_size)])
        return self._cache[key]

    def arrays(self, tokens: tuple) -> tuple[np.ndarray, np.ndarray]:
        """(target_probs [gamma+1, V], draft_probs [gamma, V]) for drafted ``tokens``: row i conditions on x_<i."""
        key = ("arrays", tokens)
        if key not in self._cache:
            p = np.stack([self.raw_rows(tokens[:i], "p") for i in range(len(tokens) + 1)])
            q = np.stack([self.raw_rows(tokens[:i], "q") for i in range(len(tokens))]).reshape(len(tokens), self.vocab_size)
            self._cache[key] = (p, q)
        return self._cache[key]


def position_law(joint: Law, i: int) -> Law:
    """Marginal law of the i-th emitted token (0-based), END when the tuple is shorter than i + 1."""
    out: dict[int, Fraction] = {}
    for sequence, weight in joint.items():
        token = sequence[i] if len(sequence) > i else END
        out[token] = out.get(token, Fraction(0)) + weight
    return Law(out, name=f"position {i} law")


def _law(weights: dict[int, Fraction | int], vocab_size: int) -> Law:
    return Law.from_weights({x: weights.get(x, 0) for x in range(vocab_size)})


def _restricted(lm: ToyLM, keep: Callable[[tuple], set[int]], name: str) -> ToyLM:
    """lm with every token outside keep(context) set to 0 (renormalised; uniform on keep if all were 0)."""
    vocab = lm.vocabulary

    def fn(context: tuple) -> Law:
        kept = keep(context)
        law = lm(context)
        weights = {x: (law[x] if x in kept else 0) for x in vocab}
        if not any(weights.values()):
            weights = {x: (1 if x in kept else 0) for x in vocab}
        return Law.from_weights(weights)

    return ToyLM(fn, vocab, name=name)


def _top_k_lm(lm: ToyLM, k: int) -> ToyLM:
    return ToyLM(lambda c: top_k(lm(c), k), lm.vocabulary, name=f"top-{k} of {lm.name}")


def _dense(vocab_size: int, seed: int) -> ToyLM:
    """A context- and position-dependent law with every weight in 1..6 (no zeros)."""
    return random_toy_lm(vocab_size, seed, zero_probability=0.0, name=f"dense(V={vocab_size}, seed={seed})")


def _one_hot_draft(vocab_size: int) -> ToyLM:
    # greedy-like draft: the token after the last one (position-dependent at the start)
    def fn(context: tuple) -> Law:
        guess = (context[-1] + 1) % vocab_size if context else 2 % vocab_size
        return _law({guess: 1}, vocab_size)

    return ToyLM(fn, range(vocab_size), name="one-hot draft")


def _near_underflow() -> tuple[ToyLM, ToyLM]:
    tiny, sub, smallest = Fraction(1, 2**126), Fraction(1, 2**133), Fraction(1, 2**149)
    p = _law({0: Fraction(1, 2), 1: Fraction(1, 2) - tiny - smallest, 2: tiny, 3: smallest}, 6)
    q = _law({0: Fraction(1, 4), 1: Fraction(3, 4) - sub - tiny, 4: sub, 5: tiny}, 6)
    return ToyLM(lambda c: p, range(6), name="p near underflow"), ToyLM(lambda c: q, range(6), name="q near underflow")


def _equal_up_to_rounding() -> tuple[ToyLM, ToyLM]:
    # p moves 2^-21 of q(0) = 1/100 onto tokens 1 and 2: relative 2^-21 at token 0 survives a float32
    # softmax, relative ~2^-28 at tokens 1, 2 does not, so in float32 p <= q everywhere and p(0) < q(0)
    q0, shift = Fraction(1, 100), Fraction(1, 2**21)
    q = _law({0: q0, 1: Fraction(49, 100), 2: Fraction(1, 2)}, 4)
    p = _law({0: q0 * (1 - shift), 1: Fraction(49, 100) + q0 * shift / 2, 2: Fraction(1, 2) + q0 * shift / 2}, 4)
    return ToyLM(lambda c: p, range(4), name="p = q up to 2^-21"), ToyLM(lambda c: q, range(4), name="q")


def _sparse_wide(vocab_size: int, seed: int, size: int) -> ToyLM:
    """A law on ``size`` scattered tokens of a large vocabulary (always 0 and V-1), depending on the last token."""
    rng = np.random.default_rng(seed)
    base = {0, vocab_size - 1} | {int(t) for t in rng.choice(vocab_size, size=size - 2, replace=False)}

    def fn(context: tuple) -> Law:
        local = np.random.default_rng([seed, context[-1] + 1 if context else 0])
        return _law({x: int(local.integers(1, 7)) for x in base}, vocab_size)

    return ToyLM(fn, range(vocab_size), name=f"sparse(V={vocab_size}, {size} tokens, seed={seed})")


def _battery() -> tuple[AuditCase, ...]:
    cases = []

    def add(name: str, target: ToyLM, draft: ToyLM, gamma: int, description: str) -> None:
        cases.append(AuditCase(name, target, draft, gamma, description))

    add("context-g1", random_toy_lm(3, 11, zero_probability=0.1), random_toy_lm(3, 12, zero_probability=0.1), 1,
        "V=3, p and q depend on position and the last two tokens, with zeros on either side")
    add("context-g3", random_toy_lm(4, 23, zero_probability=0.1), random_toy_lm(4, 24, zero_probability=0.1), 3,
        "V=4, position- and context-dependent p, q with zeros: a wrong row or bonus shows")
    add("context-g5", random_toy_lm(3, 31, zero_probability=0.1), random_toy_lm(3, 32, zero_probability=0.1), 5,
        "V=3, gamma=5, position- and context-dependent p, q")
    dense = _dense(5, 41)
    add("p-equals-q", dense, dense, 3, "V=5, q = p (every draft accepted, bonus every round)")
    target, draft = _equal_up_to_rounding()
    add("equal-up-to-rounding", target, draft, 2,
        "V=4, p = q but for 2^-21 of q(0) moved to tokens 1, 2: in float32 p <= q, a rejection leaves a zero residual")
    add("disjoint-supports",
        _restricted(_dense(4, 51), lambda c: {0, 1}, "p on {0, 1}"),
        _restricted(_dense(4, 52), lambda c: {2, 3}, "q on {2, 3}"), 3,
        "V=4, p on {0, 1}, q on {2, 3}: every draft is rejected, the residual is p")
    add("one-hot-draft", _dense(6, 61), _one_hot_draft(6), 3,
        "V=6, q one-hot on (last token + 1) mod V: accept with p(x), residual p without x")
    add("zeros-in-target",
        _restricted(_dense(5, 71), lambda c: {x for x in range(5) if x != len(c) % 5 and x != 4}, "p with zeros"),
        _dense(5, 72), 3, "V=5, p(4) = 0 and p(position) = 0, q dense: proposals of p = 0 tokens must all be rejected")
    add("zeros-in-draft", _dense(5, 81),
        _restricted(_dense(5, 82), lambda c: {x for x in range(5) if x != (len(c) + 1) % 5 and x != 0}, "q with zeros"), 3,
        "V=5, q(0) = 0 and q(position + 1) = 0, p dense: those tokens come only from the residual or bonus")
    add("top-k-target-only", _top_k_lm(_dense(6, 91), 2), _dense(6, 92), 3,
        "V=6, p = top-2 of a dense law, q dense: top-k applied on the target side only")
    add("top-k-draft-only", _dense(6, 101), _top_k_lm(_dense(6, 102), 2), 3,
        "V=6, q = top-2 of a dense law, p dense: top-k applied on the draft side only")
    target, draft = _near_underflow()
    add("near-underflow", target, draft, 1,
        "V=6, entries 2^-126 (float32/bf16 tiny), 2^-133 and 2^-149 (subnormal) beside 1/4..3/4, zeros either side")
    add("vocab-2", random_toy_lm(2, 111, zero_probability=0.0), random_toy_lm(2, 112, zero_probability=0.0), 1,
        "V=2, the smallest vocabulary")
    add("vocab-1000", _sparse_wide(1000, 121, 40), _sparse_wide(1000, 122, 40), 1,
        "V=1000, p and q each on 40 scattered tokens (always 0 and 999), p depends on the last token")
    return tuple(cases)


#: the battery, in the order the audit runs it
BATTERY: tuple[AuditCase, ...] = _battery()


def case_named(name: str) -> AuditCase:
    """The battery case called ``name`` (``UnknownName`` listing the names, with the nearest one, otherwise)."""
    by_name = {case.name: case for case in BATTERY}
    return by_name[check_choice(name, "audit case", by_name)]


def cases_named(cases: object) -> tuple[AuditCase, ...]:
    """The audit cases meant by ``cases``: None (the whole battery), a case name, or a list of names and
    ``AuditCase`` objects; ``InvalidArgument`` / ``UnknownName`` (did you mean?) naming a bad one."""
    return named_cases(cases, BATTERY, AuditCase, "audit case")


def named_cases(cases: object, battery: tuple, kind: type, what: str) -> tuple:
    """``cases`` read against ``battery``: None (all of it), a name, or a list of names and ``kind`` objects."""
    if cases is None:
        return battery
    by_name = {case.name: case for case in battery}
    wrong = f"cases must be {what} names or {kind.__name__} objects, got"
    listed = [cases] if isinstance(cases, (str, kind)) else cases
    try:
        listed = list(listed)
    except TypeError:
        raise InvalidArgument(f"{wrong} {type(cases).__name__} {cases!r}") from None
    out = []
    for case in listed:
        if isinstance(case, str):
            case = by_name[check_choice(case, what, by_name)]
        elif not isinstance(case, kind):
            raise InvalidArgument(f"{wrong} {type(case).__name__} {case!r}")
        out.append(case)
    if not out:
        raise InvalidArgument("cases is empty: nothing to audit (None audits the whole battery)")
    return tuple(out)
