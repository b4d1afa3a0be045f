"""Hypothesis strategies for property tests of speculative samplers: laws, law pairs, toy LMs, round inputs.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

Use them in *your* tests, as ``hypothesis.extra.numpy`` is used::

    from hypothesis import given, settings
    from specmath import strategies as sms
    from specmath.speculative.step import step_law

    @settings(deadline=None)  # exact arithmetic's time varies with the law and the machine's load
    @given(sms.law_pairs())
    def test_my_rule_is_lossless(pq):
        p, q = pq
        assert step_law(p, q, my_rule) == p

How the laws are drawn, and why: every weight is an integer 0..max_weight (0 about half the time)
and the law is w(x) / sum_y w(y), exactly (``Law.from_weights``). No float is ever drawn and no
example is thrown away (an all-zero draw is read as the one-hot law on the first token), so

* every law is valid by construction, with exact rational weights;
* failures shrink towards *small simple* laws: fewer tokens, then weights 0 and 1, i.e. one-hot and
  uniform laws, so the counterexample a test prints is one a person can check by hand (for a rule
  that resamples from p: p = {A: 1/2, B: 1/2}, q = {A: 1, B: 0});
* the edge cases that break samplers are all reachable, and ``tests/testing`` proves it with
  ``hypothesis.find``: p == q, disjoint supports, q(x) = 0 < p(x), one-hot laws, a one-token
  vocabulary.

Toy LMs are drawn *structurally*: a default law and a table context -> law for some contexts of length
<= depth (``ToyLM(table, default=...)``). A failing LM shrinks to a context-free one (empty table),
then to a small table, and prints its table, not a seed integer.

``round_inputs`` gives the arrays an engine's rejection sampler takes (the ``specmath.audit``
interface): target_probs [gamma+1, V], draft_probs [gamma, V], draft_tokens [gamma], with
q_i(x_i) > 0 for every draft token, as numpy arrays or torch tensors (torch is imported only there).

Importing this module needs hypothesis (the extra ``specmath[testing]``), not torch.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from fractions import Fraction
from itertools import product
from typing import Any, NamedTuple

from hypothesis import strategies as st

from specmath.laws import Law
from specmath.speculative.toy_lm import ToyLM
from specmath.validation import InvalidArgument, check_generator_kind, check_integer

__all__ = ["laws", "law_pairs", "toy_lms", "toy_lm_pairs", "round_inputs", "RoundInputs", "LETTERS"]

#: the default token names of drawn laws: "A", "B", ... (short strings print well in counterexamples)
LETTERS = tuple("ABCDEFGHIJKLMNOPQRSTUVWXYZ")

#: the largest integer weight drawn; small, so shrunk laws have small denominators
MAX_WEIGHT = 8


def _check_sizes(min_size: int, max_size: int) -> tuple[int, int]:
    min_size = check_integer(min_size, "min_size", min_value=1)
    return min_size, check_integer(max_size, "max_size (at least min_size)", min_value=min_size)


def _tokens(vocab: int | Sequence[Hashable], what: str = "vocab") -> tuple:
    """An int n means the tokens 0..n-1 (real token ids); a sequence is the vocabulary itself."""
    if not isinstance(vocab, Iterable):
        return tuple(range(check_integer(vocab, f"{what} (a token count, or a sequence of tokens)", min_value=1)))
    tokens = tuple(vocab)
    if not tokens:
        raise InvalidArgument(f"{what} is empty: a law needs at least one token")
    if len(set(tokens)) != len(tokens):
        raise InvalidArgument(f"{what} lists a token twice: {tokens!r}")
    return tokens


def _law_from_integers(tokens: tuple, weights: Sequence[int]) -> Law:
    # an all-zero draw is the one-hot law on the first token: nothing is filtered away, and the
    # simplest draw (all zeros) is the simplest law
    if not any(weights):
        weights = [1] + [0] * (len(tokens) - 1)
    return Law.from_weights(dict(zip(tokens, weights, strict=True)), name="drawn law")


def _weight(zeros: bool, max_weight: int) -> st.SearchStrategy[int]:
    positive = st.integers(1, max_weight)
    # a zero about half the time, so supports differ often (disjoint supports, q(x) = 0 < p(x));
    # 0 is the first branch, so weights shrink to 0
    return st.one_of(st.just(0), positive) if zeros else positive


def _weights(size: int, zeros: bool, max_weight: int) -> st.SearchStrategy[list[int]]:
    return st.lists(_weight(zeros, max_weight), min_size=size, max_size=size)


@st.composite
def _laws_on(draw, tokens: tuple, zeros: bool, max_weight: int) -> Law:
    return _law_from_integers(tokens, draw(_weights(len(tokens), zeros, max_weight)))


def _check_vocabulary(vocab, min_size: int, max_size: int, max_weight: int) -> tuple | None:
    """The fixed vocabulary as a tuple, or None (letters of a drawn size); ValueError on bad arguments."""
    check_integer(max_weight, "max_weight", min_value=1)
    if vocab is not None:
        return _tokens(vocab)
    min_size, max_size = _check_sizes(min_size, max_size)
    if max_size > len(LETTERS):
        raise InvalidArgument(f"max_size {max_size} > {len(LETTERS)} letters: pass vocab=N for tokens 0..N-1")
    return None


def laws(vocab: int | Sequence[Hashable] | None = None, min_size: int = 1, max_size: int = 6, zeros: bool = True,
         *, max_weight: int = MAX_WEIGHT) -> st.SearchStrategy[Law]:
    """Exact laws law(x) = w(x) / sum_y w(y) with integer weights w(x) in 0..max_weight.

    ``vocab``: None draws min_size..max_size tokens named "A", "B", ...; an int n gives tokens
    0..n-1; a sequence is the vocabulary itself (sizes are then ignored). ``zeros=False`` draws
    weights >= 1 (full support). Every vocabulary entry is listed, zero-weight ones included.
    Shrinks to fewer tokens, then to one-hot and uniform laws.
    """
    tokens = _check_vocabulary(vocab, min_size, max_size, max_weight)
    if tokens is None:
        return _free_size_law(min_size, max_size, zeros, max_weight)
    return _laws_on(tokens, zeros, max_weight)


@st.composite
def _free_size_law(draw, min_size: int, max_size: int, zeros: bool, max_weight: int) -> Law:
    # the size is the list's length, so Hypothesis shrinks it by deleting entries
    weights = draw(st.lists(_weight(zeros, max_weight), min_size=min_size, max_size=max_size))
    return _law_from_integers(LETTERS[: len(weights)], weights)


#: how often a pair is drawn equal (p == q) or on one token, out of RELATIONS: rare on purpose, so the
#: budget goes to pairs that differ (two independent draws of small laws coincide often enough). The two
#: values sit mid-range: Hypothesis draws the ends of an integer range (and 0, the shrink target) more often
RELATIONS = 31
_SAME, _ONE_TOKEN = 15, 16


@st.composite
def _weight_rows(draw, tokens: tuple | None, min_size: int, max_size: int, zeros: bool, max_weight: int,
                 relation: int) -> tuple[tuple, list[tuple[int, int]]]:
    """(tokens, one (p(x), q(x)) weight pair per token). Deleting a row removes the token from both laws,
    so a failing pair shrinks to fewer tokens; a one-token vocabulary comes only from ``relation``."""
    weight = _weight(zeros, max_weight)
    if tokens is not None:
        return tokens, draw(st.lists(st.tuples(weight, weight), min_size=len(tokens), max_size=len(tokens)))
    single = relation == _ONE_TOKEN and min_size == 1
    least = 1 if single or max_size == 1 else max(min_size, 2)
    rows = draw(st.lists(st.tuples(weight, weight), min_size=least, max_size=max_size))
    rows = rows[:1] if single else rows
    return LETTERS[: len(rows)], rows


@st.composite
def _pairs(draw, tokens: tuple | None, min_size: int, max_size: int, zeros: bool, max_weight: int) -> tuple[Law, Law]:
    # the relation first, so a failing pair shrinks towards the general case (0: independent p and q);
    # p == q and a one-token vocabulary are one value each out of RELATIONS
    relation = draw(st.integers(0, RELATIONS - 1))
    tokens, rows = draw(_weight_rows(tokens, min_size, max_size, zeros, max_weight, relation))
    return _pair_from_rows(tokens, rows, relation)


def _pair_from_rows(tokens: tuple, rows: list[tuple[int, int]], relation: int) -> tuple[Law, Law]:
    p = _law_from_integers(tokens, [wp for wp, _ in rows])
    if relation == _SAME:
        return p, p
    q = _law_from_integers(tokens, [wq for _, wq in rows])
    return p, (_unequal(q, p) if q == p else q)


def _unequal(q: Law, p: Law) -> Law:
    """q == p by chance (most often one-hot on the same token) made unequal, so p == q comes when asked for:
    q shifted by one token, q'(x_i) = q(x_{i+1 mod V}) (a one-hot pair becomes disjoint); if that is still p
    (a uniform law), the one-hot law on the last token. A one-token vocabulary stays as it is."""
    tokens = list(q)
    shifted = Law({x: q[tokens[(i + 1) % len(tokens)]] for i, x in enumerate(tokens)}, name="drawn law")
    if shifted != p or len(tokens) == 1:
        return shifted
    return Law({x: int(x == tokens[-1]) for x in tokens}, name="drawn law")


def law_pairs(vocab: int | Sequence[Hashable] | None = None, min_size: int = 1, max_size: int = 6, zeros: bool = True,
              *, max_weight: int = MAX_WEIGHT) -> st.SearchStrategy[tuple[Law, Law]]:
    """(p, q) over one vocabulary, each drawn as by ``laws``.

    Reachable (and tested with ``hypothesis.find``): p == q, disjoint supports, q(x) = 0 < p(x),
    p(x) = 0 < q(x), one-hot p or q, a one-token vocabulary. With ``zeros=False`` both have full
    support (every ratio p(x)/q(x) is defined). The budget goes to pairs that can break a rule: p == q
    and a one-token vocabulary are drawn on purpose but rarely (about 3% of examples each); over
    1000 examples about a fifth have disjoint supports and more than a third a token with
    q(x) = 0 < p(x) (measured in tests/testing).
    """
    return _pairs(_check_vocabulary(vocab, min_size, max_size, max_weight), min_size, max_size, zeros, max_weight)


def _table_text(default: Law, table: dict) -> str:
    def law_text(law: Law) -> str:
        return "{" + ", ".join(f"{x!r}: {w}" for x, w in law.items()) + "}"

    rows = [f"otherwise {law_text(default)}"] + [f"{ctx!r} -> {law_text(law)}" for ctx, law in table.items()]
    return "toy LM: " + "; ".join(rows)


def _contexts(tokens: tuple, depth: int) -> list[tuple]:
    return [ctx for n in range(depth + 1) for ctx in product(tokens, repeat=n)]


def _table(draw, tokens: tuple, contexts: list[tuple], zeros: bool, max_weight: int) -> dict:
    # a table of context-specific laws; the empty table (a context-free LM) is the simplest
    table = draw(st.dictionaries(st.sampled_from(contexts), _laws_on(tokens, zeros, max_weight), max_size=len(contexts)))
    return {ctx: table[ctx] for ctx in contexts if ctx in table}  # a stable order for printing


def _toy_lm(tokens: tuple, table: dict, default: Law) -> ToyLM:
    return ToyLM(table, tokens, default=default, name=_table_text(default, table))


@st.composite
def _toy_lms(draw, tokens: tuple, depth: int, zeros: bool, max_weight: int) -> ToyLM:
    default = draw(_laws_on(tokens, zeros, max_weight))
    return _toy_lm(tokens, _table(draw, tokens, _contexts(tokens, depth), zeros, max_weight), default)


def toy_lms(vocab: int | Sequence[Hashable] = 2, depth: int = 2, zeros: bool = True,
            *, max_weight: int = MAX_WEIGHT) -> st.SearchStrategy[ToyLM]:
    """Toy LMs over ``vocab``: lm(context) = table[context] if listed, else a default law.

    The table lists laws for some contexts of length 0..depth (so the law may depend on the
    position and on every earlier token up to ``depth`` of them); each law is drawn as by ``laws``.
    Shrinks to a context-free LM (empty table) with a one-hot default. The LM's name
    prints its whole table, so a failing example shows the LM itself.
    """
    tokens = _tokens(vocab)
    depth = check_integer(depth, "depth", min_value=0)
    check_integer(max_weight, "max_weight", min_value=1)
    if len(tokens) ** depth > 4096:
        raise InvalidArgument(f"{len(tokens)} tokens at depth {depth} make {len(tokens) ** depth} contexts: lower depth")
    return _toy_lms(tokens, depth, zeros, max_weight)


@st.composite
def _toy_lm_pairs(draw, min_size: int, max_size: int, depth: int, zeros: bool, max_weight: int) -> tuple[ToyLM, ToyLM]:
    # as law_pairs: the relation first (0: independent target and draft), the default laws drawn as a
    # pair, each model's table of context-specific laws on its own
    relation = draw(st.integers(0, RELATIONS - 1))
    _, rows = draw(_weight_rows(None, min_size, max_size, zeros, max_weight, relation))
    tokens = tuple(range(len(rows)))
    contexts = _contexts(tokens, depth)
    p_default, q_default = _pair_from_rows(tokens, rows, relation)
    target = _toy_lm(tokens, _table(draw, tokens, contexts, zeros, max_weight), p_default)
    if relation == _SAME:
        return target, target
    q_table = _table(draw, tokens, contexts, zeros, max_weight)
    root = q_table.get((), q_default)
    if root == target(()):
        # equal first laws by chance: the draft's is made unequal, as law_pairs does (deeper contexts may agree)
        q_table = {(): _unequal(root, target(()))} | {ctx: law for ctx, law in q_table.items() if ctx != ()}
    return target, _toy_lm(tokens, q_table, q_default)


def toy_lm_pairs(min_size: int = 1, max_size: int = 3, depth: int = 2, zeros: bool = True,
                 *, max_weight: int = MAX_WEIGHT) -> st.SearchStrategy[tuple[ToyLM, ToyLM]]:
    """(target, draft) toy LMs over one vocabulary 0..V-1 of a drawn size V in min_size..max_size.

    Drawn as ``law_pairs`` draws laws: target == draft and a one-token vocabulary rarely (about 3%
    each), the two default laws as a pair, each table on its own.
    """
    min_size, max_size = _check_sizes(min_size, max_size)
    depth = check_integer(depth, "depth", min_value=0)
    check_integer(max_weight, "max_weight", min_value=1)
    if max_size ** depth > 4096:
        raise InvalidArgument(f"{max_size} tokens at depth {depth} make {max_size ** depth} contexts: lower depth")
    return _toy_lm_pairs(min_size, max_size, depth, zeros, max_weight)


class RoundInputs(NamedTuple):
    """One round's arrays as an engine's rejection sampler takes them (unpacks as a 3-tuple)."""

    target_probs: Any  # (gamma + 1, V) float: row i is p(. | x_<i), row gamma the bonus position
    draft_probs: Any  # (gamma, V) float: row i is q(. | x_<i)
    draft_tokens: Any  # (gamma,) int64, q_i(x_i) > 0


def _as_strategy(value, what: str) -> st.SearchStrategy[int]:
    if isinstance(value, st.SearchStrategy):
        return value
    return st.just(check_integer(value, f"{what} (an int, or a strategy of ints)", min_value=1))


def _array(rows: list[list[Fraction]], backend: str, dtype):
    import numpy as np

    floats = [[float(w) for w in row] for row in rows]  # the nearest double to each exact weight
    if backend == "numpy":
        return np.asarray(floats, dtype=dtype or np.float64)
    import torch

    return torch.tensor(floats, dtype=torch.float64).to(dtype or torch.float64)


def _tokens_array(tokens: list[int], backend: str):
    import numpy as np

    if backend == "numpy":
        return np.asarray(tokens, dtype=np.int64)
    import torch

    return torch.tensor(tokens, dtype=torch.int64)


@st.composite
def _round_inputs(draw, gamma, vocab, backend: str, dtype, zeros: bool, max_weight: int) -> RoundInputs:
    g, v = draw(gamma), draw(vocab)
    if g < 1 or v < 1:
        raise InvalidArgument(f"round_inputs needs gamma >= 1 and vocab >= 1, got gamma = {g}, vocab = {v}")
    tokens = tuple(range(v))
    law = _laws_on(tokens, zeros, max_weight)
    target = [draw(law) for _ in range(g + 1)]
    draft = [draw(law) for _ in range(g)]
    # valid by construction: each draft token has q_i(x_i) > 0 (it could have been drawn from q_i)
    drafts = [draw(st.sampled_from(sorted(q.support))) for q in draft]
    return RoundInputs(
        _array([[p[x] for x in tokens] for p in target], backend, dtype),
        _array([[q[x] for x in tokens] for q in draft], backend, dtype),
        _tokens_array(drafts, backend),
    )


def round_inputs(gamma: int | st.SearchStrategy[int] = 2, vocab: int | st.SearchStrategy[int] = 3,
                 backend: str = "numpy", dtype=None, zeros: bool = True,
                 *, max_weight: int = MAX_WEIGHT) -> st.SearchStrategy[RoundInputs]:
    """(target_probs [gamma+1, V], draft_probs [gamma, V], draft_tokens [gamma]) for one round.

    Row i of target_probs is p(. | x_<i) (row gamma: the bonus position), row i of draft_probs is
    q(. | x_<i); each is an exact law w / sum(w) rounded to ``dtype`` (default float64), and each
    draft token has q_i(x_i) > 0. ``backend`` "numpy" gives numpy arrays, "torch" CPU tensors
    (``dtype`` a numpy or torch dtype). ``gamma`` and ``vocab`` are ints or strategies of ints.
    """
    check_generator_kind(backend, "backend")
    check_integer(max_weight, "max_weight", min_value=1)
    return _round_inputs(_as_strategy(gamma, "gamma"), _as_strategy(vocab, "vocab"), backend, dtype, zeros, max_weight)
