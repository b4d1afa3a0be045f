"""The sampling options a user asks for, as one torch-free record: what every path warps by.

Notation: p = target law, q = draft law, z = raw next-token logits, w = the warp these options define.

``SamplingOptions`` is what a caller asks for: temperature, top-k, top-p, min-p, a logit bias, and the
three penalties that depend on the tokens seen so far (repetition, presence, frequency) with the window
of history they look at. ``None`` (or an empty bias) switches an option off. One record serves three
computations, each defined once elsewhere and each stating which options it implements:

* the exact warp of a ``Law`` (``specmath.speculative.sampling_warp``): temperature, top-k, top-p on
  Fraction weights; speculative decoding is lossless for w(p) when the drafts come from w(q);
* the torch path (``specmath.lm.warps.warped_probs``): the same three on logits, for p and q alike;
* the audit's independent law of an engine (``specmath.audit.engines.law``): every option, in the order
  and with the penalty history the engine itself uses (``specmath.audit.engines.semantics``).

Numbers are kept as given where they are exact (an int, a ``Fraction``, a string such as ``"1/2"``
becomes a Fraction) and as floats where they are floats, so the exact warp reads T = 1/3 as 1/3 and
a float 0.7 as the decimal it prints as (7/10). ``temperature = 0`` is greedy decoding (the T -> 0
limit: all mass on the argmax); audits of sampled laws require T > 0 themselves.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from fractions import Fraction
from typing import Any

from specmath.validation import InvalidArgument, check_choice, check_fraction, check_integer, check_real

__all__ = ["SamplingOptions", "OPTION_NAMES", "WARP_OPTIONS"]

#: the options that only truncate or reshape one law (no history): what the exact and torch warps implement
WARP_OPTIONS = frozenset({"temperature", "top_k", "top_p"})


def _number(value: Any, name: str, **bounds) -> float | Fraction:
    """A float stays a float (range-checked); anything exact becomes a Fraction (see the module docstring)."""
    if isinstance(value, float) or (hasattr(value, "dtype") and getattr(value.dtype, "kind", "") == "f"):
        return check_real(value, name, **bounds)
    return check_fraction(value, name, **bounds)


def _plain(value: Any) -> Any:
    """A number as JSON writes it: a whole Fraction as an int, another as a float."""
    if isinstance(value, Fraction):
        return value.numerator if value.denominator == 1 else float(value)
    return value


@dataclass(frozen=True)
class SamplingOptions:
    """What the caller asks for; None (or an empty bias) switches an option off. Hashable (frozen)."""

    temperature: float | Fraction = 1.0  # T >= 0; 0 is greedy
    top_k: int | None = None  # keep the k most likely tokens
    top_p: float | Fraction | None = None  # keep the most likely tokens up to mass top_p, in (0, 1]
    min_p: float | Fraction | None = None  # keep tokens of probability >= min_p * the largest, in (0, 1]
    logit_bias: tuple[tuple[int, float], ...] = ()  # (token, added to its logit)
    repetition_penalty: float | None = None  # z / r if z > 0 else z * r for a seen token
    presence_penalty: float | None = None  # z - a for a seen token
    frequency_penalty: float | None = None  # z - f c(x) for a token seen c(x) times
    penalty_window: int | None = None  # tokens of history the penalties look at (None: the engine's default)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "temperature", _number(self.temperature, "temperature", min_value=0))
        if self.top_k is not None:
            set_(self, "top_k", check_integer(self.top_k, "top_k", min_value=1))
        for name in ("top_p", "min_p"):
            value = getattr(self, name)
            if value is not None:
                set_(self, name, _number(value, name, min_value=0, max_value=1, open_min=True))
        if self.repetition_penalty is not None:
            set_(self, "repetition_penalty", check_real(self.repetition_penalty, "repetition_penalty", min_value=0,
                                                        open_min=True))
        for name in ("presence_penalty", "frequency_penalty"):
            value = getattr(self, name)
            if value is not None:
                set_(self, name, check_real(value, name))
        if self.penalty_window is not None:
            set_(self, "penalty_window", check_integer(self.penalty_window, "penalty_window", min_value=1))
        bias = []
        for pair in self.logit_bias:
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise InvalidArgument(f"logit_bias holds (token, bias) pairs, got {pair!r}")
            bias.append((check_integer(pair[0], "a logit_bias token", min_value=0), check_real(pair[1], "a logit bias")))
        set_(self, "logit_bias", tuple(bias))

    @property
    def greedy(self) -> bool:
        """Temperature 0: the one-hot law on the argmax."""
        return self.temperature == 0

    @property
    def penalised(self) -> bool:
        """Whether any penalty is on (the law then depends on the tokens seen so far)."""
        return any(v not in (None, 0) for v in (self.presence_penalty, self.frequency_penalty)) or \
            self.repetition_penalty not in (None, 1)

    def asked(self) -> frozenset[str]:
        """The names of the options that are on (temperature always counts as asked)."""
        return frozenset(self.to_json())

    def check_only(self, allowed: Iterable[str], who: str) -> SamplingOptions:
        """These options, or InvalidArgument naming what ``who`` does not implement and what it does."""
        allowed = frozenset(allowed) | {"temperature"}
        missing = sorted(self.asked() - allowed)
        if missing:
            raise InvalidArgument(f"{who} does not take {', '.join(missing)}; it takes: {', '.join(sorted(allowed))}")
        return self

    def to_json(self) -> dict:
        """The options that are on, by their protocol names (``logit_bias`` as [[token, bias], ...])."""
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None or value == ():
                continue
            out[f.name] = [list(p) for p in value] if f.name == "logit_bias" else _plain(value)
        return out

    @classmethod
    def from_json(cls, data: dict) -> SamplingOptions:
        """Options from their protocol names; an unknown name is an error naming the known ones."""
        for name in data:
            check_choice(name, "sampling option", sorted(OPTION_NAMES))
        data = dict(data)
        if "logit_bias" in data:
            data["logit_bias"] = tuple(tuple(p) for p in data["logit_bias"])
        return cls(**data)

    def label(self) -> str:
        """A short description, e.g. ``T=0.7 top-k 20 repetition 1.3 window 64``."""
        parts = [f"T={float(self.temperature):g}"]
        for name, word in (("top_k", "top-k"), ("top_p", "top-p"), ("min_p", "min-p"), ("presence_penalty", "presence"),
                           ("frequency_penalty", "frequency")):
            if getattr(self, name) is not None:
                parts.append(f"{word} {float(getattr(self, name)):g}")
        if self.repetition_penalty is not None:
            parts.append(f"repetition {self.repetition_penalty:g}")
        if self.penalty_window is not None:
            parts.append(f"window {self.penalty_window}")
        if self.logit_bias:
            parts.append("bias " + ",".join(f"{t}{b:+g}" for t, b in self.logit_bias))
        return " ".join(parts)

    def __repr__(self) -> str:
        # only what is on: SamplingOptions(temperature=1/2, top_k=2)
        shown = [f"{f.name}={_shown(getattr(self, f.name))}" for f in fields(self)
                 if getattr(self, f.name) not in (None, ()) and not (f.name == "temperature" and self.temperature == 1)]
        return f"SamplingOptions({', '.join(shown)})"


def _shown(value: Any) -> str:
    return str(value) if isinstance(value, Fraction) else repr(value)


#: every option's name, as the protocol and ``from_json`` spell it
OPTION_NAMES = frozenset(f.name for f in fields(SamplingOptions))

