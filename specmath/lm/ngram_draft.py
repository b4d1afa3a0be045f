"""A distilled n-gram draft: q(. | last n tokens) read from a table, no model forward at all.

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)).

Where verification is nearly free (k(gamma) ~ 1, e.g. with ``packed_linear``), the best draft is the
one that costs nothing: prompt lookup (``drafts.PromptLookupDraft``) when the answer copies the prompt.
When it finds no match, a round is one plain step. This draft fills those rounds. For each context c
of 1..order tokens seen often enough in the target's own answers,

    q(x | c) = mean of the target's p(x | history) over the positions whose history ends in c,

keeping its ``keep`` most probable tokens, renormalised: a distillation of p into a table, after the
n-gram drafts of Stern et al. 2018 (blockwise parallel decoding) and REST (He et al. 2024, drafting
from a datastore). Drafting chains the table: x_1 ~ q(. | c), then the context shifts by x_1, and so on
while the table knows the context (the longest one first). Whether to go on depends on q and the drafted
tokens only, never on p, so speculative sampling stays exactly lossless (Leviathan et al. 2023, Thm 1):
a token the table never proposes still reaches the output through the residual max(p - q, 0).

``NgramTable``: build (``build_ngram_table``), save and load (safetensors: per order the contexts,
offsets into the kept tokens, their q and how often each context was seen). ``NgramDraft`` drafts from
a table; ``LookupNgramDraft`` uses prompt lookup where it matches and the table elsewhere. The SmolLM2
table is built by ``scripts/build_smollm2_ngram.py`` into ``default_table_file()``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import torch

from specmath.lm.drafts import PromptLookupDraft, Proposal
from specmath.lm.generation import Draws
from specmath.lm.warps import warped_probs
from specmath.lm.weight_files import find_weights
from specmath.sampling_options import SamplingOptions
from specmath.validation import check_integer, check_probability

__all__ = ["NgramTable", "build_ngram_table", "NgramDraft", "LookupNgramDraft", "default_table_file"]


def default_table_file() -> Path:
    """SmolLM2's n-gram table (``scripts/build_smollm2_ngram.py``): the clone's, else ``specmath-models``' copy.

    ValueError where neither is (``specmath.lm.weight_files``).
    """
    return find_weights("smollm2_draft/ngram.safetensors", "SmolLM2's n-gram table")


class NgramTable:
    """Per order n: ``context`` (N, n) token ids, ``offsets`` (N + 1,), ``next`` / ``prob`` (M,), ``count`` (N,).

    Context i's law is ``next[offsets[i]:offsets[i+1]]`` with probabilities ``prob[...]`` (summing to 1).
    """

    def __init__(self, orders: dict[int, dict[str, torch.Tensor]], info: dict | None = None) -> None:
        if not orders:
            raise ValueError("an n-gram table needs at least one order")
        self.orders, self.info = orders, dict(info or {})
        self._index: dict[tuple[int, ...], tuple[int, int, int]] = {}
        for n, t in sorted(orders.items()):
            ctx, off = t["context"], t["offsets"]
            if ctx.dim() != 2 or ctx.shape[1] != n or off.numel() != ctx.shape[0] + 1 or t["next"].numel() != t["prob"].numel():
                raise ValueError(f"order {n}: inconsistent table shapes {tuple(ctx.shape)}, {off.numel()} offsets")
            if (t["prob"] < 0).any() or not torch.isfinite(t["prob"]).all():
                raise ValueError(f"order {n}: probabilities must be finite and >= 0")
            bounds = off.tolist()
            for i, key in enumerate(map(tuple, ctx.tolist())):
                self._index[key] = (n, bounds[i], bounds[i + 1])
        self.max_order = max(orders)
        self.max_id = max(int(t["next"].max()) if t["next"].numel() else 0 for t in orders.values())

    def sizes(self) -> dict[int, int]:
        return {n: int(t["context"].shape[0]) for n, t in sorted(self.orders.items())}

    def law(self, seq: Sequence[int]) -> tuple[torch.Tensor, torch.Tensor] | None:
        """(token ids, q) for the longest known context ending ``seq``; None when no context is known."""
        for n in range(min(self.max_order, len(seq)), 0, -1):
            hit = self._index.get(tuple(seq[-n:]))
            if hit is not None:
                order, a, b = hit
                t = self.orders[order]
                return t["next"][a:b], t["prob"][a:b]
        return None

    def save(self, path: str | Path, info: dict | None = None) -> None:
        """Ids as int32 and q as float16 (half the bytes; the warp renormalises q when it is used)."""
        from safetensors.torch import save_file

        compact = {"context": torch.int32, "next": torch.int32, "prob": torch.float16, "count": torch.int32}
        tensors = {f"order{n}.{k}": v.to(compact.get(k, v.dtype)).contiguous() for n, t in self.orders.items() for k, v in t.items()}
        save_file(tensors, str(path), metadata={"info": json.dumps({**self.info, **(info or {})})})

    @classmethod
    def load(cls, path: str | Path) -> NgramTable:
        from safetensors import safe_open

        path = Path(path)
        if not path.is_file():
            raise ValueError(f"n-gram table missing: {path} (build it with scripts/build_smollm2_ngram.py)")
        orders: dict[int, dict[str, torch.Tensor]] = {}
        with safe_open(str(path), "pt") as f:
            info = json.loads((f.metadata() or {}).get("info", "{}"))
            for name in f.keys():
                head, _, field = name.partition(".")
                if not head.startswith("order") or not head[5:].isdigit():
                    raise ValueError(f"{path}: unexpected tensor {name!r} in an n-gram table")
                value = f.get_tensor(name)
                orders.setdefault(int(head[5:]), {})[field] = value.float() if value.is_floating_point() else value.long()
        needed = {"context", "offsets", "next", "prob", "count"}
        for n, t in orders.items():
            if set(t) != needed:
                raise ValueError(f"{path}: order {n} has {sorted(t)}, expected {sorted(needed)}")
        return cls(orders, info)


def build_ngram_table(rows: Sequence[tuple[torch.Tensor, int, torch.Tensor, torch.Tensor]], order: int = 3,
                      keep: int = 16, min_count: int = 2) -> NgramTable:
    """Distil the target's laws into q(. | context) for contexts of 1..order tokens.

    ``rows``: per answer (tokens (T,), prompt_len, top_ids (T, k), top_probs (T, k)) where row t holds the
    target's p for token t + 1 (truncated to its top k); answer positions t >= prompt_len - 1 count.
    A context seen at m >= min_count positions gets q = (1/m) sum of those p, cut to its ``keep`` most
    probable tokens and renormalised.
    """
    order, keep, min_count = (check_integer(v, name, min_value=1) for v, name in ((order, "order"), (keep, "keep"),
                                                                                    (min_count, "min_count")))
    base = 1 + max(max(int(t.max()), int(i.max())) for t, _, i, _ in rows)
    if base ** order >= 2 ** 62:
        raise ValueError(f"contexts of {order} tokens over {base} ids do not fit a 64-bit key")
    orders = {}
    for n in range(1, order + 1):
        keys, ids, probs = [], [], []
        for tokens, prompt_len, top_i, top_p in rows:
            t = torch.arange(max(prompt_len - 1, n - 1), len(tokens) - 1)
            if t.numel() == 0:
                continue
            key = torch.zeros(t.numel(), dtype=torch.long)
            for j in range(n):  # key = sum_j token[t - n + 1 + j] * base^(n - 1 - j)
                key = key * base + tokens[t - n + 1 + j].long()
            keys.append(key)
            ids.append(top_i[t].long())
            probs.append(top_p[t].double())
        key, top_ids, top_probs = torch.cat(keys), torch.cat(ids), torch.cat(probs)
        contexts, which, seen = torch.unique(key, return_inverse=True, return_counts=True)
        # mean p per (context, token): sum over positions, divided by the context's count
        pair, at = torch.unique((which[:, None] * base + top_ids).reshape(-1), return_inverse=True)
        mass = torch.zeros(pair.numel(), dtype=torch.double).index_add_(0, at, top_probs.reshape(-1))
        ctx_of, tok = pair // base, pair % base
        mass = mass / seen[ctx_of]
        ok = seen[ctx_of] >= min_count
        ctx_of, tok, mass = ctx_of[ok], tok[ok], mass[ok]
        # within each context, most probable first; keep the first ``keep``
        order_idx = torch.argsort(mass, descending=True, stable=True)
        order_idx = order_idx[torch.argsort(ctx_of[order_idx], stable=True)]
        ctx_of, tok, mass = ctx_of[order_idx], tok[order_idx], mass[order_idx]
        used, per = torch.unique_consecutive(ctx_of, return_counts=True)
        starts = torch.cumsum(per, 0) - per
        rank = torch.arange(ctx_of.numel()) - torch.repeat_interleave(starts, per)
        sel = rank < keep
        ctx_of, tok, mass = ctx_of[sel], tok[sel], mass[sel]
        per = torch.clamp(per, max=keep)
        total = torch.zeros(used.numel(), dtype=torch.double).index_add_(0, torch.repeat_interleave(torch.arange(used.numel()), per), mass)
        prob = mass / torch.repeat_interleave(total, per)
        digits, rest = [], contexts[used]
        for _ in range(n):
            digits.append(rest % base)
            rest = rest // base
        orders[n] = {"context": torch.stack(digits[::-1], 1), "offsets": torch.cat([torch.zeros(1, dtype=torch.long), torch.cumsum(per, 0)]),
                     "next": tok, "prob": prob.float(), "count": seen[used]}
    return NgramTable(orders, {"order": order, "keep": keep, "min_count": min_count})


class NgramDraft:
    """Drafts x_i ~ warp(q(. | context)) from an ``NgramTable`` while the table knows the context; no forwards.

    ``max_tokens``: at most this many drafts a round (the table's later guesses are rarely accepted,
    while each costs a wider verify pass); ``min_confidence``: stop a row before a draft whose
    max_x q(x) is below it. Both depend on q only, so the decoder stays lossless.
    """

    def __init__(self, table: NgramTable, device: str | torch.device = "cpu", max_tokens: int | None = None,
                 min_confidence: float = 0.0) -> None:
        if max_tokens is not None:
            max_tokens = check_integer(max_tokens, "max_tokens (or None: gamma)", min_value=1)
        min_confidence = check_probability(min_confidence, "min_confidence")
        self.max_tokens, self.min_confidence = max_tokens, min_confidence
        self.table, self.device = table, torch.device(device)
        self.forwards = 0
        self.vocab_size: int | None = None

    def start(self, prompts: Sequence[Sequence[int]], device: torch.device | None = None, vocab_size: int | None = None) -> None:
        if device is not None:
            self.device = torch.device(device)
        if vocab_size is not None and self.table.max_id >= vocab_size:
            raise ValueError(f"the n-gram table proposes token {self.table.max_id}, outside the target's {vocab_size} ids")
        self.vocab_size = vocab_size or self.table.max_id + 1

    def propose(self, tokens: Sequence[Sequence[int]], gamma: int, sampling: SamplingOptions, draws: Draws,
                confidence_threshold: float = 0.0) -> Proposal:
        V = self.vocab_size
        if V is None:
            raise ValueError("call start() before propose()")
        B = len(tokens)
        seqs = [list(t) for t in tokens]
        drafted: list[list[int]] = [[] for _ in range(B)]
        active = [True] * B
        qs = []
        threshold = max(confidence_threshold, self.min_confidence)
        for _ in range(min(gamma, self.max_tokens or gamma)):
            q = torch.zeros(B, V)
            for b in range(B):
                law = self.table.law(seqs[b]) if active[b] else None
                if law is None:
                    active[b] = False
                    q[b, 0] = 1.0  # a placeholder law for a row that has stopped (never used)
                else:
                    q[b, law[0]] = law[1]
            if not any(active):
                break
            # the target's warp applied to q too (T = 0: the table's most probable token)
            q = warped_probs(torch.log(q), sampling, check=False)
            if threshold > 0:
                confident = (q.max(-1).values >= threshold).tolist()
                active = [a and c for a, c in zip(active, confident, strict=True)]
                if not any(active):
                    break
            x = draws.categorical(q.to(self.device), active).tolist()
            for b in range(B):
                if active[b]:
                    drafted[b].append(x[b])
                    seqs[b].append(x[b])
            qs.append(q)
        return _proposal(drafted, torch.stack(qs, 1) if qs else torch.zeros(B, 0, V), self.device)

    def commit(self, kept: Sequence[int]) -> None:
        pass


class LookupNgramDraft:
    """Prompt lookup where the sequence repeats an n-gram (one-hot q); the n-gram table elsewhere."""

    def __init__(self, lookup: PromptLookupDraft, ngram: NgramDraft) -> None:
        self.lookup, self.ngram = lookup, ngram
        self.forwards = 0

    def start(self, prompts: Sequence[Sequence[int]], device: torch.device | None = None, vocab_size: int | None = None) -> None:
        self.lookup.start(prompts, device, vocab_size)
        self.ngram.start(prompts, device, vocab_size)

    def propose(self, tokens: Sequence[Sequence[int]], gamma: int, sampling: SamplingOptions, draws: Draws,
                confidence_threshold: float = 0.0) -> Proposal:
        found = [self.lookup.lookup(t, gamma) for t in tokens]
        if all(found):  # a one-hot q needs no confidence check: it is 1
            return self.lookup.proposal(found)
        if not any(found):
            return self.ngram.propose(tokens, gamma, sampling, draws, confidence_threshold)
        # mixed batch: rows with a match take it (one-hot q); the table drafts the others, each row
        # drawing from its own generator when the run has one per row (so a row's tokens do not
        # depend on the rest of the batch)
        rest = [b for b, f in enumerate(found) if not f]
        sub = Draws([draws.generators[b] for b in rest], True) if draws.per_row else draws
        table = self.ngram.propose([tokens[b] for b in rest], gamma, sampling, sub, confidence_threshold)
        drafted = [list(f) for f in found]
        for j, b in enumerate(rest):
            drafted[b] = table.tokens[j, : table.lengths[j]].tolist()
        width = max(map(len, drafted))
        q = torch.zeros(len(tokens), width, self.ngram.vocab_size)
        for b, f in enumerate(found):
            if f:
                q[b, torch.arange(len(f)), torch.tensor(f)] = 1.0
        q[rest, : table.width] = table.q.cpu()
        return _proposal(drafted, q, self.ngram.device)

    def commit(self, kept: Sequence[int]) -> None:
        pass


def _proposal(drafted: list[list[int]], q: torch.Tensor, device: torch.device) -> Proposal:
    lengths = [len(d) for d in drafted]
    width = max(lengths, default=0)
    q = q[:, :width]
    padded = [d + [0] * (width - len(d)) for d in drafted]
    tokens = torch.tensor(padded, dtype=torch.long).reshape(len(drafted), width)
    return Proposal(tokens.to(device), lengths, torch.tensor(lengths, device=device), q.to(device))
