"""Typical acceptance (Medusa): keep a drafted token when p(x) > min(epsilon, delta exp(-H(p))). Lossy by design.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

The rule (Cai et al. 2024, Medusa, section 2.3.1): a candidate token x after prefix a is accepted when

    p(x | a) > min(epsilon, delta * exp(-H_c(p(. | a)))),   H_c(p) = -sum_y p(y) ln(p(y) + c),

with c = 0 in the paper and c = 1e-5 in Medusa's and vLLM's code (``torch.log(p + 1e-5)``). The
candidates are the root-to-leaf paths of a draft tree; a path's accepted length is its number of
leading accepted tokens, the longest wins, ties go to the larger likelihood prod_i p(x_i | x_<i)
over the accepted tokens, then to the first path in Medusa's order (the leaves in descending
lexicographic order of child ranks, the order ``generate_medusa_buffers`` lists them).

How the deployed code uses it (FasterDecoding/Medusa at e2a5d20, medusa/model/utils.py):
``medusa_generate`` defaults to fast=True, and then ``generate_candidates`` takes the round's first
token as argmax p (greedy, at any temperature) and ``evaluate_posterior`` applies the rule above to
the Medusa heads' top-k tree hanging below it; the round emits that token and the accepted tokens.
No token is ever sampled: generation is deterministic by design (its docstring: "faster,
deterministic decoding"; claim medusa-fast-mode), and its TV from p is 1 - P_p(the one sequence it
emits). With sampling='typical' and fast=False at T > 0 the code raises TypeError
(``get_typical_posterior_mask`` is called with 6 arguments and takes 5; claim medusa-typical-type-error),
so the sampled typical variant does not run; sampling='nucleus' does. (The README calls the mode
"non-greedy generation".) Medusa's heads propose the top-k of head i for every node at depth i, read
from the hidden state before the round; the toy drafts here condition on the path (as EAGLE's
drafter does): the rule sees the candidates only through the tokens offered. vLLM's V0 engine shipped
the rule for chains as ``TypicalAcceptanceSampler``, opt-in and documented as trading quality for
acceptance: there the first rejected position takes argmax p(. | accepted prefix)
(``_get_recovered_token_ids``) and a fully accepted chain the sampled bonus token. ``TypicalAcceptance``
models Medusa (``greedy_first``), vLLM V0 (``argmax_correction``) and the variant whose closing token is
always sampled from p.

Deciding the comparison exactly. exp(-H_c(p)) = prod_y (p(y) + c)^p(y) is irrational in general, so
it is never rounded: with D the least common denominator of the p(y) > 0 (so n_y = D p(y) are
integers) and t -> t^D increasing on t >= 0,

    p(x) > delta prod_y (p(y) + c)^p(y)   <=>   p(x)^D > delta^D prod_y (p(y) + c)^(n_y),

a comparison of two rationals. (When D is too large for that, rigorous interval bounds with mpmath's
``iv`` decide it, raising precision until the intervals separate.) Ties: the test is strict, so a tie
rejects. With c = 0 a tie p(x) = delta exp(-H(p)) needs exp(-H(p)) rational, i.e. prod_y p(y)^(n_y) a
perfect D-th power of a rational: a uniform p on m tokens (exp(-H) = 1/m, so p(x) = 1/m ties at
delta = 1) or p = (1/2, 1/8, 1/8, 1/8, 1/8) (exp(-H) = 1/4); for p = (1/3, 2/3), exp(-H) = (4/27)^(1/3)
is irrational and no rational delta ties. A tie with epsilon is p(x) = epsilon exactly.

References: T. Cai et al., "Medusa: Simple LLM Inference Acceleration Framework with Multiple Decoding
Heads", ICML 2024 (arXiv 2401.10774); FasterDecoding/Medusa medusa/model/utils.py
(``evaluate_posterior``, ``generate_candidates``); vllm-project/vllm
vllm/model_executor/layers/typical_acceptance_sampler.py (V0).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from specmath.exact import NotExactError, exact
from specmath.laws import Law, to_fraction
from specmath.program import draw, tick
from specmath.speculative.round import LM, check_round_arguments, law_at
from specmath.speculative.tree import TreeShape, check_shape, draft_tree
from specmath.speculative.variants import generation_law_of
from specmath.validation import InvalidArgument

__all__ = ["TypicalAcceptance", "exceeds_typical_threshold", "greedy_token", "typical_path", "typical_round",
           "typical_round_law", "typical_generation_law", "typical_thresholds", "sample_typical_rounds"]

#: exponents up to this size are compared exactly as powers; larger ones by interval bounds
_MAX_EXACT_POWER = 10_000


@dataclass(frozen=True)
class TypicalAcceptance:
    """The rule's constants, exact. Defaults: Medusa's (``medusa_generate``, fast=True)."""

    epsilon: Fraction = Fraction(9, 100)  # posterior_threshold (Medusa's default 0.09)
    delta: Fraction = Fraction(3, 10)  # posterior_alpha (default 0.3, recommended sqrt(epsilon))
    entropy_offset: Fraction = Fraction(1, 100000)  # c in ln(p + c): the code's 1e-5; 0 is the paper's H
    greedy_first: bool = True  # True: Medusa opens the round with argmax p; False: the round closes with one token of p
    argmax_correction: bool = False  # with greedy_first False: a rejection emits argmax p (vLLM V0), not y ~ p

    def __post_init__(self) -> None:
        for name in ("epsilon", "delta", "entropy_offset"):
            value = to_fraction(getattr(self, name), what=name)
            if value < 0:
                raise InvalidArgument(f"{name} must be >= 0, got {value}")
            object.__setattr__(self, name, value)


def _power_compare(px: Fraction, p: Law, rule: TypicalAcceptance) -> bool | None:
    """p(x) > delta prod (p(y) + c)^p(y) by raising both sides to the power D; None when D is too large."""
    support = [w for w in p.values() if w > 0]
    d = math.lcm(*(w.denominator for w in support))
    if d > _MAX_EXACT_POWER:
        return None
    right = rule.delta**d
    for w in support:
        right *= (w + rule.entropy_offset) ** int(w * d)
    return px**d > right


def _interval_compare(px: Fraction, p: Law, rule: TypicalAcceptance) -> bool:
    """The same comparison by rigorous interval arithmetic, precision raised until the intervals separate."""
    from mpmath import iv

    def interval(r: Fraction):
        return iv.mpf(r.numerator) / iv.mpf(r.denominator)

    for bits in (64, 256, 1024, 4096):
        iv.prec = bits
        log_threshold = iv.log(interval(rule.delta))
        for w in p.values():
            if w > 0:
                log_threshold += interval(w) * iv.log(interval(w) + interval(rule.entropy_offset))
        gap = iv.log(interval(px)) - log_threshold
        if gap.a > 0:
            return True
        if gap.b < 0:
            return False
    raise NotExactError(f"p(x) = {px} and delta exp(-H) agree to 4096 bits: a tie the interval bounds cannot decide")


def _exceeds(px: Fraction, p: Law, rule: TypicalAcceptance) -> bool:
    """p(x) > min(epsilon, delta exp(-H_c(p))) for one positive probability px of p."""
    if px > rule.epsilon or rule.delta == 0:
        return True
    decided = _power_compare(px, p, rule)
    return _interval_compare(px, p, rule) if decided is None else decided


@functools.lru_cache(maxsize=4096)
def _least_accepted(p: Law, rule: TypicalAcceptance) -> Fraction | None:
    """The least positive p(x) the rule accepts, or None when it accepts none.

    The threshold depends on p alone and the test p(x) > threshold is monotone in p(x), so a binary
    search over p's distinct positive probabilities decides every token of p in about log2(V)
    exact comparisons; a tree round asks about the same p once per node, and each comparison raises
    rationals to a power up to the common denominator of p, so deciding each p once is what keeps the
    exact tree laws quick (V = 64: seconds, not minutes).
    """
    values = sorted({w for w in p.values() if w > 0})
    low, high = 0, len(values)  # invariant: values[high:] accepted, values[:low] rejected
    while low < high:
        middle = (low + high) // 2
        if _exceeds(values[middle], p, rule):
            high = middle
        else:
            low = middle + 1
    return values[high] if high < len(values) else None


def exceeds_typical_threshold(p: Law, x, rule: TypicalAcceptance) -> bool:
    """True iff p(x) > min(epsilon, delta exp(-H_c(p))), decided exactly (see the module docstring)."""
    px = p[x]
    if px == 0:
        return False  # the threshold is >= 0 and the test is strict
    least = _least_accepted(p, rule)
    return least is not None and px >= least


def greedy_token(p: Law):
    """argmax p, the first maximal token in p's listing order (torch.argmax returns the first maximum)."""
    best = max(p.values())
    return next(x for x in p if p[x] == best)


