"""Internal: What a tree sampler returns, read strictly: the emitted rows, or an ``InvalidSamplerOutput`` naming the problem.

Notation: p = target law, q = draft law, gamma = draft tokens per round (a tree's nodes),
alpha = sum_x min(p(x), q(x)); V = vocabulary size, d = the tree's depth.

A tree round emits the tokens of a root-to-node path of the drafted tree (the accepted children, in
order), then one token (resampled after a rejection, or the bonus below a leaf): 1..d + 1 ids. A batch
is an integer array or tensor [N, d + 1], each row's emitted ids followed by -1 (as the chain
samplers' rows, ``specmath.audit.rounds.output.batch_tokens``, which checks the shape, the padding
and the vocabulary). Here, besides: every token but a row's last must be a child of the path before
it in *that row's* tree. With repeated children (i.i.d. drafts) a token may match several siblings;
any of them continues the path.

Output that breaks these rules says nothing about the sampler's law: it is an error, never a loss.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from specmath.audit.rounds.output import InvalidSamplerOutput, batch_tokens

__all__ = ["tree_tokens"]


def tree_tokens(output: Any, parents: np.ndarray, draft_tokens: np.ndarray, vocab: int) -> tuple[np.ndarray, np.ndarray]:
    """(lengths [N], ids [N, depth + 1] int64 padded with -1) of a tree sampler's output, checked.

    ``parents`` [nodes] and ``draft_tokens`` [N, nodes] are the auditor's own copies of the trees handed over.
    """
    depth_of = np.zeros(len(parents), dtype=np.int64)
    for i, parent in enumerate(parents.tolist()):
        depth_of[i] = 1 if parent < 0 else depth_of[parent] + 1
    depth = int(depth_of.max())
    lengths, ids = batch_tokens(output, len(draft_tokens), depth, vocab, width="depth + 1")
    # reach[:, i + 1]: node i is on a path matching the row's emitted tokens so far (column 0: the root)
    reach = np.zeros((len(ids), len(parents) + 1), dtype=bool)
    reach[:, 0] = True
    for level in range(depth):
        accepted = lengths > level + 1  # the token at ``level`` is an accepted child, not the final token
        if not accepted.any():
            break
        below = np.zeros_like(reach)
        for i in np.flatnonzero(depth_of == level + 1).tolist():
            below[:, i + 1] = reach[:, parents[i] + 1] & (draft_tokens[:, i] == ids[:, level])
        bad = np.flatnonzero(accepted & ~below.any(axis=1))
        if bad.size:
            r = int(bad[0])
            offered = sorted({int(draft_tokens[r, i]) for i in np.flatnonzero(depth_of == level + 1)
                              if reach[r, parents[i] + 1]})
            raise InvalidSamplerOutput(
                f"row {r} of the batch is {ids[r].tolist()}: token {int(ids[r, level])} at position {level} is "
                f"followed by more tokens, so it must be an accepted child, but the path before it offers only "
                f"{offered} ({bad.size} bad row(s) of {len(ids)}); a tree round emits a root-to-node path of its "
                "drafted tree, then one token, then -1")
        reach = np.where(accepted[:, None], below, reach)
    return lengths, ids
