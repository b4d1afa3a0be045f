"""How each engine applies the sampling options it ships: the order of its stages and its penalty history.

Notation: p = target law, q = draft law, z = the target's raw next-token logits.

The options themselves are one record, ``specmath.sampling_options.SamplingOptions``.

``EngineSemantics`` is how an engine applies them; engines disagree, and the exact law must follow the
engine's own definition (``specmath.audit.engines.law`` computes it, independently of the engine's code):

* ``order``: the stages in the order the engine applies them. Temperature divides the logits; top-k keeps
  the k largest; top-p keeps the most likely tokens while the mass strictly before them is < top_p
  (of the softmax *at that point of the chain*); min-p keeps tokens with probability >= min_p * max
  probability (same). So llama.cpp's top-p and min-p (before temperature) differ from Hugging Face's
  and vLLM's (after it) whenever T != 1.
* ``history``: which tokens each penalty counts, per penalty: ``"prompt+generated"`` (llama.cpp, whose
  sampler is fed the prompt; Hugging Face's repetition penalty; vLLM's repetition penalty) or
  ``"generated"`` (node-llama-cpp; vLLM's and OpenAI's presence and frequency penalties).
* ``window``: the last ``window`` tokens of that history (None: all of it), the default when the
  options give none; ``ignored``: tokens never counted (node-llama-cpp leaves the newline out).

Penalties, for a token x seen c(x) > 0 times in the window (``specmath.audit.engines.penalties``):
repetition r: z <- z / r if z > 0 else z * r; then z <- z - c(x) * frequency - presence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from specmath.sampling_options import OPTION_NAMES, SamplingOptions
from specmath.validation import InvalidArgument, UnknownName, check_choice, check_integer

__all__ = ["EngineSemantics", "SEMANTICS", "STAGES", "HISTORIES", "PENALTIES", "semantics_named"]

#: the stages a sampling chain is made of
STAGES = ("logit_bias", "penalties", "temperature", "top_k", "top_p", "min_p")
#: which tokens a penalty counts
HISTORIES = ("prompt+generated", "generated")
#: the penalties that depend on the tokens seen so far
PENALTIES = ("repetition", "presence", "frequency")


@dataclass(frozen=True)
class EngineSemantics:
    """How an engine applies ``SamplingOptions``: the order of its stages, the history its penalties count."""

    name: str
    order: tuple[str, ...]
    history: dict = field(default_factory=lambda: dict.fromkeys(PENALTIES, "prompt+generated"))
    window: int | None = None  # default window of the penalties (None: the whole history)
    ignored: frozenset[int] = frozenset()  # tokens the penalties never count
    options: frozenset[str] = frozenset()  # the options this engine takes (empty: all)

    def __post_init__(self) -> None:
        for stage in self.order:
            check_choice(stage, "sampling stage", STAGES)
        if sorted(self.order) != sorted(set(self.order)):
            raise InvalidArgument(f"each sampling stage appears once in an order, got {list(self.order)}")
        for penalty, scope in self.history.items():
            check_choice(penalty, "penalty", PENALTIES)
            check_choice(scope, "penalty history", HISTORIES)
        if self.window is not None:
            check_integer(self.window, "penalty window", min_value=1)

    def window_for(self, options: SamplingOptions) -> float:
        """How many of the latest history tokens the penalties count (math.inf: all)."""
        window = options.penalty_window if options.penalty_window is not None else self.window
        return math.inf if window is None else window

    def check_supports(self, options: SamplingOptions) -> None:
        """InvalidArgument naming an option this engine does not take."""
        if not self.options:
            return
        asked = set(options.to_json()) - {"temperature"}
        missing = sorted(asked - self.options)
        if missing:
            raise InvalidArgument(f"the engine ({self.name}) does not take {', '.join(missing)}; it takes: "
                                  f"{', '.join(sorted(self.options))}")

    @classmethod
    def from_json(cls, data: dict) -> EngineSemantics:
        """Semantics as an engine declares them in its ``info`` reply (``specmath.audit.engines.protocol``)."""
        history = data.get("history", "prompt+generated")
        if isinstance(history, str):
            history = dict.fromkeys(PENALTIES, history)
        return cls(str(data.get("name", "engine")), tuple(data["order"]), dict(history), data.get("window"),
                   frozenset(int(t) for t in data.get("ignored", ())), frozenset(data.get("options", ())))


_ALL_HISTORY = dict.fromkeys(PENALTIES, "prompt+generated")
_ALL = OPTION_NAMES

#: the engines' own definitions, by name (``--semantics``)
SEMANTICS = {s.name: s for s in (
    # transformers: SequenceBias, RepetitionPenalty (whole input, no window), then the warpers
    EngineSemantics("hf", ("logit_bias", "penalties", "temperature", "top_k", "top_p", "min_p"), dict(_ALL_HISTORY),
                    None, options=frozenset({"temperature", "top_k", "top_p", "min_p", "logit_bias",
                                             "repetition_penalty"})),
    # llama.cpp common_sampler: logit bias, penalties (the prompt is fed to the sampler, as llama-server does;
    # window 64 by default), top-k, top-p, min-p, then temperature
    EngineSemantics("llama.cpp", ("logit_bias", "penalties", "top_k", "top_p", "min_p", "temperature"),
                    dict(_ALL_HISTORY), 64, options=_ALL),
    # vLLM's sampler: logit bias, penalties (repetition over prompt and output, presence and frequency over the
    # output), temperature, min-p, then top-k and top-p
    EngineSemantics("vllm", ("logit_bias", "penalties", "temperature", "min_p", "top_k", "top_p"),
                    {"repetition": "prompt+generated", "presence": "generated", "frequency": "generated"}, None,
                    options=_ALL - {"penalty_window"}),
)}


def semantics_named(name: str) -> EngineSemantics:
    """The named semantics (``SEMANTICS``); UnknownName otherwise."""
    if name not in SEMANTICS:
        raise UnknownName(f"unknown engine semantics {name!r}; choose from: {', '.join(SEMANTICS)}")
    return SEMANTICS[name]
