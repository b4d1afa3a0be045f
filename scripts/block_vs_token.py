"""Expected accepted drafts per round, token-wise against block verification, on the same drafted blocks.

    python scripts/block_vs_token.py --pair bundled --gammas 3 4 5 6 8 --seeds 12 --threads 2

Runs speculative decoding of the pair's prompts (batch 1, ``--new-tokens`` each, seeds 0..N-1) with
token-wise verification, and at every round scores the block the draft proposed under both verifiers
(``specmath.lm.block_verify.expected_accepted``: E[accepted | block], exactly, from the laws). The means
over the rounds are each verifier's E[accepted drafts]; computed on the same blocks, their difference
has a small standard error, which is printed. Notation: p = target law, q = draft law, gamma = drafts
per round; tokens per round = 1 + accepted.
"""

from __future__ import annotations

import argparse

import torch

from specmath.lm.accept_reject import accept_reject
from specmath.lm.block_verify import expected_accepted
from specmath.lm.pairs import load_named_pair
from specmath.lm.speculative_decode import speculative_generate
from specmath.sampling_options import SamplingOptions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pair", default="bundled")
    parser.add_argument("--gammas", type=int, nargs="+", default=[3, 4, 5, 6, 8])
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--seeds", type=int, default=12, help="runs per prompt (seeds 0..N-1)")
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--lean", default="draft", help="as in specmath bench (the laws do not depend on it)")
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    pair = load_named_pair(args.pair, lean=args.lean)
    sampling = SamplingOptions(args.temperature)
    print(f"pair {pair.name}, T={args.temperature}, {len(pair.prompts)} prompts x {args.seeds} seeds x {args.new_tokens} new tokens")
    print("gamma  rounds  tokens/round token-wise  block   gain   (paired standard error)")
    for gamma in args.gammas:
        token_rows, block_rows = [], []

        def scoring(p, q, drafts, generator, lengths=None, token_rows=token_rows, block_rows=block_rows):
            token, block = expected_accepted(p, q, drafts, lengths)
            token_rows.append(token)
            block_rows.append(block)
            return accept_reject(p, q, drafts, generator, lengths)

        for seed in range(args.seeds):
            for i, prompt in enumerate(pair.prompts):
                speculative_generate(pair.target, pair.draft, [list(prompt)], args.new_tokens, gamma=gamma, sampling=sampling,
                                     seed=seed * len(pair.prompts) + i, eos_token_id=pair.eos_token_id,
                                     vocab_size=pair.vocab_size, accept_reject=scoring)
        token, block = torch.cat(token_rows).double(), torch.cat(block_rows).double()
        gain = block - token
        se = float(gain.std()) / len(gain) ** 0.5
        t, b = 1 + float(token.mean()), 1 + float(block.mean())
        print(f"{gamma:5d}  {len(gain):6d}  {t:22.3f}  {b:6.3f}  {100 * (b / t - 1):+5.1f}%  ({se:.3f} tokens)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
