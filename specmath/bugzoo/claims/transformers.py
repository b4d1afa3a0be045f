"""Claims about Hugging Face transformers' assisted generation (``transformers.generation``).

Notation: p = target law, q = draft law. Version 5.24.0 is the latest release on PyPI on the date
checked, installed from PyPI into this project's environment; lines refer to its installed files.
"""

from __future__ import annotations

from datetime import date

from specmath.bugzoo.claims.record import Claim, Report

__all__ = ["RECORDS", "ACCEPT_AT_U_ZERO", "ZERO_RESIDUAL", "RESIDUAL_SOFTMAX", "Q_FROM_RAW_LOGITS"]

_REPRODUCER = "python scripts/reproduce_transformers_speculative_sampling.py"
_VERSIONS = "transformers 5.24.0 (PyPI), torch 2.13.0+cpu, numpy 2.4.6, Python 3.11, x86_64 CPU"
#: the reports' reproducers: torch, numpy and transformers alone (the script above runs both, with checks)
_U_ZERO_CODE = """import numpy as np
import torch
from transformers.generation.utils import _speculative_sampling

torch.manual_seed(0)
for n in [1 << 22] * 9 + [41_102_971 - 9 * (1 << 22)]:
    torch.rand(n)  # skip to seed 0's float32 draw 41,102,971 (CPU), which is exactly 0.0
with np.errstate(divide="ignore"):
    new_logits = torch.tensor(np.log([[[1.0, 0.0], [1.0, 0.0]]]), dtype=torch.float32)  # p = [1, 0]
    candidate_logits = torch.tensor(np.log([[[0.5, 0.5]]]), dtype=torch.float32)  # q = [1/2, 1/2]
print(_speculative_sampling(torch.tensor([[1]]), candidate_logits, 1, new_logits))  # token 1 drafted"""
_ZERO_RESIDUAL_CODE = """import numpy as np
import torch
from transformers.generation.utils import _speculative_sampling

torch.manual_seed(0)
for n in [1 << 22] * 16 + [71_006_344 - 16 * (1 << 22)]:
    torch.rand(n)  # skip to seed 0's float32 draw 71,006,344 (CPU), which is 1 - 2^-24
q = np.array([0.01, 0.49, 0.5, 0.0])
p = q + np.array([-1, 0.5, 0.5, 0]) * q[0] * 2.0**-21  # in float32: p(0) < q(0), p = q elsewhere
with np.errstate(divide="ignore"):
    new_logits = torch.tensor(np.log([p, p])[None], dtype=torch.float32)
    candidate_logits = torch.tensor(np.log([q])[None], dtype=torch.float32)
print(_speculative_sampling(torch.tensor([[0]]), candidate_logits, 1, new_logits))  # token 0 drafted"""

ACCEPT_AT_U_ZERO = Claim(
    key="transformers-accept-at-u-zero",
    engine="Hugging Face transformers", repository="huggingface/transformers", version="5.24.0",
    checked=date(2026, 12, 1), status="open",
    claim="`_speculative_sampling` accepts a drafted token when `r_i <= p(x)/q(x)`, r_i a float32 `torch.rand_like` "
          "uniform that is exactly 0 with probability 2^-24 per draw; at r_i = 0 it accepts a token the target gives "
          "probability 0 (`r < p/q` never does)",
    evidence="run here",
    where=("transformers/generation/utils.py lines 4478-4479 (5.24.0)", _REPRODUCER, "specmath audit hf (zero probes)"),
    reproducer=_REPRODUCER,
    report=Report(
        title="_speculative_sampling accepts a draft token of target probability 0 when torch.rand returns 0.0",
        versions=_VERSIONS,
        reproducer=_U_ZERO_CODE, language="python",
        expected="token 1 is never accepted (p(1) = 0): `is_accepted = r_i < probability_ratio`, with r_i on [0, 1)",
        observed="(tensor([[1, 0]]), tensor(1)): token 1 accepted, then the bonus token; at random uniforms this happens "
                 "in about 2^-24 of the proposals of a token with p = 0",
    ),
)

ZERO_RESIDUAL = Claim(
    key="transformers-zero-residual",
    engine="Hugging Face transformers", repository="huggingface/transformers", version="5.24.0",
    checked=date(2026, 12, 1), status="open",
    claim="after a rejection `_speculative_sampling` divides `clamp(p - q, min=0)` by its sum; when p <= q everywhere in "
          "float32 (p and q equal up to rounding) the sum is 0, the residual is NaN and `torch.multinomial` raises "
          "RuntimeError; only the ensemble path (`assistant_ensemble_weight`) falls back to p",
    evidence="run here",
    where=("transformers/generation/utils.py lines 4485-4499 (5.24.0), the comment at 4493", _REPRODUCER,
           "specmath audit hf (max probe, case equal-up-to-rounding)"),
    reproducer=_REPRODUCER,
    report=Report(
        title="_speculative_sampling raises on a zero residual (p <= q in float32 after a rejection)",
        versions=_VERSIONS,
        reproducer=_ZERO_RESIDUAL_CODE, language="python",
        expected="a token drawn from p: after a rejection with max(0, p - q) = 0 in float32, sample p itself (as the "
                 "ensemble path already does)",
        observed="RuntimeError: probability tensor contains either `inf`, `nan` or element < 0",
    ),
)

RESIDUAL_SOFTMAX = Claim(
    key="transformers-residual-softmax",
    engine="Hugging Face transformers", repository="huggingface/transformers", version="4.36 (before PR #28508)",
    checked=date(2026, 12, 1), status="fixed", fixed_by="PR #28508 (merged January 2024)",
    claim="`_speculative_sampling` resampled from `clamp(p - q, min=0).softmax(dim=-1)` instead of dividing by the sum",
    evidence="read in the tracker",
    where=("huggingface/transformers PR #28508, the diff of src/transformers/generation/utils.py `_speculative_sampling`",),
    upstream="huggingface/transformers#28508",
)

Q_FROM_RAW_LOGITS = Claim(
    key="transformers-q-from-raw-logits",
    engine="Hugging Face transformers", repository="huggingface/transformers",
    version="main at d1123114 (the commit issue #47932 cites)", checked=date(2026, 12, 1), status="fixed",
    fixed_by="PR #48007 (merged August 2026: candidate generators return the processed logits)",
    claim="the DFlash and MTP candidate generators sampled drafts from processor-applied logits but returned the raw "
          "logits as q",
    evidence="read in the tracker",
    where=("huggingface/transformers issue #47932 (closed) and PR #48007",
           "transformers/generation/candidate_generator.py line 1658 (5.24.0): the processed logits re-assigned"),
    upstream="huggingface/transformers#47932",
)

#: this engine's claims (joined into ``specmath.bugzoo.claims.CLAIMS``)
RECORDS: tuple[Claim, ...] = (ACCEPT_AT_U_ZERO, ZERO_RESIDUAL, RESIDUAL_SOFTMAX, Q_FROM_RAW_LOGITS)
