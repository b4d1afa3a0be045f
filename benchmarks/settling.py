"""How a decoder's compiled steps settle: plain steps after a round, and rounds after rounds, by position.

    python benchmarks/settling.py [--pair bundled] [--repeats 24] [--run 32] [--gamma 4] [--no-compile] [--json FILE]

The cost model's calibration (``cost_measure``) times each round and each plain step only after one round, or
several plain steps, have run back to back (``SETTLE``, ``SETTLE_SECONDS``). This prints why. Per repeat, on
the compiled static caches (``--no-compile``: the eager caches) and at a context of the workload's mid-run
length: ``--run`` speculative rounds back to back (the draft proposes gamma tokens, the target verifies them,
``verify_round``, both caches roll back), then ``--run`` plain steps back to back (a 1-token pass and
``plain_step``), each timed alone. The first repeat warms up and is not kept. For each span of positions (the
first call, the second, calls 2-3, 4-7, ...) it prints the median over the repeats and the calls in that span:
if the first calls of a run are slower than the later ones, timing them would not be timing the decoder, which
runs its rounds, or its steps, one after another.
"""

from __future__ import annotations

import argparse
import json
from statistics import median

import torch

from specmath.lm.cost_measure import TimedCalls, workload_context
from specmath.lm.decode_options import DecodeOptions
from specmath.lm.drafts import draft_for
from specmath.lm.pairs import load_named_pair
from specmath.lm.static_cache import cache_class_for

#: the spans of positions in a run whose calls are pooled: [start, stop)
SPANS = ((0, 1), (1, 2), (2, 4), (4, 8), (8, 16), (16, 32), (32, 64))


def settling(pair_name: str, repeats: int, run: int, gamma: int, compile: bool = True) -> dict:
    """{"round_ms": {span: ms}, "plain_step_ms": {span: ms}, ...}: medians by position in a run of back-to-back calls."""
    pair = load_named_pair(pair_name)
    options = DecodeOptions(gamma=gamma, compile=compile).replace(eos_token_id=pair.eos_token_id,
                                                                 vocab_size=pair.vocab_size)
    calls = TimedCalls(pair.target, draft_for(pair.draft, options), pair.prompts[0], options,
                       context=workload_context(pair.prompts, 64), cache_class=cache_class_for(options))
    rounds, steps = [], []
    for r in range(repeats + 1):
        timed_rounds = [sum(calls.round(gamma)) for _ in range(run)]
        timed_steps = [sum(calls.plain_step()) for _ in range(run)]
        if r:
            rounds.append(timed_rounds)
            steps.append(timed_steps)
    spans = [(a, b) for a, b in SPANS if a < run]

    def by_span(runs: list[list[float]]) -> dict[str, float]:
        return {f"{a}-{min(b, run) - 1}": round(1e3 * median(t for one in runs for t in one[a:b]), 3) for a, b in spans}

    return {"pair": pair_name, "gamma": gamma, "compile": compile, "threads": torch.get_num_threads(), "repeats": repeats, "run": run,
            "context": len(calls.context), "round_ms": by_span(rounds), "plain_step_ms": by_span(steps)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pair", default="bundled")
    parser.add_argument("--repeats", type=int, default=24)
    parser.add_argument("--run", type=int, default=32, help="calls back to back in each run")
    parser.add_argument("--gamma", type=int, default=4)
    parser.add_argument("--compile", action=argparse.BooleanOptionalAction, default=True,
                        help="compiled static-cache passes (default) or, with --no-compile, the eager ones")
    parser.add_argument("--json", metavar="FILE", default=None)
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.run < 2 or args.gamma < 1:
        parser.error("--repeats and --gamma take an int >= 1, --run an int >= 2")
    result = settling(args.pair, args.repeats, args.run, args.gamma, args.compile)
    print(f"pair {result['pair']}, {'compiled' if result['compile'] else 'eager'}, gamma {result['gamma']}, "
          f"{result['threads']} threads, context {result['context']}, "
          f"{result['repeats']} repeats of {result['run']} calls back to back (medians, ms)")
    print("  calls  " + "  ".join(f"{span:>7s}" for span in result["round_ms"]))
    for name in ("round_ms", "plain_step_ms"):
        print(f"  {name.split('_')[0]:<6s} " + "  ".join(f"{ms:7.3f}" for ms in result[name].values()))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
