"""Claims about vLLM's speculative decoding (vllm-project/vllm).

Notation: p = target law, q = draft law. The V0 engine's samplers (``vllm/model_executor/layers``) were
read in the stored snapshots of their files at the commits named; V0 has since been removed from vLLM.

Findings of specmath's own vLLM audits (``specmath audit-generate --endpoint``, the vLLM environment)
are added here as records like the ones below, one per finding, each with its ``Report`` when it is
open and not yet filed; ``python scripts/claim_pages.py`` then writes them into the vLLM section of
docs/explanation/engine-findings.md.
"""

from __future__ import annotations

from datetime import date

from specmath.bugzoo.claims.record import Claim

__all__ = ["RECORDS", "V0_TYPICAL_ACCEPTANCE", "TARGET_PROBS_UNWARPED", "V0_RESIDUAL_CLAMP",
           "SKIPS_ARGMAX_INVARIANT"]

V0_TYPICAL_ACCEPTANCE = Claim(
    key="vllm-v0-typical-acceptance",
    engine="vLLM", repository="vllm-project/vllm",
    version="V0's TypicalAcceptanceSampler (typical_acceptance_sampler.py at 60b5eb0c, removed with V0)",
    checked=date(2026, 12, 1), status="lossy by design",
    claim="opt-in with `spec_decoding_acceptance_method='typical_acceptance_sampler'`, documented as 'allowing for a "
          "higher acceptance rate at the cost of lower quality': a draft token is kept when p(x) > min(epsilon, delta "
          "exp(-H(p))), whatever q was; at the first rejected position it emits argmax p (`_get_recovered_token_ids`), "
          "after a fully accepted draft the sampled bonus token (specmath's model, a 2-token sampled chain on the tree "
          "pair over 3 tokens at Medusa's defaults: TV 3/10; every draft token passes the threshold there, so the "
          "argmax correction never acts)",
    evidence="read in the source",
    where=("vllm/model_executor/layers/typical_acceptance_sampler.py at 60b5eb0c: `_evaluate_accepted_tokens`, "
           "`_get_recovered_token_ids` (argmax)",
           "vllm/model_executor/layers/spec_decode_base_sampler.py at 584e4376: `_create_output`",
           "the help of --spec-decoding-acceptance-method in V0's vllm/engine/arg_utils.py"),
    reproducer="pytest tests/bugzoo/test_claim_figures.py -k typical (specmath's model of the rule)",
)

TARGET_PROBS_UNWARPED = Claim(
    key="vllm-target-probs-unwarped",
    engine="vLLM", repository="vllm-project/vllm", version="V0 before PR #10198 (v0.6.3)", checked=date(2026, 12, 1),
    status="fixed", fixed_by="PR #10198 (merged November 2024)",
    claim="target probabilities were scored with top_p = 1 and temperature = 1 while the draft probabilities were "
          "filtered by the request's top_p",
    evidence="read in the tracker",
    where=("vllm-project/vllm issue #9834 and PR #10198",),
    upstream="vllm-project/vllm#9834",
)

V0_RESIDUAL_CLAMP = Claim(
    key="vllm-v0-residual-clamp",
    engine="vLLM", repository="vllm-project/vllm",
    version="V0's RejectionSampler (rejection_sampler.py at 700e4a36, removed with V0)", checked=date(2026, 12, 1),
    status="lossy by design",
    claim="`_get_recovered_probs` clamps p - q at the smallest positive float (added in PR #2336) before normalising, "
          "to avoid 0/0 at accepted positions; its comment says 'This introduces some drift to the distribution'. Every "
          "token, even one with p = 0, gets at least that mass (float32: 2^-126)",
    evidence="read in the source",
    where=("vllm/model_executor/layers/rejection_sampler.py at 700e4a36, `_get_recovered_probs` and "
           "`_smallest_positive_value`",),
)

SKIPS_ARGMAX_INVARIANT = Claim(
    key="vllm-rejection-sampler-skips-argmax-invariant",
    engine="vLLM", repository="vllm-project/vllm", version="issue #42744 as of the date checked",
    checked=date(2026, 12, 1), status="latent",
    claim="V1's rejection sampler applies only the logits processors that are not argmax-invariant, so min_p and "
          "logit_bias would be skipped at verified tokens; released vLLM refuses speculative requests with min_p or "
          "logit_bias (`_validate_spec_decode`, a validation error), so no user is served the skipped processor",
    evidence="read in the tracker",
    where=("vllm-project/vllm issue #42744 (open)",),
    upstream="vllm-project/vllm#42744",
    note="not run here; the refusal itself is what specmath's vLLM audit reports as REFUSED",
)

#: this engine's claims (joined into ``specmath.bugzoo.claims.CLAIMS``)
RECORDS: tuple[Claim, ...] = (V0_TYPICAL_ACCEPTANCE, TARGET_PROBS_UNWARPED, V0_RESIDUAL_CLAMP, SKIPS_ARGMAX_INVARIANT)
