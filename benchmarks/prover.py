"""Speed of the exact prover for one speculative round.

Proving one round lossless, exactly over Fractions, two equivalent ways:
* literal: the law of the round's emitted tuple continued by plain target sampling to gamma + 1
  tokens (``completed_round_law``) == the autoregressive law of gamma + 1 target tokens;
* by positions (``prove_round``): the round law, then at every node of the draft tree the next
  emitted token's conditional law == p(. | prefix node) (equivalent, proved in the tests; it never
  builds the V^(gamma+1) sequences).
Target and draft are seeded, context-dependent random toy LMs (``random_toy_lm``); each check
starts from fresh LMs, so the time includes computing every law the round touches.

Prints, in one run:
1. the headline: gamma = 4, vocabulary 8, both checks (target: under 2 s);
2. the replay interpreter ``exact(speculative_round)`` against the direct recursion ``round_law``
   on small cases (the ratio says why ``round_law`` exists);
3. the frontier (``prove_round``): for each gamma, the largest vocabulary that proves within the limit
   (a row stops when the next size is predicted to exceed 2.5 x the limit, from time ~ V^(gamma+1)).

Run:  .venv/bin/python benchmarks/prover.py            (full, a few minutes)
      .venv/bin/python benchmarks/prover.py --quick    (headline and ratios only)
Timings are of one run each: CPU seconds of this process (``time.process_time``, robust to other
jobs sharing the machine; the frontier uses them) and wall-clock seconds (noisy when shared).
"""

from __future__ import annotations

import argparse
import time

from specmath.exact import exact
from specmath.speculative import autoregressive_law, completed_round_law, round_law, speculative_round
from specmath.speculative.round_prover import prove_round
from specmath.speculative.toy_lm import random_toy_lm

VOCABULARIES = [2, 3, 4, 5, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 128, 160, 192, 256]
VOCABULARIES += [320, 384, 448, 512, 640, 768, 1024]


def timed(fn, *args) -> tuple[object, float, float]:
    """(result, CPU seconds, wall seconds) of fn(*args)."""
    cpu, wall = time.process_time(), time.perf_counter()
    result = fn(*args)
    return result, time.process_time() - cpu, time.perf_counter() - wall


def literal_proof(vocab: int, gamma: int, seed: int = 0) -> tuple[bool, float, float]:
    """completed_round_law == autoregressive_law on fresh random toy LMs; (lossless, CPU s, wall s)."""
    target, draft = random_toy_lm(vocab, seed), random_toy_lm(vocab, seed + 1)
    return timed(lambda: completed_round_law(target, draft, (0,), gamma) == autoregressive_law(target, (0,), gamma + 1))


def positional_proof(vocab: int, gamma: int, seed: int = 0) -> tuple[bool, float, float]:
    """prove_round on fresh random toy LMs; (lossless, CPU s, wall s)."""
    target, draft = random_toy_lm(vocab, seed), random_toy_lm(vocab, seed + 1)
    return timed(lambda: prove_round(target, draft, (0,), gamma).lossless)


def replay_vs_recursion(vocab: int, gamma: int, seed: int = 0) -> tuple[float, float, bool]:
    """CPU seconds of exact(speculative_round).law and of round_law on the same pair, and whether they agree."""
    target, draft = random_toy_lm(vocab, seed), random_toy_lm(vocab, seed + 1)
    replay, replay_cpu, _ = timed(lambda: exact(speculative_round, target, draft, (0,), gamma).law)
    # fresh LMs, so neither side profits from the other's cached laws
    target, draft = random_toy_lm(vocab, seed), random_toy_lm(vocab, seed + 1)
    direct, direct_cpu, _ = timed(lambda: round_law(target, draft, (0,), gamma))
    return replay_cpu, direct_cpu, replay == direct


def frontier(limit: float, gammas: range) -> list[tuple[int, int, float]]:
    """For each gamma, the largest vocabulary in VOCABULARIES that proves within ``limit`` seconds."""
    rows = []
    for gamma in gammas:
        best, best_time, last = None, 0.0, None
        for vocab in VOCABULARIES:
            if last is not None:
                predicted = last[1] * (vocab / last[0]) ** (gamma + 1)
                if predicted > 2.5 * limit:
                    break
            lossless, seconds, wall = positional_proof(vocab, gamma)
            assert lossless, f"round not lossless at V={vocab}, gamma={gamma}"
            print(f"  gamma={gamma} V={vocab:>4}: {seconds:7.3f} s CPU ({wall:.3f} s wall)", flush=True)
            if seconds > limit:
                break
            best, best_time, last = vocab, seconds, (vocab, seconds)
        rows.append((gamma, best, best_time))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="headline and replay ratios only")
    parser.add_argument("--limit", type=float, default=10.0, help="seconds allowed for the frontier (default 10)")
    parser.add_argument("--max-gamma", type=int, default=7)
    args = parser.parse_args()

    print("headline: one round, gamma=4, V=8, context-dependent toy LMs (target < 2 s):")
    for name, check in (("literal C == AR", literal_proof), ("by positions", positional_proof)):
        lossless, seconds, wall = check(8, 4)
        print(f"  {name:<16} lossless={lossless}  {seconds:.3f} s CPU  ({wall:.3f} s wall)")

    print("\nreplay interpreter vs direct recursion (round law only):")
    print(f"  {'V':>3} {'gamma':>5} {'exact(program) CPU s':>21} {'round_law CPU s':>16} {'ratio':>8} equal")
    for vocab, gamma in [(2, 2), (3, 3), (4, 3), (4, 4), (8, 2), (8, 3), (8, 4)]:
        replay, direct, equal = replay_vs_recursion(vocab, gamma)
        print(f"  {vocab:>3} {gamma:>5} {replay:>21.3f} {direct:>16.4f} {replay / direct:>8.1f} {equal}")
    if args.quick:
        return

    print(f"\nfrontier: the largest vocabulary proving one round within {args.limit:g} CPU s, per gamma:")
    rows = frontier(args.limit, range(1, args.max_gamma + 1))
    print(f"\n  {'gamma':>5} {'largest V':>9} {'CPU s':>8}")
    for gamma, vocab, seconds in rows:
        print(f"  {gamma:>5} {vocab if vocab else '-':>9} {seconds:>8.3f}")


if __name__ == "__main__":
    main()
