"""The rows of the options table: a sampling option, the lossy control that targets it, the prompt it needs.

Notation: p = target law, w = the engine's sampling chain, x1, x2 = the first two emitted tokens, c = prompt.

Speculative engines verify a batch [last, d1, d2, ...]: x1 is always sampled at the batch's first row,
x2 at a *drafted* row whenever x1 == d1. The losses seen in engines sit there (each a dated record in
``specmath.bugzoo.claims``): an option skipped on verified tokens (vLLM's rejection sampler would skip
min-p and logit bias, so vLLM refuses them, claim vllm-rejection-sampler-skips-argmax-invariant; SGLang's
EAGLE path skipped logit bias until PR #11555, claim sglang-logit-bias-eagle), argmax acceptance at T > 0
(mlxcel until issue #902, claim mlxcel-argmax-acceptance; SGLang on ROCm until PR #37134, claim
sglang-rocm-greedy-verify), penalties counted from the batch's start instead of position by position
(node-llama-cpp 3.22.1, claim node-llama-cpp-penalty-at-predictions). Each row's control has exactly that bug (``Control``), run in
llama.cpp's own loop (``engines/llama_cpp``), so a run that cannot catch it is INCONCLUSIVE, not a pass.

The control moves only x2, and only where x1 hit the draft, so each row is audited at the prompt where
its shift is largest, ``control_shift``:

    shift(c) = sum_x1 w(p(. | c))(x1) reach(c, x1) TV(w(p(. | c x1)), w_control(p(. | c x1)))

with reach(c, x1) = [x1 == the token prompt lookup proposes after c] for a lookup engine (an upper bound:
an engine's own lookup may decline), and for a draft model reach(c, x1) = w(x1) [x1 == argmax w], w the
first token's law. Why: a sample-match verifier keeps d1 only when the target draws d1, so a draft model
that is the target itself (the GGUF tables) hits the most likely x1 at least that often, whether it drafts
greedily (llama.cpp: always) or draws its draft from w (node-llama-cpp: w(x1)), and the bound is then
a lower bound on the shift at that token. Counting every x1 as hit instead chose prompts with a flat first
token, where a drawn draft is seldom accepted and the control acts on a few samples in a hundred.
Penalty rows choose among repetitive texts (where a penalty matters), the others among
``PROMPT_CANDIDATES``. The logit-bias row bans (bias -100) the most likely second token, so that the
control's bug emits a token the law all but forbids. The repeat-ban row boosts (+10) the token the prompt
repeats and bans repeats (presence 100): the law all but forbids x2 == x1, an engine that counts the
penalties from the batch's start emits it whenever x1 hit the draft. It is the row that gives power where
penalties count the generated tokens only (node-llama-cpp) and the model seldom repeats a token by itself.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from specmath.audit.engines.law import Logits, sampling_law
from specmath.audit.engines.pairs import PROMPT_CANDIDATES, lookup_draft_token
from specmath.audit.engines.semantics import EngineSemantics
from specmath.sampling_options import SamplingOptions
from specmath.validation import InvalidArgument, check_choice

__all__ = ["Control", "OptionRow", "OPTION_ROWS", "REPETITIVE_PROMPTS", "LONG_PROMPTS", "BANNED", "BOOST",
           "control_shift", "candidate_texts", "block_prompts", "choose_prompt", "option_row_named", "row_for"]

#: texts where a penalty matters: the likely next tokens are already in the prompt
REPETITIVE_PROMPTS = (
    "the cat sat on the mat. the cat sat on the mat. the",
    "ha ha ha ha ha ha ha ha ha ha ha",
    "no no no no no no no no no no",
    "red green blue red green blue red green blue red",
    "1, 2, 3, 1, 2, 3, 1, 2, 3, 1,",
    "It was the best of times, it was the worst of times, it was the",
    # a repeat the model continues with confidence (SmolLM2: " knock" next with probability 0.90, and again after
    # it): where the penalties count the generated tokens only, the history at x2 is x1 alone, so a penalty row
    # needs an x1 a draft hits often and an x2 likely to repeat it
    "knock knock knock knock knock knock knock knock knock knock knock knock",
    # the same where llama.cpp's n-gram lookup drafts too: ngram-simple proposes what followed the latest earlier
    # match of the last 2 tokens and declines where fewer than 2 follow it, which a uniform repeat always has (its
    # latest match ends one token before the prompt's end); here the latest ". ha" lies a group back, followed by
    # " ha ha". At T = 1 a control that skips presence 1.5 at drafted rows moves the law of (x1, x2) by about 0.23
    # where lookups draft (node-llama-cpp's in llama.cpp's loop); at "red green blue ..." by 0.024, under what
    # N = 8483 detects
    "ha ha ha. ha ha ha. ha ha ha. ha ha ha. ha",
    # a repeat farther back than llama.cpp's penalty window (64 tokens): where the penalties count the prompt, the
    # token its lookup drafts here is outside the window, so even presence 100 (repeat ban) leaves a draft to accept
    "My code word is falcon. I walked to the market this morning and bought apples, bread, cheese and a small jar "
    "of honey for my grandmother, who lives in the old house near the river. After that I visited the library, "
    "returned two novels about sailing ships, and talked with a friend about the weather, the train schedule and "
    "our plans for the holidays. Then, at last, my code word is",
)
#: repetitive texts of more than 32 tokens (SmolLM2's tokenizer) besides the longest above, for an engine that shares
#: only a prompt's full KV blocks among a request's calls (``block_prompts``)
LONG_PROMPTS = (
    "the cat sat on the mat. " * 5 + "the",
    "red green blue " * 12 + "red",
    "1, 2, 3, " * 5 + "1,",
    " ".join(["knock"] * 36),
    " ".join(["ha"] * 36),
)
#: the logit bias of the bias row: a ban, short of -inf (JSON has no infinity)
BANNED = -100.0
#: the repeat-ban row's bias on the repeated token: it becomes the likely first and (unpenalised) second token
BOOST = 10.0
#: a placeholder token in the bias row's options, replaced by the chosen token
_CHOSEN = 0


@dataclass(frozen=True)
class Control:
    """A lossy control: what it does at drafted rows (options overridden, or the history of the batch's start)."""

    description: str
    drafted: dict  # protocol option names -> values at drafted rows; temperature 0 is argmax
    stale_history: bool = False

    def protocol(self, semantics: EngineSemantics) -> dict:
        """The ``control`` of a generate request, counting penalties as ``semantics`` does."""
        history = "generated" if all(h == "generated" for h in semantics.history.values()) else "prompt+generated"
        return {"drafted": self.drafted, "stale_history": self.stale_history, "history": history,
                "ignored": sorted(semantics.ignored)}

    def second_law(self, logits: np.ndarray, c: Sequence[int], x1: int, options: SamplingOptions,
                   semantics: EngineSemantics) -> np.ndarray:
        """The control's law of x2 at a drafted row after c x1."""
        if self.stale_history:
            return sampling_law(logits, options, semantics, c, ())
        changed = {k: v for k, v in self.drafted.items() if k != "temperature" or v > 0}
        changed.update({k: None for k in ("top_k", "min_p") if changed.get(k) == 0})  # the protocol's "off"
        if "logit_bias" in changed:
            changed["logit_bias"] = tuple(tuple(p) for p in changed["logit_bias"])
        law = sampling_law(logits, dataclasses.replace(options, **changed), semantics, c, [x1])
        if self.drafted.get("temperature") == 0:  # argmax: truncations keep the most likely token, so it is law's
            one_hot = np.zeros_like(law)
            one_hot[int(np.argmax(law))] = 1.0
            return one_hot
        return law


@dataclass(frozen=True)
class OptionRow:
    """One row of the options table: the options asked for and the control that targets them."""

    name: str
    options: SamplingOptions
    control: Control
    repetitive: bool = False  # choose the prompt among repetitive texts
    bias: str | None = None  # "ban-second": ban the likely second token; "boost-repeated": +10 on the repeated one
    # the control where the engine's penalties count the prompt (llama.cpp), if not ``control``: there a token that
    # a lookup drafts is already counted, so penalties counted from the batch's start change nothing
    prompt_counted: Control | None = None
    # the control where they count generated tokens only (node-llama-cpp), if not ``control``: at x2 that history
    # is x1 alone, inside any window, so a control that ignores the window changes nothing
    generated_only: Control | None = None

    def control_for(self, semantics: EngineSemantics) -> Control:
        """The row's control for an engine of these semantics."""
        counts_prompt = not all(h == "generated" for h in semantics.history.values())
        chosen = self.prompt_counted if counts_prompt else self.generated_only
        return self.control if chosen is None else chosen

    def with_bias_token(self, token: int) -> SamplingOptions:
        if self.bias is None:
            return self.options
        return dataclasses.replace(self.options, logit_bias=((token, BANNED if self.bias == "ban-second" else BOOST),))


_SKIP = "skipped at drafted rows"
OPTION_ROWS = {r.name: r for r in (
    OptionRow("T=1", SamplingOptions(1.0), Control("argmax at drafted rows (mlxcel until #902, SGLang on ROCm until PR #37134)", {"temperature": 0})),
    OptionRow("T=0.7 top-k 20", SamplingOptions(0.7, top_k=20), Control(f"top-k {_SKIP}", {"top_k": 0})),
    OptionRow("top-p 0.9", SamplingOptions(1.0, top_p=0.9), Control(f"top-p {_SKIP}", {"top_p": 1.0})),
    OptionRow("min-p 0.1", SamplingOptions(1.0, min_p=0.1),
              Control(f"min-p {_SKIP} (vLLM refuses it: #42744; reported of SGLang EAGLE: #10617)", {"min_p": 0.0})),
    OptionRow("logit bias", SamplingOptions(1.0, logit_bias=((_CHOSEN, BANNED),)),
              Control(f"logit bias {_SKIP} (vLLM refuses it: #42744; SGLang EAGLE until PR #11555)", {"logit_bias": []}), bias="ban-second"),
    OptionRow("repetition 1.5", SamplingOptions(1.0, repetition_penalty=1.5),
              Control(f"repetition penalty {_SKIP}", {"repetition_penalty": 1.0}), repetitive=True),
    OptionRow("repetition 1.5 window 4", SamplingOptions(1.0, repetition_penalty=1.5, penalty_window=4),
              Control("the penalty window ignored at drafted rows", {"penalty_window": 100000}), repetitive=True,
              generated_only=Control(f"repetition penalty {_SKIP}", {"repetition_penalty": 1.0})),
    OptionRow("presence 1.5", SamplingOptions(1.0, presence_penalty=1.5),
              Control(f"presence penalty {_SKIP}", {"presence_penalty": 0.0}), repetitive=True),
    OptionRow("frequency 1.5", SamplingOptions(1.0, frequency_penalty=1.5),
              Control("penalties counted from the batch's start at drafted rows (not position by position)", {},
                      stale_history=True), repetitive=True,
              prompt_counted=Control(f"frequency penalty {_SKIP}", {"frequency_penalty": 0.0})),
    OptionRow("repeat ban", SamplingOptions(1.0, presence_penalty=100.0, logit_bias=((_CHOSEN, BOOST),)),
              Control("penalties counted from the batch's start at drafted rows (not position by position)", {},
                      stale_history=True), repetitive=True, bias="boost-repeated",
              # with the prompt counted every token a lookup drafts is banned already, and stays banned
              prompt_counted=Control(f"presence penalty {_SKIP}", {"presence_penalty": 0.0})),
)}


def option_row_named(name: str) -> OptionRow:
    """The row called ``name`` (``OPTION_ROWS``); UnknownName otherwise."""
    return OPTION_ROWS[check_choice(name, "option row", OPTION_ROWS)]


def row_for(options: SamplingOptions) -> OptionRow:
    """A row for options given one by one: theirs, with the control of the most specific option that is on."""
    if options.frequency_penalty:
        base = OPTION_ROWS["frequency 1.5"]
    elif options.presence_penalty:
        base = OPTION_ROWS["presence 1.5"]
    elif options.repetition_penalty not in (None, 1):
        base = OPTION_ROWS["repetition 1.5 window 4" if options.penalty_window else "repetition 1.5"]
    elif options.logit_bias:
        base = OPTION_ROWS["logit bias"]
    elif options.min_p:
        base = OPTION_ROWS["min-p 0.1"]
    elif options.top_p is not None and options.top_p < 1:
        base = OPTION_ROWS["top-p 0.9"]
    elif options.top_k is not None:
        base = OPTION_ROWS["T=0.7 top-k 20"]
    else:
        base = OPTION_ROWS["T=1"]
    return dataclasses.replace(base, name=options.label(), options=options, bias=None)


def control_shift(logits: Logits, c: Sequence[int], row: OptionRow, options: SamplingOptions,
                  semantics: EngineSemantics, reach: Callable[[Sequence[int], int], float]) -> float:
    """How far the row's control moves the law of (x1, x2) at prompt c, bounded as the module docstring says."""
    p1 = sampling_law(logits([list(c)])[0], options, semantics, c)
    first = [int(x) for x in np.argsort(-p1)[:20] if p1[x] >= 0.01 and reach(c, int(x)) > 0]
    if not first:
        return 0.0
    shift = 0.0
    for x1, z in zip(first, logits([[*c, x1] for x1 in first]), strict=True):
        right = sampling_law(z, options, semantics, c, [x1])
        wrong = row.control_for(semantics).second_law(z, c, x1, options, semantics)
        shift += p1[x1] * reach(c, x1) * 0.5 * float(np.abs(right - wrong).sum())
    return shift


def _bias_token(logits: Logits, c: Sequence[int], row: OptionRow, options: SamplingOptions,
                semantics: EngineSemantics) -> int:
    p1 = sampling_law(logits([list(c)])[0], options, semantics, c)
    if row.bias == "boost-repeated":  # the token prompt lookup proposes: the one the prompt repeats
        proposed = lookup_draft_token(list(c))
        return int(np.argmax(p1)) if proposed is None else proposed
    # the most likely second token after the most likely first one: the token a skipped ban lets through
    x1 = int(np.argmax(p1))
    return int(np.argmax(sampling_law(logits([[*c, x1]])[0], options, semantics, c, [x1])))


def _draft_reach(logits: Logits, c: Sequence[int], options: SamplingOptions,
                 semantics: EngineSemantics) -> Callable[[Sequence[int], int], float]:
    """A draft model's reach at prompt c (module docstring): w(x1) at the most likely first token, 0 elsewhere."""
    p1 = sampling_law(logits([list(c)])[0], options, semantics, c)
    top = int(np.argmax(p1))

    def reach(_c: Sequence[int], x1: int) -> float:
        return float(p1[top]) if x1 == top else 0.0

    return reach


def candidate_texts(row: OptionRow) -> tuple[str, ...]:
    """The texts a row chooses its prompt among: repetitive ones for the penalty rows, all for the others."""
    return REPETITIVE_PROMPTS if row.repetitive else tuple(dict.fromkeys(PROMPT_CANDIDATES + REPETITIVE_PROMPTS))


def block_prompts(candidates: Sequence[Sequence[int]], block: int) -> list[list[int]]:
    """The candidates longer than ``block`` tokens, each cut from the left to b * floor((L - 1) / b) + 1 tokens.

    Why: an engine that shares only full KV blocks of b prompt tokens among a request's n calls (vLLM's prefix
    caching, ``prompt_block``) computes the tokens after the last full block again in every call, and always
    the last one (its logits are x1's law), so a prompt of L tokens costs each call ((L - 1) mod b) + 1 tokens of
    prefill: 15 for SmolLM2's 15-token prompts, 1 for these. A request of n = 256 cost vLLM 46-50 CPU-ms a sample
    at 15 tokens and 22-23 at 33 (SmolLM2 in float32, prompt lookup, 2 new tokens; ``engines/vllm/README.md``).
    Cutting from the left keeps each text's end, where its continuation and a lookup's match are; the laws are
    computed at the prompt as cut."""
    return [list(c[len(c) - (block * ((len(c) - 1) // block) + 1):]) for c in candidates if len(c) > block]


def choose_prompt(logits: Logits, candidates: Sequence[Sequence[int]], row: OptionRow, semantics: EngineSemantics, *,
                  lookup: bool, min_length: int = 1,
                  drafts_at: Callable[[list[int], SamplingOptions], bool] | None = None,
                  ) -> tuple[list[int], SamplingOptions, float]:
    """(prompt ids, options, control shift): the candidate prompt where the row's control moves the law most.
    ``drafts_at(prompt, options)``, where given, asks the engine itself whether it drafts there: candidates are
    tried from the largest shift down, and the first it drafts at is chosen (a lookup's reach is modelled by
    ``lookup_draft_token``, and an engine's own lookup may decline where it proposes a token: llama.cpp's
    ngram-simple drafts nothing when fewer than n tokens follow the latest match, as at the end of "ha ha ha")."""

    def lookup_reach(c: Sequence[int], x1: int) -> float:
        return float(lookup_draft_token(list(c)) == x1)

    ranked = []
    for c in candidates:
        c = list(c)
        if len(c) < min_length:
            continue
        options = row.options
        if row.bias:
            unbiased = dataclasses.replace(options, logit_bias=())
            options = row.with_bias_token(_bias_token(logits, c, row, unbiased, semantics))
        reach = lookup_reach if lookup else _draft_reach(logits, c, options, semantics)
        ranked.append((c, options, control_shift(logits, c, row, options, semantics, reach)))
    ranked.sort(key=lambda r: -r[2])  # stable: among equal shifts, the candidates' own order
    best = next((r for r in ranked if drafts_at is None or drafts_at(r[0], r[1])), ranked[0] if ranked else None)
    if best is None:
        raise InvalidArgument(f"no candidate prompt is {min_length} tokens long: give a longer --prompt")
    return best
