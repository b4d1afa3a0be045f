"""Run the tree audit: draft trees, call the tree sampler, complete its rounds, test them, probe edge draws.

Notation: p = target law, q = draft law, gamma = draft tokens per round (a tree's nodes),
alpha = sum_x min(p(x), q(x)); d = the tree's depth.

For each case of the tree battery (``specmath.audit.trees.cases``) and a tree adapter
(``specmath.audit.trees.adapters``):

1. **rounds**: N trees drafted by the auditor as the adapter's ``children`` says
   (``specmath.audit.trees.drafts``), handed over fresh in chunks (at most ``BATCH_ELEMENTS``
   probabilities per call), the output read strictly (``specmath.audit.trees.output``); an exception
   or invalid output ends the case with an ERROR, never a loss;
2. **completion**: each emitted tuple is completed to d + 1 tokens with the auditor's own draws from p;
3. **tests**: G-tests of the completed law against A(d + 1) and of its d + 1 per-position marginals
   (``specmath.audit.power``), at looks N/16..N in sequential mode;
4. **edge probes**: for each edge ("zero": a uniform exactly 0; "max": the largest below 1) and each
   draw k = 0..nodes of the sampler's generator, one tree (``TreeDrafts.probe_tree``) whose children
   the edge decides, as a batch of one; what it emits must be a p-sample's start of positive
   probability (A(emitted) > 0: a token of p = 0 accepted at u = 0 fails here), and nothing may raise.

There is no replay: tree samplers declare no draw order. The report is the chain audit's
(``AuditReport``, ``specmath.audit.rounds.report``), with gamma = the tree's nodes.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, replace

import numpy as np

from specmath.audit.edge_draws import EDGE_VALUES, EDGES, edge_generator
from specmath.audit.power import looks, run_tests, tests_per_case
from specmath.audit.rounds.adapters import make_generator
from specmath.audit.rounds.calls import BATCH_ELEMENTS, SamplerCalls, SamplerFailure
from specmath.audit.rounds.runner import AuditReport, CaseResult, run_cases, test_level, versions
from specmath.audit.trees.adapters import TreeAdapter
from specmath.audit.trees.cases import TREE_BATTERY, TreeAuditCase
from specmath.audit.trees.drafts import TreeDrafts
from specmath.audit.trees.output import tree_tokens
from specmath.settings import AuditSettings, as_settings

__all__ = ["run_tree_case", "run_tree_audit", "tree_rounding_slack"]


def tree_rounding_slack(cases, n: int) -> float:
    """An upper bound on P(some audited round of a lossless float64 tree sampler differs from an exact one).

    A handed row (2 nodes + 1 per round) is within TV V 2^-53 of its exact law; each of the auditor's
    draws by inverse CDF (nodes drafts, at most d + 1 completions) within V^2 2^-53 (each of V cumulative
    sums errs by at most V 2^-53). By a coupling, N rounds differ from exact ones with probability at
    most N ((2 nodes + 1) V + (nodes + d + 1) V^2) 2^-53; summed over the cases.
    """
    return sum(n * ((2 * c.nodes + 1) * c.vocab_size + (c.nodes + c.depth + 1) * c.vocab_size**2) * 2.0**-53 for c in cases)


@dataclass
class TreeCalls(SamplerCalls):
    """The calls of one tree case: fresh arrays each call, output read strictly, writes into inputs noticed."""

    drafts: TreeDrafts

    def trees(self, tokens: np.ndarray, contexts: np.ndarray, generator, where: str) -> tuple[np.ndarray, np.ndarray]:
        """One call on these trees: (lengths, ids [N, depth + 1]) of what the sampler emitted."""
        parents, target_probs, draft_probs = self.drafts.arrays(contexts)
        handed = (parents, target_probs, draft_probs, tokens.copy())
        try:
            output = self.adapter.sample_tree(*handed, generator)
            lengths, ids = tree_tokens(output, self.drafts.parents, tokens, self.drafts.vocab)
        except Exception as exc:
            raise self._failure(exc, where, generator) from exc
        if self.writes is None:
            changed = self.drafts.wrote_into(contexts, tokens, handed)
            self.writes = None if changed is None else f"{where}: {changed}"
        return lengths, ids

    def rounds(self, tokens: np.ndarray, contexts: np.ndarray, generator, first: int, rng) -> Counter:
        """Rounds ``first``.. in chunks: the counts of the completed tuples."""
        chunk = max(1, BATCH_ELEMENTS // ((2 * self.drafts.nodes + 1) * self.drafts.vocab))
        counts: Counter = Counter()
        for start in range(0, len(tokens), chunk):
            part = slice(start, start + chunk)
            here = f"rounds {first + start}..{first + start + len(tokens[part]) - 1} (one call)"
            lengths, ids = self.trees(tokens[part], contexts[part], generator, here)
            rows, frequency = np.unique(self.drafts.complete(ids, lengths, rng), axis=0, return_counts=True)
            counts.update(dict(zip(map(tuple, rows.tolist()), frequency.tolist(), strict=True)))
        return counts


def _tests(case: TreeAuditCase, counts: Counter, level: float, power: float, final: bool) -> list:
    tests = run_tests(case.expected(), counts, level, power, final, cache=case._cache if final else None)
    # the last position of a completed round holds a final token or the completion's draw: not "the bonus"
    return [replace(t, name=t.name.removesuffix(" (bonus)")) for t in tests]


def _probe(result: CaseResult, case: TreeAuditCase, adapter: TreeAdapter, calls: TreeCalls, edge: str, k: int) -> None:
    tokens, contexts = calls.drafts.probe_tree(edge)
    probe = {"edge": edge, "k": k, "uniform": EDGE_VALUES[(adapter.generator_kind, edge)], "drafts": tokens.tolist(),
             "emitted": None, "problem": None}
    result.probes.append(probe)
    where = (f"{edge} probe k={k} (draw {k} = {probe['uniform']}; tree tokens {tokens.tolist()}, "
             f"parents {case.parents.tolist()})")
    try:
        lengths, ids = calls.trees(tokens[None], contexts[None], edge_generator(adapter.generator_kind, k, edge), where)
    except SamplerFailure as failure:  # an exception or invalid output on valid input: an error, not a loss
        probe["problem"], probe["raised"] = failure.text, True
        result.exception = result.exception or failure.cause
        return
    emitted = tuple(ids[0, : lengths[0]].tolist())
    probe["emitted"] = list(emitted)
    context, chance = (), 1
    for token in emitted:
        chance *= case.target(context)[token]
        context += (token,)
    if chance == 0:
        probe["problem"] = f"{where}: emitted {emitted}, which no p-sample starts with (exact probability 0)"


def run_tree_case(adapter: TreeAdapter, case: TreeAuditCase, settings: AuditSettings, level: float) -> CaseResult:
    """Audit ``adapter`` on one tree case with ``settings`` (its n, this case's seed, its looks, its power), each
    test at ``level``: rounds, completion and tests at the looks, then edge probes."""
    n, seed, sequential, power = settings.n, settings.seed, settings.sequential, settings.power
    start = time.perf_counter()
    result = CaseResult(case.name, case.description, case.nodes, case.vocab_size)
    drafts = TreeDrafts(case, adapter.children)
    calls = TreeCalls(adapter, drafts)
    drafts_rng, completion_rng = np.random.default_rng([seed, 1]), np.random.default_rng([seed, 2])
    generator = make_generator(adapter.generator_kind, seed)
    counts: Counter = Counter()
    rounds = 0
    for look in looks(n, sequential):
        tokens, contexts = drafts.draw(look - rounds, drafts_rng)
        try:
            counts.update(calls.rounds(tokens, contexts, generator, rounds, completion_rng))
        except SamplerFailure as failure:
            result.error, result.invalid_output, result.exception = failure.text, failure.invalid, failure.cause
            break
        rounds = look
        result.tests = _tests(case, counts, level, power, final=False)
        if any(t.rejects for t in result.tests):
            break
    result.n = sum(counts.values())
    if result.n:
        result.tests = _tests(case, counts, level, power, final=True)
    for edge in EDGES:
        for k in range(case.nodes + 1):
            _probe(result, case, adapter, calls, edge, k)
    result.input_writes = calls.writes
    result.seconds = time.perf_counter() - start
    return result


def run_tree_audit(adapter: TreeAdapter, cases: tuple[TreeAuditCase, ...] = TREE_BATTERY,
                   settings: AuditSettings | str | None = None) -> AuditReport:
    """Audit ``adapter`` on tree ``cases`` with ``settings`` (an ``AuditSettings``, a profile name, or None: ``ci``):
    a lossless float64 tree sampler fails with probability <= settings.family_level; case i runs with seed
    settings.seed + i.

    The float rounding slack s (``tree_rounding_slack``) is set aside and each test runs at
    (family_level - s) / (tests x looks) (Bonferroni), as ``specmath.audit.rounds.runner.run_audit`` does.
    Sequential mode stops a case at its first rejecting look and the audit at its first failed case.
    """
    settings = as_settings(settings)
    slack = tree_rounding_slack(cases, settings.n)
    level = test_level(settings.family_level, slack,
                       sum(tests_per_case(c.depth) for c in cases) * len(looks(settings.n, settings.sequential)))
    start = time.perf_counter()
    results, not_run = run_cases(cases, settings.sequential, lambda index, case: run_tree_case(
        adapter, case, settings.replace(seed=settings.seed + index), level))
    description = f"{adapter.description.rstrip('.')}; {adapter.children} children drafted by the auditor"
    return AuditReport(adapter.name, description, settings, results, not_run,
                       time.perf_counter() - start, versions(adapter), slack, level)
