"""Internal: Verifications beyond the article: block verification, multi-draft, sample-match, warps.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

Each entry compares the exact law of the first ``length`` generated tokens with the autoregressive
law of the (warped) target; ``specmath verify NAME`` prints the table and the verdict. The lossy
variants live in ``specmath.bugzoo`` and are deliberately *not* registered here (``specmath verify
--all`` must pass).

References: Sun et al., arXiv 2403.10444 (block verification); Miao et al., arXiv 2305.09781
(SpecInfer multi-draft); Leviathan et al., ICML 2023 (warps as a change of p and q).
"""

from __future__ import annotations

from fractions import Fraction

from specmath.proofs.verification import Verification
from specmath.sampling_options import SamplingOptions
from specmath.speculative import acceptance_rate, autoregressive_law
from specmath.speculative.block import block_generation_law, block_vs_tokenwise
from specmath.speculative.examples import PAPER_EXAMPLE, WORD_DRAFT, WORD_TARGET
from specmath.speculative.multidraft import accepted_length_against_k, multidraft_generation_law, one_hot_drafter
from specmath.speculative.round import speculative_round
from specmath.speculative.sample_match import match_acceptance, sample_match_generation_law, sampled_vs_tokenwise
from specmath.speculative.sampling_warp import warped
from specmath.speculative.toy_lm import ToyLM, warp
from specmath.speculative.variants import variant_generation_law
from specmath.speculative.warped import warp_scenarios

__all__ = ["PROOFS"]




def _block() -> Verification:
    target, draft = PAPER_EXAMPLE
    law = block_generation_law(target, draft, (), 2, 3)
    return Verification(
        "block-verification",
        "block verification (Sun et al. 2024), p = {a: 1/3, b: 2/3}, q = {a: 2/3, b: 1/3}, gamma = 2, 3 tokens",
        law,
        autoregressive_law(target, (), 3),
        extras={f"E[accepted] {k}": v for k, v in block_vs_tokenwise(target, draft, (), 2).items()},
    )


def _multidraft() -> Verification:
    ngram = one_hot_drafter(lambda c: c[-1] if c else "x", WORD_TARGET.vocabulary, name="repeat-last lookup")
    law = multidraft_generation_law(WORD_TARGET, (WORD_DRAFT, WORD_DRAFT, ngram), (), 2, 3)
    return Verification(
        "multi-draft",
        "2 sampled drafts + 1 n-gram (repeat-last) draft, recursive rejection over the tree, gamma = 2, 3 tokens",
        law,
        autoregressive_law(WORD_TARGET, (), 3),
        extras={"E[accepted] with k iid drafts": accepted_length_against_k(WORD_TARGET, WORD_DRAFT, (), 2, [1, 2, 3])},
    )


def _sample_match() -> Verification:
    target, draft = PAPER_EXAMPLE
    p, q = target(()), draft(())
    law = sample_match_generation_law(target, draft, (), 2, 3)
    extras: dict = {"sum p q (sample-match acceptance)": match_acceptance(p, q), "alpha = sum min(p, q)": acceptance_rate(p, q)}
    extras.update({f"E[accepted] {k}": v for k, v in sampled_vs_tokenwise(target, draft, (), 2).items()})
    return Verification(
        "sample-match",
        "sample the target, keep the matching draft prefix; p = {a: 1/3, b: 2/3}, q = {a: 2/3, b: 1/3}, gamma = 2",
        law,
        autoregressive_law(target, (), 3),
        extras=extras,
    )


def _warped() -> Verification:
    w = SamplingOptions(temperature=Fraction(1, 2), top_k=2)
    cases = warp_scenarios(WORD_TARGET, WORD_DRAFT, w, (), 2, 2)
    wanted = autoregressive_law(ToyLM(lambda c: warped(WORD_TARGET(c), w), WORD_TARGET.vocabulary), (), 2)
    return Verification(
        "warped-target",
        f"speculative decoding with {w!r} on both sides is lossless for the warped target (2 tokens)",
        # the round program itself, interpreted exactly, on the warped pair w(p), w(q)
        variant_generation_law(speculative_round, warp(WORD_TARGET, w), warp(WORD_DRAFT, w), (), 2, 2),
        wanted,
        extras={f"TV, {name}": case["tv"] for name, case in cases.items() if name != "warp on both sides (correct)"},
    )


#: name -> zero-argument function returning the Verification (``specmath verify NAME``)
PROOFS = {
    "block-verification": _block,
    "multi-draft": _multidraft,
    "sample-match": _sample_match,
    "warped-target": _warped,
}
