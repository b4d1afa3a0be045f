"""The pathwise check: speculative output against plain output, token for token, seed by seed.

Notation: p = target law, q = draft law, M = new tokens per call.

An engine that verifies by sample-match (llama.cpp's ``common_sampler_sample_and_accept_n``: the target's
own sampler draws at every position, a drafted token is kept when the draw equals it) emits, for one seed,
the very tokens its plain decoding emits: one uniform per emitted token, drawn in the same order, from the
same logits. Such an engine promises more than a law, and a broken promise shows in a single seed, so it is
checked seed by seed: N generate calls with speculation and N without, from the same seeds, compared token
for token over M tokens; every seed that differs is printed so that it can be rerun alone.

Float caveat: the verify batch computes logits of several positions at once, plain decoding one at a time;
where the engine's kernels differ between the two, a logit may differ in its last bits and, rarely, a draw
falls on the other side of a boundary. So a difference is reported with its position and both tokens, and
the distributional test remains the verdict on the law.

An engine that makes no such promise (node-llama-cpp draws for every row of a verify batch, discarded rows
included, so its stream of uniforms runs ahead after a rejection) is still compared, and its differences
are reported as what they are: expected, not a failure.
"""

from __future__ import annotations

from collections.abc import Sequence

from specmath.audit.engines.protocol import EngineClient
from specmath.sampling_options import SamplingOptions

__all__ = ["pathwise_check"]


def pathwise_check(engine: EngineClient, prompt: Sequence[int], options: SamplingOptions, seeds: int, seed: int,
                   max_new_tokens: int = 16) -> dict:
    """{"promised", "seeds", "max_new_tokens", "differences", "differing_seeds", "first"} for seeds seed..seed+n-1."""
    speculative = engine.generate(prompt, seeds, seed, max_new_tokens, options).tokens
    plain = engine.generate(prompt, seeds, seed, max_new_tokens, options, speculative=False).tokens
    differing, first = [], None
    for i, (a, b) in enumerate(zip(speculative, plain, strict=True)):
        if a != b:
            differing.append(seed + i)
            if first is None:
                at = next(j for j, (x, y) in enumerate(zip(a, b, strict=True)) if x != y)
                first = {"seed": seed + i, "position": at, "speculative": a[at], "plain": b[at]}
    promised = engine.same_tokens_as_plain
    return {"promised": promised, "seeds": seeds, "max_new_tokens": max_new_tokens,
            "differences": len(differing) if promised else 0, "observed_differences": len(differing),
            "differing_seeds": differing[:20], "first": first}
