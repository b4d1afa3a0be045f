"""Internal: The auditor's draft trees: many rounds' trees at once, the arrays a tree sampler is handed, completions.

Notation: p = target law, q = draft law, gamma = draft tokens per round (a tree's nodes),
alpha = sum_x min(p(x), q(x)).

Every context the audit meets (a drafted path, or an emitted tuple being completed) gets an id in one
table with its float64 p and q rows. A round's tree is then ``tokens`` [N, nodes] and ``contexts``
[N, nodes + 1] (column 0: the empty context; column i + 1: the path to node i, its token included),
and the arrays handed to the sampler are rows of the two tables gathered by those ids, in the layout of
``specmath.speculative.tree_reference``:

    target_probs = P[contexts]                      [N, nodes + 1, V]
    draft_probs  = Q[contexts[:, parents + 1]]      [N, nodes, V]   (node i was drawn from q at its parent)

Gathering makes new arrays, so every call gets its own copies; ``wrote_into`` tells a sampler that
writes into them where it did.

Children are drawn per node in breadth-first order, as the sampler's verifier assumes (``children``):
``iid``, each an independent draw from q(. | parent path); ``without-replacement``, from q with the
node's earlier siblings removed and renormalised; ``top-k``, the j-th most likely token of q for the
j-th sibling (ties to the lower id, as ``specmath.speculative.tree.top_k_tokens``). Draws are by
inverse CDF (``tree_reference.draw_rows``: a token of weight 0 is never drawn).

``complete`` extends each emitted tuple to depth + 1 tokens with the auditor's own draws from p: the
completed law of a lossless round is the autoregressive law (``specmath.audit.trees.cases``).
``probe_tree`` builds the one tree an edge probe hands over (``specmath.audit.trees.runner``).
"""

from __future__ import annotations

import numpy as np

from specmath.audit.rounds.drafts import first_change
from specmath.audit.trees.cases import TreeAuditCase
from specmath.speculative.tree import CHILDREN, top_k_tokens
from specmath.speculative.tree_reference import draw_rows
from specmath.validation import InvalidArgument, check_choice

__all__ = ["TreeDrafts"]