def typical_path(target: LM, context: tuple, tree: tuple, rule: TypicalAcceptance) -> tuple:
    """The accepted tokens: the longest accepted prefix over the tree's paths (ties: likelihood, then Medusa's order)."""
    paths: list[tuple[tuple, tuple]] = []  # (child ranks, tokens) of every root-to-leaf path

    def collect(nodes: tuple, ranks: tuple, tokens: tuple) -> None:
        if not nodes:
            paths.append((ranks, tokens))
        for rank, node in enumerate(nodes):
            collect(node.children, ranks + (rank,), tokens + (node.token,))

    collect(tree, (), ())
    best, best_key = (), (0, Fraction(0))
    for _, tokens in sorted(paths, reverse=True):  # Medusa's order; the first maximal path wins
        accepted, likelihood = 0, Fraction(1)
        for token in tokens:
            p = law_at(target, context + tokens[:accepted], "target")
            if not exceeds_typical_threshold(p, token, rule):
                break
            accepted, likelihood = accepted + 1, likelihood * p[token]
        if (accepted, likelihood) > best_key:
            best, best_key = tokens[:accepted], (accepted, likelihood)
    return best


def typical_round(target: LM, draft: LM, prefix: tuple, shape: TreeShape, rule: TypicalAcceptance):
    """Sampling program: one round of typical acceptance over a drafted tree; returns the emitted tuple."""
    prefix = check_round_arguments(prefix, check_shape(shape).depth)
    if not isinstance(rule, TypicalAcceptance):
        raise InvalidArgument(f"rule must be a TypicalAcceptance(epsilon, delta, ...), got {rule!r}")
    context = prefix
    if rule.greedy_first:
        # Medusa, fast=True: the round's first token is argmax p, the candidates hang below it
        first = greedy_token(law_at(target, prefix, "target"))
        context = prefix + (first,)
    tree = yield from draft_tree(draft, context, shape)
    yield tick("target")
    path = typical_path(target, context, tree, rule)
    if rule.greedy_first:
        return (first,) + path
    # the position after the accepted tokens: argmax p after a rejection under vLLM V0's rule, else a sample of p
    after = law_at(target, context + path, "target")
    if rule.argmax_correction and len(path) < shape.depth:
        return path + (greedy_token(after),)
    y = yield draw(after, label="target sample")
    return path + (y,)


