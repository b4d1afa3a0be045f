"""Internal: The auditor's drafts: many rounds' draft tokens at once, and the arrays a sampler is handed for them.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)); w is the warp a sampler declares (None: the identity).

For each round the auditor draws x_1..x_gamma with x_i ~ w(q)(. | x_<i) from its *own* generator, and
hands the sampler the raw (unwarped) rows target_probs[i] = p(. | x_<i), draft_probs[i] = q(. | x_<i).
Rows depend on the drafted prefix, so the prefixes seen are kept as a tree: node 0 is the empty
prefix, and each node stores its raw p and q rows (float64 of the exact laws) and the cumulative
weights of w(q) used to draft from it. A round is then a path of gamma + 1 node ids, and its arrays
are rows of two tables gathered by those ids:

    target_probs = P[nodes]          [N, gamma + 1, V]
    draft_probs  = Q[nodes[:, :-1]]  [N, gamma, V]

Gathering makes new arrays, so every call gets its own fresh copy (a sampler that writes into its
inputs changes nothing the auditor keeps), and ``wrote_into`` compares what the sampler was handed
with the tables afterwards to tell it so.

Drafting is vectorised per position: the rounds are grouped by their current node, and each group
draws by inverse CDF, x = the first index whose cumulative weight exceeds u * total (u uniform on
[0, 1), so a token of weight 0 is never drafted). The uniforms are drawn as an [N, gamma] block, the
order in which drafting round by round would draw them, so the drafts do not depend on how the
rounds are batched.
"""

from __future__ import annotations

import numpy as np

from specmath.audit.rounds.cases import AuditCase
from specmath.sampling_options import SamplingOptions

__all__ = ["RoundDrafts", "first_change"]


class RoundDrafts:
    """The drafted prefixes of one case (under warp w): node ids, raw p/q rows, and w(q)'s cumulative weights."""

    def __init__(self, case: AuditCase, warp: SamplingOptions | None = None) -> None:
        self.case, self.gamma, self.vocab = case, case.gamma, case.vocab_size
        self._draft = case.models(warp)[1]
        self._contexts: list[tuple] = []
        self._children: dict[tuple[int, int], int] = {}
        self._p_rows: list[np.ndarray] = []
        self._q_rows: list[np.ndarray] = []
        self._cdfs: list[np.ndarray | None] = []
        self._tables: tuple[np.ndarray, np.ndarray] | None = None
        self._node(())

    def _node(self, context: tuple) -> int:
        self._contexts.append(context)
        self._p_rows.append(self.case.raw_rows(context, "p"))
        # the bonus position (a full prefix) has no draft row: its q row is never handed out
        self._q_rows.append(self.case.raw_rows(context, "q") if len(context) < self.gamma else self._p_rows[-1])
        self._cdfs.append(None)
        self._tables = None
        return len(self._contexts) - 1

    def child(self, node: int, token: int) -> int:
        """The node of prefix + (token,)."""
        key = (node, token)
        found = self._children.get(key)
        if found is None:
            found = self._children[key] = self._node(self._contexts[node] + (token,))
        return found

    def _cdf(self, node: int) -> np.ndarray:
        cdf = self._cdfs[node]
        if cdf is None:
            law = self._draft(self._contexts[node])
            cdf = self._cdfs[node] = np.cumsum([float(law[x]) for x in range(self.vocab)])
        return cdf

    def draw(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(tokens [n, gamma], nodes [n, gamma + 1]) of n rounds drafted from w(q) with ``rng``."""
        tokens = np.zeros((n, self.gamma), dtype=np.int64)
        nodes = np.zeros((n, self.gamma + 1), dtype=np.int64)
        # u[r, i] decides round r's draft i: row-major, the order a round-by-round drafter draws them in
        uniforms = rng.random((n, self.gamma))
        for i in range(self.gamma):
            u = uniforms[:, i]
            current = nodes[:, i]
            groups, inverse = np.unique(current, return_inverse=True)
            for g, node in enumerate(groups.tolist()):
                members = inverse == g
                cdf = self._cdf(node)
                # the first index whose cumulative weight exceeds u * total has positive weight
                tokens[members, i] = np.searchsorted(cdf, u[members] * cdf[-1], side="right")
            keys, where = np.unique(current * self.vocab + tokens[:, i], return_inverse=True)
            children = np.array([self.child(int(k) // self.vocab, int(k) % self.vocab) for k in keys.tolist()])
            nodes[:, i + 1] = children[where]
        return tokens, nodes

    def path(self, tokens: tuple) -> np.ndarray:
        """The gamma + 1 node ids of one drafted tuple."""
        out = [0]
        for x in tokens:
            out.append(self.child(out[-1], int(x)))
        return np.array(out, dtype=np.int64)

    def _stacked(self) -> tuple[np.ndarray, np.ndarray]:
        if self._tables is None:
            self._tables = (np.stack(self._p_rows), np.stack(self._q_rows))
        return self._tables

    def arrays(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Fresh (target_probs [..., gamma + 1, V], draft_probs [..., gamma, V]) for node paths [..., gamma + 1]."""
        p_table, q_table = self._stacked()
        return p_table[nodes], q_table[nodes[..., :-1]]

    def wrote_into(self, nodes: np.ndarray, tokens: np.ndarray, target_probs: np.ndarray, draft_probs: np.ndarray,
                   draft_tokens: np.ndarray) -> str | None:
        """Which input the sampler changed (compared with the tables), as words, or None."""
        p_table, q_table = self._stacked()
        return first_change((("target_probs", target_probs, p_table[nodes]),
                             ("draft_probs", draft_probs, q_table[nodes[..., :-1]]),
                             ("draft_tokens", draft_tokens, tokens)))


def first_change(arrays) -> str | None:
    """The first entry in which a handed array differs from the auditor's copy, as words, or None.

    ``arrays``: (name, handed, kept) triples. The bytes are compared first (one memcmp each); only a
    changed array is searched for the entry (NaN counts as changed, and so does a zero's sign).
    """
    for name, handed, kept in arrays:
        if handed.tobytes() != kept.tobytes():
            changed = ~(handed == kept)  # NaN counts as changed
            if not changed.any():  # equal values, other bits: a zero's sign
                changed = np.signbit(handed) != np.signbit(kept)
            where = tuple(np.argwhere(changed)[0].tolist())
            return f"{name}[{', '.join(map(str, where))}] changed from {kept[where].item()!r} to {handed[where].item()!r}"
    return None
