"""Block verification (Sun et al. 2024): verify the drafted block jointly, never worse than token-wise.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)). Write p_i = p(. | prefix x_1..x_i), q_i = q(. | prefix x_1..x_i).

Token-wise verification stops at the first rejected position. Block verification keeps a running
weight and decides how long a prefix to keep by looking at the whole block:

    w_0 = 1,   w_i = min(1, w_{i-1} p_{i-1}(x_i) / q_{i-1}(x_i))                 (i = 1..gamma)
    r_i(x) = max(0, w_i p_i(x) - q_i(x)),   h_i = |r_i| / (|r_i| + 1 - w_i)      (i < gamma),  h_gamma = w_gamma
    going backwards from i = gamma, keep the first i whose coin h_i comes up (tau = i), tau = 0 if none;
    emit x_1..x_tau and then y ~ norm(r_tau) (tau < gamma) or the bonus y ~ p_gamma (tau = gamma).

For gamma = 1 this is the standard step (h_1 = min(1, p/q)). The paper proves it lossless and optimal
in expected accepted tokens among verifiers that see only the drafted path's laws; here both claims
are *checked* exactly: ``block_generation_law == autoregressive_law`` and
E[accepted](block) >= E[accepted](token-wise) on every tested pair. The paper's motivating example
(p = {a: 1/3, b: 2/3}, q = {a: 2/3, b: 1/3}, gamma = 2) gives 10/9 token-wise and 11/9 here.

Reference: Z. Sun, U. Mendlovic, Y. Leviathan, A. Aharoni, A. Beirami, J. H. Ro, A. T. Suresh,
"Block verification accelerates speculative decoding", ICLR 2025, arXiv 2403.10444. The algorithm
above is reconstructed from the paper's description; its losslessness and the paper's 10/9 vs 11/9
example are re-derived exactly by this module's tests, not taken on trust. The example pair lives
in ``specmath.speculative.examples`` (``PAPER_EXAMPLE``, importable from here too).
"""

from __future__ import annotations

from fractions import Fraction

from specmath.laws import Law, LawError, check_same_vocabulary
from specmath.program import coin, draw, tick
from specmath.speculative.examples import PAPER_EXAMPLE
from specmath.speculative.round import LM, drafted_round
from specmath.speculative.variants import RoundVariant

__all__ = [
    "BLOCK",
    "block_weights",
    "block_accept",
    "block_round",
    "block_round_law",
    "block_generation_law",
    "block_vs_tokenwise",
    "PAPER_EXAMPLE",
]


def block_weights(p_laws: tuple, tokens: tuple, q_laws: tuple) -> tuple[list[Fraction], list[Fraction], list[dict]]:
    """The running weights w_0..w_gamma, stop probabilities h_0..h_gamma and residual weights r_0..r_{gamma-1}.

    ``p_laws`` holds p_0..p_gamma (gamma + 1 target laws), ``q_laws`` q_0..q_{gamma-1}.
    """
    gamma = len(tokens)
    if len(p_laws) != gamma + 1 or len(q_laws) != gamma:
        raise LawError(f"block verification needs gamma + 1 target laws and gamma draft laws for gamma = {gamma}")
    weights = [Fraction(1)]
    for i, x in enumerate(tokens):
        if q_laws[i].prob(x) == 0:
            raise LawError(f"draft token {x!r} at position {i} has draft probability 0: it cannot have been drawn")
        # w_i = min(1, w_{i-1} p(x_i) / q(x_i)): how much of the path's draft mass the target still covers
        weights.append(min(Fraction(1), weights[-1] * p_laws[i].prob(x) / q_laws[i][x]))
    stops, residuals = [], []
    for i in range(gamma):
        check_same_vocabulary(p_laws[i], q_laws[i], p_name=f"target law {i}", q_name=f"draft law {i}")
        # r_i(x) = max(0, w_i p_i(x) - q_i(x)): the target mass the draft under-covers after keeping i tokens
        excess = {x: max(Fraction(0), weights[i] * p_laws[i][x] - q_laws[i][x]) for x in p_laws[i]}
        mass = sum(excess.values(), Fraction(0))
        residuals.append(excess)
        # h_i = |r_i| / (|r_i| + 1 - w_i); 0 when there is nothing to resample
        stops.append(mass / (mass + 1 - weights[i]) if mass else Fraction(0))
    stops.append(weights[gamma])
    return weights, stops, residuals


def block_accept(target: LM, prefix: tuple, tokens: tuple, q_laws: tuple):
    """Sampling program: block-verify drafted ``tokens`` (drawn from ``q_laws``); return the emitted tuple.

    Coins h_gamma, h_{gamma-1}, ... are flipped from the end; the first that comes up fixes tau.
    """
    if len(tokens) != len(q_laws):
        raise LawError(f"block_accept got {len(tokens)} draft tokens but {len(q_laws)} draft laws")
    # one target forward pass gives p_0..p_gamma, exactly as for token-wise verification
    yield tick("target")
    p_laws = tuple(target(prefix + tokens[:i]) for i in range(len(tokens) + 1))
    _, stops, residuals = block_weights(p_laws, tokens, q_laws)
    tau = 0
    for i in range(len(tokens), 0, -1):
        keep = yield coin(stops[i], label="accept")
        if keep:
            tau = i
            break
    if tau == len(tokens):
        y = yield draw(p_laws[tau], label="bonus")
    else:
        y = yield draw(Law.from_weights(residuals[tau], name=f"block residual {tau}"), label="resample")
    return tokens[:tau] + (y,)


def block_round(target: LM, draft: LM, prefix: tuple, gamma: int):
    """Sampling program: ``draft_block`` (unchanged) then ``block_accept``; returns the emitted tuple."""
    return (yield from drafted_round(block_accept, target, draft, prefix, gamma))


#: the variant: its round program and the shared laws of ``specmath.speculative.variants``
BLOCK = RoundVariant(block_round, "block")
#: exact law of the tuple one round emits; law of the first ``length`` tokens of repeated rounds
block_round_law = BLOCK.round_law
block_generation_law = BLOCK.generation_law
#: E[accepted draft tokens per round] for token-wise and block verification on the same pair
block_vs_tokenwise = BLOCK.vs_tokenwise