def typical_round_law(target: LM, draft: LM, prefix: tuple, shape: TreeShape, rule: TypicalAcceptance) -> Law:
    """Exact law of the tuple one typical-acceptance round emits."""
    return exact(typical_round, target, draft, tuple(prefix), shape, rule).law


def typical_generation_law(target: LM, draft: LM, prefix: tuple, shape: TreeShape, length: int,
                           rule: TypicalAcceptance) -> Law:
    """Law of the first ``length`` tokens of repeated typical-acceptance rounds (compare with autoregressive_law)."""
    prefix = check_round_arguments(prefix, shape.depth)
    return generation_law_of(lambda c: typical_round_law(target, draft, c, shape, rule), prefix, length)


def typical_thresholds(probs: np.ndarray, rule: TypicalAcceptance) -> np.ndarray:
    """Float min(epsilon, delta exp(sum_y p(y) ln(p(y) + c))) for every row of ``probs`` [..., V]."""
    c = float(rule.entropy_offset)
    with np.errstate(divide="ignore", invalid="ignore"):
        # 0 ln(0 + c) is 0 (also for c = 0, where numpy would give 0 * -inf = nan)
        terms = np.where(probs > 0, probs * np.log(probs + c), 0.0)
    return np.minimum(float(rule.epsilon), float(rule.delta) * np.exp(terms.sum(axis=-1)))


