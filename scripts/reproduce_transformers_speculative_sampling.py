"""Two defects of transformers' ``_speculative_sampling``, reproduced with torch and transformers alone.

    python scripts/reproduce_transformers_speculative_sampling.py

Notation: p = target law, q = draft law. ``_speculative_sampling`` (transformers/generation/utils.py)
accepts the drafted token x when ``r_i <= probability_ratio`` with ``r_i = torch.rand_like(...)`` and
``probability_ratio = p(x) / q(x)``; after a rejection it samples ``p_prime = clamp(p - q, min=0)``
divided by its sum. The correct test is r < p(x) / q(x) for r uniform on [0, 1), and a zero residual
(p <= q everywhere, which float32 rounding produces when p and q agree) needs a fallback to p.

1. u = 0. A float32 ``torch.rand`` value is k / 2^24, so r = 0 with probability 2^-24 per draw; then
   ``0 <= 0 / q(x)`` accepts a token the target forbids. The CPU generator of seed 0 gives 0.0 at
   float32 draw 41,102,971 (a scan of its stream), so skipping that many draws puts it on r_0.
   Expected: token 1 (p = 0) is never emitted. Observed: it is.
2. 0/0. p equals q but for 2^-21 of q(0) moved to tokens 1 and 2: in float32, p(0) < q(0) and
   p(y) == q(y) elsewhere (q = [1/100, 49/100, 1/2, 0]). Seed 0's draw 71,006,344 is 1 - 2^-24 > p(0)/q(0), so the draft is
   rejected and ``p_prime.div_(0)`` is NaN. Expected: a token from p. Observed: RuntimeError.

transformers 5.25.0 fixed the first (``is_accepted = r_i < probability_ratio``); the second is still there.
Prints the versions and each observation; exits 0 when each defect behaves as the claim records say for the
installed version (the first reproduces before 5.25.0 and not from it on, the second reproduces), 1 otherwise.
"""

from __future__ import annotations

import sys

import numpy as np
import torch
import transformers
from packaging.version import Version
from transformers.generation.utils import _speculative_sampling

#: float32 draws of ``torch.manual_seed(0)``'s CPU stream that are exactly 0.0 and 1 - 2^-24
ZERO_DRAW, MAX_DRAW = 41_102_971, 71_006_344


#: the first release whose _speculative_sampling accepts with r_i < probability_ratio (claim transformers-accept-at-u-zero)
FIXED_ZERO_ACCEPT = Version("5.25.0")


def seed_zero_skipped_to(draw: int) -> None:
    """Seed the global CPU generator with 0 and draw ``draw`` float32 uniforms (in chunks, to bound memory)."""
    torch.manual_seed(0)
    remaining = draw
    while remaining > 0:
        step = min(remaining, 1 << 22)
        torch.rand(step)
        remaining -= step


def one_round(target: np.ndarray, draft: np.ndarray, token: int) -> list[int]:
    """``_speculative_sampling`` on one drafted token: logits = log(probs) in float32, softmax gives the probs back."""
    with np.errstate(divide="ignore"):
        new_logits = torch.tensor(np.log(np.stack([target, target])), dtype=torch.float32)[None]  # (1, 2, V)
        candidate_logits = torch.tensor(np.log(draft), dtype=torch.float32)[None, None]  # (1, 1, V)
    valid_tokens, _ = _speculative_sampling(torch.tensor([[token]]), candidate_logits, 1, new_logits)
    return valid_tokens[0].tolist()


def main() -> int:
    print(f"transformers {transformers.__version__}, torch {torch.__version__}, numpy {np.__version__}")
    seed_zero_skipped_to(ZERO_DRAW)
    assert torch.rand(1).item() == 0.0, "this torch's CPU stream differs: seed 0's draw 41,102,971 is not 0.0"
    seed_zero_skipped_to(ZERO_DRAW)
    emitted = one_round(np.array([1.0, 0.0]), np.array([0.5, 0.5]), token=1)
    zero_accepts = emitted[0] == 1  # the drafted token, then the bonus token
    print(f"1. p = [1, 0], q = [1/2, 1/2], drafted token 1, r_0 = 0.0: emitted {emitted}"
          f" ({'accepted a token of p = 0' if zero_accepts else 'rejected, as it must be'})")

    # relative 2^-21 at token 0 survives a float32 softmax, relative ~2^-28 at tokens 1 and 2 does not
    q = np.array([0.01, 0.49, 0.5, 0.0])
    moved = q[0] * 2.0**-21
    p = q + np.array([-moved, moved / 2, moved / 2, 0.0])
    with np.errstate(divide="ignore"):
        p32, q32 = (torch.tensor(np.log(x), dtype=torch.float32).softmax(-1) for x in (p, q))
    assert bool((p32 <= q32).all()) and p32[0] < q32[0], "float32 rounding differs here: p <= q does not hold"
    seed_zero_skipped_to(MAX_DRAW)
    try:
        emitted = one_round(p, q, token=0)
        crashed = False
        print(f"2. p = q up to 2^-21, drafted token 0, r_0 = 1 - 2^-24: emitted {emitted}")
    except RuntimeError as error:
        crashed = True
        print(f"2. p = q up to 2^-21, drafted token 0, r_0 = 1 - 2^-24: RuntimeError: {str(error).splitlines()[0]}")
    zero_fixed = Version(transformers.__version__) >= FIXED_ZERO_ACCEPT
    return 0 if zero_accepts != zero_fixed and crashed else 1


if __name__ == "__main__":
    sys.exit(main())
