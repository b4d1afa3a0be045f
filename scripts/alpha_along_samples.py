"""Mean alpha over stretches of new-token positions along the target's own samples (a model-draft pair).

    python scripts/alpha_along_samples.py --pair bundled --new-tokens 160 --stretch 32 --seeds 4

Samples answers to the pair's prompts from the target at the given temperature (no eos stop), scores
each with both models, and prints the mean of alpha_t = sum_x min(p_t(x), q_t(x)) over each stretch
of positions (``specmath.lm.acceptance``). Notation: p = target law, q = draft law.
"""

from __future__ import annotations

import argparse

import torch

from specmath.lm.acceptance import alpha_along_samples, stretch_means
from specmath.lm.drafts import ModelDraft
from specmath.lm.pairs import load_named_pair
from specmath.sampling_options import SamplingOptions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pair", default="bundled", help="a pair with a model draft (bundled, smollm2:int8, smollm2:trained, ...)")
    parser.add_argument("--new-tokens", type=int, default=160)
    parser.add_argument("--stretch", type=int, default=32, help="positions per printed mean")
    parser.add_argument("--seeds", type=int, default=4, help="samples per prompt (seeds 0..N-1)")
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    pair = load_named_pair(args.pair)
    if not isinstance(pair.draft, ModelDraft):
        raise SystemExit(f"pair {args.pair} has no draft model: alpha along samples compares two models' laws")
    alpha = alpha_along_samples(pair.target, pair.draft.model, pair.prompts, args.new_tokens, range(args.seeds),
                                SamplingOptions(args.temperature), pair.vocab_size)
    print(f"pair {pair.name}: {alpha.shape[0]} samples ({len(pair.prompts)} prompts x {args.seeds} seeds), T={args.temperature}")
    for first, last, mean in stretch_means(alpha, args.stretch):
        print(f"  new tokens {first:4d}-{last:4d}: alpha {mean:.3f}")
    print(f"  all {alpha.shape[1]} positions: alpha {float(alpha.mean()):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