def sample_typical_rounds(parents, target_probs, draft_probs, draft_tokens, rng: np.random.Generator, *,
                          rule: TypicalAcceptance) -> np.ndarray:
    """Float typical acceptance over batched trees, in the layout of ``specmath.speculative.tree_reference``.

    ``draft_probs`` is checked but not read (the rule never looks at q). With ``rule.greedy_first``
    (Medusa) the tree must have one root child, node 0 = argmax target_probs[:, 0], and the candidate
    paths are those below it. Returns [N, depth + 1] emitted tokens, -1 padded.
    """
    from specmath.speculative.tree_reference import check_tree_arrays, draw_rows

    parents, p_all, _, x_all = check_tree_arrays(parents, target_probs, draft_probs, draft_tokens)
    n, rows = p_all.shape[0], np.arange(p_all.shape[0])
    root = -1
    if rule.greedy_first:
        if np.sum(parents == -1) != 1 or np.any(x_all[:, 0] != np.argmax(p_all[:, 0], axis=1)):
            raise InvalidArgument("with greedy_first the tree needs one root child, node 0 = argmax target_probs[:, 0]")
        root = 0
    # node i's token is judged by the law at its parent's position, row parents[i] + 1
    prob = p_all[rows[:, None], parents[None, :] + 1, x_all]  # [N, nodes]
    ok = prob > typical_thresholds(p_all, rule)[:, parents + 1]
    paths = _leaf_paths(parents, root)
    accepted = np.zeros((n, len(paths)), dtype=np.int64)
    likelihood = np.zeros((n, len(paths)))
    for j, path in enumerate(paths):
        prefix_ok = np.cumprod(ok[:, path], axis=1).astype(bool)
        accepted[:, j] = prefix_ok.sum(axis=1)
        likelihood[:, j] = np.log(np.where(prefix_ok, prob[:, path], 1.0)).sum(axis=1)
    longest = accepted.max(axis=1)
    # the longest accepted prefix, then the likeliest, then the first path in Medusa's order
    best = np.argmax(np.where(accepted == longest[:, None], likelihood, -np.inf), axis=1)
    start = 1 if rule.greedy_first else 0
    depth = start + max(len(path) for path in paths)  # the tree's depth, node 0 included
    out = np.full((n, depth + 1), -1, dtype=np.int64)
    out[:, 0] = x_all[:, 0]
    after = np.full(n, root + 1)  # the row of the law after the accepted tokens
    for b in range(n):
        nodes = paths[best[b]][: longest[b]]
        out[b, start:start + len(nodes)] = x_all[b, nodes]
        if nodes:
            after[b] = nodes[-1] + 1
    if not rule.greedy_first:
        out[rows, longest] = draw_rows(p_all[rows, after], rng)
        if rule.argmax_correction:
            # vLLM V0: a rejected position takes argmax p; a fully accepted path keeps its sampled bonus token
            rejected = longest < depth - start
            out[rows[rejected], longest[rejected]] = np.argmax(p_all[rows[rejected], after[rejected]], axis=1)
    return out


def _leaf_paths(parents: np.ndarray, root: int) -> list[list[int]]:
    """Node lists of the paths from below ``root`` (-1: the context) to each leaf, in Medusa's order."""
    children: dict[int, list[int]] = {}
    for i, parent in enumerate(parents.tolist()):
        children.setdefault(parent, []).append(i)
    paths: list[tuple[tuple, list[int]]] = []

    def walk(node: int, ranks: tuple, nodes: list[int]) -> None:
        kids = children.get(node, [])
        if not kids:
            paths.append((ranks, nodes))
        for rank, kid in enumerate(kids):
            walk(kid, ranks + (rank,), nodes + [kid])

    walk(root, (), [])
    return [nodes for _, nodes in sorted(paths, key=lambda item: item[0], reverse=True)]


def typical_tv_grid(target: LM, draft: LM, prefix: tuple, shape: TreeShape, length: int, epsilons, deltas, *,
                    greedy_first: bool, entropy_offset=Fraction(1, 100000)) -> dict[tuple[Fraction, Fraction], Fraction]:
    """(epsilon, delta) -> TV(typical-acceptance generation law, autoregressive law) over ``length`` tokens, exactly."""
    from specmath.laws import tv_distance
    from specmath.speculative.variants import autoregressive_law

    wanted = autoregressive_law(target, prefix, length)
    grid = {}
    for epsilon in epsilons:
        for delta in deltas:
            rule = TypicalAcceptance(epsilon, delta, entropy_offset, greedy_first)
            grid[rule.epsilon, rule.delta] = tv_distance(typical_generation_law(target, draft, prefix, shape, length, rule), wanted)
    return grid