class TreeDrafts:
    """The contexts of one case met so far (ids, p and q rows), and the trees drawn as ``children`` says."""

    def __init__(self, case: TreeAuditCase, children: str) -> None:
        self.case, self.children = case, check_choice(children, "way of drawing children", CHILDREN)
        self.parents = case.parents
        self.depth, self.nodes, self.vocab = case.depth, case.nodes, case.vocab_size
        # node i is sibling number i - first[i] of its parent's children (breadth-first: siblings are contiguous)
        self._rank = np.array([i - self.parents.tolist().index(parent) for i, parent in enumerate(self.parents.tolist())])
        self._contexts: list[tuple] = []
        self._ids: dict[tuple[int, int], int] = {}
        self._p_rows: list[np.ndarray] = []
        self._q_rows: list[np.ndarray] = []
        self._tables: tuple[np.ndarray, np.ndarray] | None = None
        self._context(())

    def _context(self, context: tuple) -> int:
        self._contexts.append(context)
        self._p_rows.append(self.case.raw_rows(context, "p"))
        self._q_rows.append(self.case.raw_rows(context, "q"))
        self._tables = None
        return len(self._contexts) - 1

    def _tables_now(self) -> tuple[np.ndarray, np.ndarray]:
        if self._tables is None:
            self._tables = (np.stack(self._p_rows), np.stack(self._q_rows))
        return self._tables

    def extend(self, at: np.ndarray, tokens: np.ndarray) -> np.ndarray:
        """The context ids of context[at] + (token,), row by row (new contexts are added)."""
        keys, where = np.unique(at * self.vocab + tokens, return_inverse=True)
        ids = []
        for key in keys.tolist():
            parent, token = divmod(key, self.vocab)
            found = self._ids.get((parent, token))
            if found is None:
                found = self._ids[parent, token] = self._context(self._contexts[parent] + (token,))
            ids.append(found)
        return np.array(ids, dtype=np.int64)[where]

    def draw(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(tokens [n, nodes], contexts [n, nodes + 1]) of n trees drafted as ``children`` says."""
        tokens = np.zeros((n, self.nodes), dtype=np.int64)
        contexts = np.zeros((n, self.nodes + 1), dtype=np.int64)
        rows = np.arange(n)
        for i, parent in enumerate(self.parents.tolist()):
            at = contexts[:, parent + 1]
            q = self._tables_now()[1][at]  # [n, V]: q(. | parent path)
            rank = int(self._rank[i])
            if self.children == "top-k":
                order = np.argsort(-q, axis=1, kind="stable")  # most likely first, ties to the lower id
                tokens[:, i] = order[:, rank]
                short = q[rows, tokens[:, i]] <= 0
            else:
                if self.children == "without-replacement":
                    for sibling in range(i - rank, i):
                        q[rows, tokens[:, sibling]] = 0.0  # the next draw is from q without the siblings drawn so far
                short = q.sum(axis=1) <= 0
                tokens[~short, i] = draw_rows(q[~short], rng)
            if short.any():
                context = self._contexts[int(at[np.argmax(short)])]
                raise InvalidArgument(f"tree case {self.case.name}: the draft law at {context!r} has fewer than "
                                      f"{rank + 1} tokens of positive mass, too few for {self.children} children")
            contexts[:, i + 1] = self.extend(at, tokens[:, i])
        return tokens, contexts

    def arrays(self, contexts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Fresh (parents [nodes], target_probs [..., nodes + 1, V], draft_probs [..., nodes, V]) for ``contexts``."""
        p_table, q_table = self._tables_now()
        return self.parents.copy(), p_table[contexts], q_table[contexts[..., self.parents + 1]]

    def wrote_into(self, contexts: np.ndarray, tokens: np.ndarray, handed: tuple) -> str | None:
        """Which of the handed (parents, target_probs, draft_probs, draft_tokens) the sampler changed, as words."""
        kept = (*self.arrays(contexts), tokens)
        names = ("parents", "target_probs", "draft_probs", "draft_tokens")
        return first_change(zip(names, handed, kept, strict=True))

    def complete(self, ids: np.ndarray, lengths: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """[n, depth + 1]: each emitted row, its padding replaced by the auditor's draws from p, in order."""
        out = ids.copy()
        at = np.zeros(len(ids), dtype=np.int64)
        for j in range(self.depth + 1):
            need = lengths <= j
            if need.any():
                # p(. | the tuple so far): what a lossless continuation draws next
                out[need, j] = draw_rows(self._tables_now()[0][at[need]], rng)
            if j < self.depth:
                at = self.extend(at, out[:, j])
        return out

    def probe_tree(self, edge: str) -> tuple[np.ndarray, np.ndarray]:
        """(tokens [nodes], contexts [nodes + 1]) of the tree an edge probe hands over.

        Each node's children are the tokens an edge uniform decides: for the "zero" edge the smallest
        ratio p/q first (often p = 0: ``u <= p/q`` accepts it at u = 0), for the "max" edge the largest
        ratio below 1 first (a rejection where p and q nearly agree), then by ratio; distinct while q
        has tokens left (i.i.d. children cycle through them). Top-k children are the top k, as always.
        """
        tokens = np.zeros(self.nodes, dtype=np.int64)
        contexts = np.zeros(self.nodes + 1, dtype=np.int64)
        for i, parent in enumerate(self.parents.tolist()):
            context = self._contexts[int(contexts[parent + 1])]
            siblings = self._probe_children(context, edge)
            tokens[i] = siblings[int(self._rank[i]) % len(siblings)]
            contexts[i + 1] = self.extend(contexts[parent + 1: parent + 2], tokens[i: i + 1])[0]
        return tokens, contexts

    def _probe_children(self, context: tuple, edge: str) -> tuple:
        p, q = self.case.target(context), self.case.draft(context)
        if self.children == "top-k":
            return top_k_tokens(q, self.nodes)
        ratios = [(p[x] / q[x], x) for x in range(self.vocab) if q[x] > 0]
        if edge == "max":
            return tuple(x for _, x in sorted(ratios, key=lambda r: (r[0] >= 1, -r[0] if r[0] < 1 else r[0], r[1])))
        return tuple(x for _, x in sorted(ratios))
