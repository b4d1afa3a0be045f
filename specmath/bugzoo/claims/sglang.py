"""Claims about SGLang's speculative decoding (sgl-project/sglang).

Notation: p = target law, q = draft law. Nothing here was run: SGLang's kernels need a CUDA GPU. The
sources were read at the commits named (the stored snapshots of the files), the threads on the tracker.
The exact figures come from specmath's model of the kernel (``specmath.speculative.tree_verifiers.
target_only_verifier``), computed by the tests named in each record.
"""

from __future__ import annotations

from datetime import date

from specmath.bugzoo.claims.record import Claim, Report

__all__ = ["RECORDS", "TARGET_ONLY_RUNNING_SUM", "NGRAM_ZERO_PADDING", "COIN_AT_ZERO", "LOGIT_BIAS_EAGLE", "MIN_P_EAGLE",
           "ROCM_GREEDY_VERIFY"]

_KERNEL = "sgl-kernel/csrc/speculative/speculative_sampling.cuh at b227f632 (TreeSpeculativeSamplingTargetOnly)"
_RESULT = "python/sglang/srt/speculative/cpp_ngram/result.cpp at 0657507f, fillResult lines 9-35 (padding at 31-35)"
_NGRAM = "python/sglang/srt/speculative/ngram_info.py at 5219ee93, NgramVerifyInput._sampling_verify"

TARGET_ONLY_RUNNING_SUM = Claim(
    key="sglang-target-only-running-sum",
    engine="SGLang", repository="sgl-project/sglang", version="commit b227f632 (the kernel's file)",
    checked=date(2026, 12, 1), status="latent",
    claim="`tree_speculative_sampling_target_only` keeps sibling j when its coin is <= p(x_1) + ... + p(x_j): exact for "
          "distinct siblings, which SGLang's EAGLE trees always draft; a repeated sibling is counted twice (i.i.d. "
          "children, in specmath's model: TV 9/175 over 2 tokens on a 2-child tree)",
    evidence="read in the source",
    where=(_KERNEL + ": `prob_acc += target_prob_single` before the accept test",),
    reproducer="pytest tests/bugzoo/test_claim_figures.py -k running_sum",
    note="reachable through the n-gram drafter's padding: claim sglang-ngram-zero-padding",
)

NGRAM_ZERO_PADDING = Claim(
    key="sglang-ngram-zero-padding",
    engine="SGLang", repository="sgl-project/sglang", version="commits 0657507f (result.cpp), 5219ee93 (ngram_info.py)",
    checked=date(2026, 12, 1), status="open",
    claim="the n-gram drafter pads a short draft with token id 0 as extra children of the root (`fillResult`), and at "
          "T > 0 `_sampling_verify` sends that tree to the target-only kernel, whose running sum counts each pad: with "
          "k pads and no n-gram match, token 0 is emitted with probability min(1, k p(0)) instead of p(0) (p(0) = 1/50, "
          "an 8-token draft, 7 pads: 7/50 in specmath's model of the kernel)",
    evidence="read in the source",
    where=(_RESULT, _NGRAM, _KERNEL),
    reproducer="pytest tests/bugzoo/test_claim_figures.py -k ngram_padding (the kernel's rule, exactly; not SGLang)",
    note="read in SGLang's source, not run: SGLang needs a CUDA GPU, and no GPU run was made",
    report=Report(
        title="n-gram speculative decoding over-samples token 0 at T > 0: padded children count in the running sum",
        versions="sgl-project/sglang at 0657507f (cpp_ngram/result.cpp), 5219ee93 (ngram_info.py), b227f632 "
                 "(speculative_sampling.cuh); from reading the code, not from a run",
        reproducer="# launch with --speculative-algorithm NGRAM, --speculative-num-draft-tokens 8, a prompt the n-gram\n"
                   "# table has never seen (no match: fillResult pads 7 children with token 0), temperature 1, and count\n"
                   "# how often the first generated token is token id 0 over many seeded requests; compare with the same\n"
                   "# requests without speculative decoding. The kernel's rule alone, exactly, in specmath:\n"
                   "pytest tests/bugzoo/test_claim_figures.py -k ngram_padding",
        expected="token 0 with probability p(0) at every position, as without speculation",
        observed="by the code: each pad adds p(0) to `prob_acc` before the test `coin <= prob_acc`, so token 0 is kept "
                 "with probability min(1, 7 p(0)) on an 8-token padded draft (0.14 for p(0) = 0.02); suggested fix: pad "
                 "with a sentinel the kernel skips, or stop the sibling walk at the first repeated token",
    ),
)

COIN_AT_ZERO = Claim(
    key="sglang-coin-at-zero",
    engine="SGLang", repository="sgl-project/sglang", version="commit b227f632 (before PR #35798)",
    checked=date(2026, 12, 1), status="fixed",
    fixed_by="PR #35798 (merged August 2026: `coin < prob_acc / threshold_acc` and `target_prob_single > 0`)",
    claim="the target-only kernel accepted when `coin <= prob_acc / threshold_acc` with float32 coins from [0, 1): a "
          "coin of exactly 0 kept a draft of target probability 0 (the same defect class as claim "
          "transformers-accept-at-u-zero)",
    evidence="read in the source",
    where=(_KERNEL, "sgl-project/sglang issue #35771 (closed) and PR #35798 (merged)"),
    upstream="sgl-project/sglang#35771",
)

LOGIT_BIAS_EAGLE = Claim(
    key="sglang-logit-bias-eagle",
    engine="SGLang", repository="sgl-project/sglang", version="releases before PR #11555 (2025)",
    checked=date(2026, 12, 1), status="fixed", fixed_by="PR #11555 (merged October 2025)",
    claim="with EAGLE speculative decoding, `logit_bias` was not applied at verified positions",
    evidence="read in the tracker",
    where=("sgl-project/sglang issue #10617 and PR #11555",),
    upstream="sgl-project/sglang#10617",
)

MIN_P_EAGLE = Claim(
    key="sglang-min-p-eagle",
    engine="SGLang", repository="sgl-project/sglang", version="issue #10617 as of the date checked",
    checked=date(2026, 12, 1), status="unconfirmed",
    claim="with EAGLE speculative decoding, `min_p` was reported not applied at verified positions (the other half of "
          "issue #10617, which is still open)",
    evidence="read in the tracker",
    where=("sgl-project/sglang issue #10617 (open)",),
    upstream="sgl-project/sglang#10617",
    note="not checked in SGLang's current source",
)

ROCM_GREEDY_VERIFY = Claim(
    key="sglang-rocm-greedy-verify",
    engine="SGLang", repository="sgl-project/sglang", version="releases before PR #37134 (2026)",
    checked=date(2026, 12, 1), status="fixed", fixed_by="PR #37134 (merged August 2026)",
    claim="on ROCm, EAGLE verification committed argmax at T > 0 (`_is_hip` beside `is_all_greedy` in `eagle_sample`)",
    evidence="read in the tracker",
    where=("sgl-project/sglang PR #31214 (closed unmerged) and PR #37134 (merged), which describe the same line",),
    upstream="sgl-project/sglang#37134",
)

#: this engine's claims (joined into ``specmath.bugzoo.claims.CLAIMS``)
RECORDS: tuple[Claim, ...] = (TARGET_ONLY_RUNNING_SUM, NGRAM_ZERO_PADDING, COIN_AT_ZERO, LOGIT_BIAS_EAGLE,
                                    MIN_P_EAGLE, ROCM_GREEDY_VERIFY)
