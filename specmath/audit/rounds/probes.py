"""Edge probes: one round with a uniform exactly 0, or the largest below 1, at a chosen draw.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

For k = 0..gamma and each edge (``specmath.audit.edge_draws``: draw k of the generator is 0.0, or
1 - 2^-53 for numpy, 1 - 2^-24 for torch's float32 uniforms), the drafts are chosen so the edge
decides something a histogram never reaches:

* before position k, the token with the largest ratio p/q (likely accepted);
* at k, the smallest ratio p/q ("zero" edge: often p(x_k) = 0, which ``u <= p/q`` accepts at u = 0),
  or the largest ratio below 1 ("max" edge: a rejection where p and q agree up to rounding, whose
  float residual max(0, p - q) may be all zero);
* k = gamma puts the edge on the first draw after the gamma accept uniforms, the resample draw of a
  sampler that draws its uniforms first; it uses the k = 0 drafts, so the round usually rejects at 0.

The emitted tuple must have positive exact probability (a necessary condition whatever the drafts,
as long as q_i(x_i) > 0) and the sampler must not raise; each probe records its drafts, the edge
value and where it was placed, so a failure says which draw did what. A batched sampler is probed
with a batch of one.
"""

from __future__ import annotations

import numpy as np

from specmath.audit.edge_draws import EDGE_VALUES, EDGES, edge_generator
from specmath.audit.rounds.adapters import Adapter
from specmath.audit.rounds.calls import SamplerCalls, SamplerFailure
from specmath.audit.rounds.cases import AuditCase
from specmath.audit.rounds.replay import record_replay

__all__ = ["probe_drafts", "run_probes", "probe_text"]


def probe_drafts(case: AuditCase, adapter: Adapter, k: int, edge: str) -> tuple:
    """Drafts with the largest p/q before position k and, at k, the smallest p/q ("zero" edge) or
    the largest p/q below 1 ("max" edge; the smallest if none is below 1). Ties: lowest id."""
    k = 0 if k == case.gamma else k
    target, draft = case.models(adapter.warp)
    tokens: tuple = ()
    for j in range(case.gamma):
        p, q = target(tokens), draft(tokens)
        ratios = sorted((p[x] / q[x], x) for x in range(case.vocab_size) if q[x] > 0)
        below_one = [r for r in ratios if r[0] < 1]
        if j != k:
            choice = max(ratios, key=lambda r: (r[0], -r[1]))
        elif edge == "max" and below_one:
            choice = max(below_one, key=lambda r: (r[0], -r[1]))
        else:
            choice = ratios[0]
        tokens += (choice[1],)
    return tokens


def probe_text(probe: dict, gamma: int) -> str:
    """``zero probe k=1 (draw 1 = 0.0, the accept uniform of position 1; drafts [0, 2, 1])``."""
    k = probe["k"]
    role = f"the accept uniform of position {k}" if k < gamma else "the first draw after the accept uniforms"
    return f"{probe['edge']} probe k={k} (draw {k} = {probe['uniform']}, {role}; drafts {probe['drafts']})"


def run_probes(result, case: AuditCase, adapter: Adapter, calls: SamplerCalls) -> None:
    """Every edge probe of ``case``, appended to ``result.probes`` (replayed when the adapter declares its draws)."""
    joint = case.expected(adapter.warp).joint
    for edge in EDGES:
        for k in range(case.gamma + 1):
            _run_probe(result, case, adapter, calls, joint, edge, k)


def _run_probe(result, case: AuditCase, adapter: Adapter, calls: SamplerCalls, joint, edge: str, k: int) -> None:
    tokens = probe_drafts(case, adapter, k, edge)
    generator = edge_generator(adapter.generator_kind, k, edge)
    state = generator.get_state() if adapter.draws else None
    probe = {"edge": edge, "k": k, "uniform": EDGE_VALUES[(adapter.generator_kind, edge)], "drafts": list(tokens),
             "emitted": None, "problem": None}
    result.probes.append(probe)
    where = probe_text(probe, case.gamma)
    try:
        emitted = calls.round(np.array(tokens, dtype=np.int64), calls.drafts.path(tokens), generator, where)
    except SamplerFailure as failure:  # an exception or invalid output on valid input: an error, reported as such
        probe["problem"] = failure.text
        probe["raised"] = True
        if result.exception is None:
            result.exception = failure.cause
        return
    probe["emitted"] = list(emitted)
    if joint.prob(emitted) == 0:
        probe["problem"] = f"{where}: emitted {emitted}, which has exact probability 0"
    if state is not None:
        record_replay(result, case, adapter, state, tokens, emitted, f"{edge} probe k={k}")
