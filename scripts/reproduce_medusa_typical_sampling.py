"""Medusa's ``evaluate_posterior`` at temperature > 0: fast=True is deterministic, fast=False raises TypeError.

    git -C Medusa show e2a5d20:medusa/model/utils.py > medusa_utils.py
    python scripts/reproduce_medusa_typical_sampling.py medusa_utils.py

Notation: p = target law. FasterDecoding/Medusa's ``medusa/model/utils.py`` (commit e2a5d20) needs only
torch; this script loads that file and calls ``evaluate_posterior`` on one small set of candidates, as
``medusa_generate`` does each round:

* ``sampling='typical', fast=True`` (``medusa_generate``'s defaults): keeps candidates with
  p(x) > min(posterior_threshold, posterior_alpha exp(-H(p))); the same best candidate under every seed
  (the docstring: "faster, deterministic decoding"), so with a greedy first token nothing is sampled;
* ``sampling='typical', fast=False``: calls ``get_typical_posterior_mask`` with 6 arguments, and it takes 5:
  TypeError, at every temperature > 0;
* ``sampling='nucleus', fast=False``: runs.

Prints what each call did; exits 0 when those three hold, 1 otherwise.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import sys

import torch


def load(path: str):
    """Medusa's utils module from a file (it imports torch only)."""
    spec = importlib.util.spec_from_file_location("medusa_utils", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("utils", help="medusa/model/utils.py of FasterDecoding/Medusa (e.g. at commit e2a5d20)")
    args = parser.parse_args()
    medusa = load(args.utils)
    print(f"torch {torch.__version__}; evaluate_posterior{inspect.signature(medusa.evaluate_posterior)}")
    generator = torch.Generator().manual_seed(0)
    logits = torch.randn(3, 4, 8, generator=generator)  # 3 candidate paths of 3 tokens (+ the first), vocabulary 8
    candidates = torch.randint(0, 8, (3, 4), generator=generator)
    # medusa_generate's defaults, passed positionally as it does (evaluate_posterior's own are 0.3 and 0.09)
    thresholds = (0.09, 0.3)  # posterior_threshold, posterior_alpha
    best = set()
    for seed in range(20):
        torch.manual_seed(seed)
        candidate, length = medusa.evaluate_posterior(logits, candidates, 0.7, *thresholds, sampling="typical", fast=True)
        best.add((int(candidate), int(length)))
    deterministic = len(best) == 1
    print(f"typical, fast=True, T = 0.7, 20 seeds: best candidate and accepted length {sorted(best)}")
    try:
        medusa.evaluate_posterior(logits, candidates, 0.7, *thresholds, sampling="typical", fast=False)
        raised = None
    except TypeError as error:
        raised = error
    print(f"typical, fast=False, T = 0.7: {'TypeError: ' + str(raised) if raised else 'ran'}")
    torch.manual_seed(0)
    candidate, length = medusa.evaluate_posterior(logits, candidates, 0.7, *thresholds, sampling="nucleus", fast=False)
    print(f"nucleus, fast=False, T = 0.7: ran (best candidate {int(candidate)}, accepted length {int(length)})")
    return 0 if deterministic and raised is not None else 1


if __name__ == "__main__":
    sys.exit(main())
