"""Claims about Medusa's reference code (FasterDecoding/Medusa, commit e2a5d20, 2024-04-18, the head).

Notation: p = target law. Lines refer to that commit. ``medusa/model/utils.py`` imports torch alone, so
``scripts/reproduce_medusa_typical_sampling.py`` runs its ``evaluate_posterior`` here, on small tensors.
"""

from __future__ import annotations

from datetime import date

from specmath.bugzoo.claims.record import Claim, Report

__all__ = ["RECORDS", "FAST_MODE", "TYPICAL_TYPE_ERROR", "DOCUMENTED_DEFAULTS"]

_REPRODUCER = ("git -C Medusa show e2a5d20:medusa/model/utils.py > medusa_utils.py && "
               "python scripts/reproduce_medusa_typical_sampling.py medusa_utils.py")
_VERSIONS = "FasterDecoding/Medusa at e2a5d20 (medusa/model/utils.py), torch 2.13.0+cpu, Python 3.11"

FAST_MODE = Claim(
    key="medusa-fast-mode",
    engine="Medusa", repository="FasterDecoding/Medusa", version="commit e2a5d20", checked=date(2026, 12, 1),
    status="lossy by design",
    claim="`medusa_generate` defaults to fast=True, which takes argmax p as each round's first token and keeps the "
          "heads' candidates with p(x) > min(0.09, 0.3 exp(-H(p))): nothing is sampled, as its docstring says "
          "('faster, deterministic decoding'); the README calls relaxing the target distribution the point (specmath's "
          "model: TV 29/32 from p over 3 tokens on the tree pair)",
    evidence="run here",
    where=("medusa/model/medusa_model.py lines 235-261 (fast = True at 249)",
           "medusa/model/utils.py lines 280-281 (argmax when fast), 474-502 (the fast typical test)",
           "README.md line 51 ('Relaxing the requirement of matching the distribution of the original model')"),
    reproducer=_REPRODUCER,
)

TYPICAL_TYPE_ERROR = Claim(
    key="medusa-typical-type-error",
    engine="Medusa", repository="FasterDecoding/Medusa", version="commit e2a5d20", checked=date(2026, 12, 1),
    status="open",
    claim="with sampling='typical' (the default) and fast=False at temperature > 0, `evaluate_posterior` calls "
          "`get_typical_posterior_mask` with 6 arguments and it takes 5: TypeError, so the sampled typical mode never "
          "runs; sampling='nucleus' with fast=False runs",
    evidence="run here",
    where=("medusa/model/utils.py line 504 (the call with `fast`), line 404 (the 5-parameter definition)", _REPRODUCER),
    reproducer=_REPRODUCER,
    report=Report(
        title="evaluate_posterior(sampling='typical', fast=False) raises TypeError at temperature > 0",
        versions=_VERSIONS,
        reproducer=_REPRODUCER + "\n# or, in a Medusa checkout:\n"
                   "python -c \"import torch; from medusa.model.utils import evaluate_posterior as e; "
                   "e(torch.randn(3, 4, 8), torch.randint(0, 8, (3, 4)), 0.7, 0.09, 0.3, sampling='typical', fast=False)\"",
        expected="the best candidate and its accepted length, sampled by typical acceptance (as with sampling='nucleus')",
        observed="TypeError: get_typical_posterior_mask() takes 5 positional arguments but 6 were given (utils.py line "
                 "504 passes `fast`, the definition at line 404 has no such parameter)",
    ),
)

DOCUMENTED_DEFAULTS = Claim(
    key="medusa-documented-defaults",
    engine="Medusa", repository="FasterDecoding/Medusa", version="commit e2a5d20", checked=date(2026, 12, 1),
    status="open",
    claim="the docstrings of `medusa_generate` and `evaluate_posterior` give fast 'Defaults to False' while their "
          "signatures default to True; `evaluate_posterior` and `generate_candidates` default posterior_threshold = 0.3 "
          "and posterior_alpha = 0.09, the reverse of `medusa_generate`'s 0.09 and 0.3 (which it passes on positionally)",
    evidence="read in the source",
    where=("medusa/model/medusa_model.py lines 244-249 (signature), 261 (docstring)",
           "medusa/model/utils.py line 258 (generate_candidates' threshold defaults), 436-437 and 453 (evaluate_posterior)"),
    report=Report(
        title="Docstrings give fast a default of False; evaluate_posterior's threshold defaults are swapped",
        versions="FasterDecoding/Medusa at e2a5d20",
        reproducer="python -c \"import inspect; from medusa.model.utils import evaluate_posterior as e; "
                   "print(inspect.signature(e)); print(e.__doc__)\"",
        expected="docstrings that state the signatures' defaults (fast=True), and one set of threshold defaults "
                 "(posterior_threshold 0.09, posterior_alpha 0.3, as medusa_generate has them)",
        observed="'fast ... Defaults to False.' beside `fast = True`; posterior_threshold=0.3, posterior_alpha=0.09 in "
                 "evaluate_posterior and generate_candidates",
    ),
)

#: this engine's claims (joined into ``specmath.bugzoo.claims.CLAIMS``)
RECORDS: tuple[Claim, ...] = (FAST_MODE, TYPICAL_TYPE_ERROR, DOCUMENTED_DEFAULTS)
