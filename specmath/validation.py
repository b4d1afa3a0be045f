"""Argument checks, written once (in the manner of Hypothesis's ``internal/validation.py``).

Every public function of specmath checks its arguments at its top with these helpers, so a rule
("a count is an int >= 1; ``numpy.int64`` is an int; ``True`` is not") is stated in one place and
every message has one shape: *what* was given, and *what is allowed*.

One exception type per kind of mistake, all ``ValueError``s so ``except ValueError`` catches them:

* ``InvalidArgument``  an argument of the wrong type or out of its range;
* ``UnknownName``      a name that is not among the choices (with "did you mean" for a near miss);
* ``InvalidFile``      a file that is missing, unreadable or malformed.

(An invalid probability law is ``specmath.laws.LawError``, also a ``ValueError``.)

Numbers on the exact side (a coin's bias, top-p, a threshold) are checked with ``check_fraction``,
which returns the exact Fraction; ``check_real`` returns a float, for the sampled and torch sides.

>>> check_integer(3, "gamma", min_value=1)
3
>>> check_integer(True, "gamma", min_value=1)
Traceback (most recent call last):
...
specmath.validation.InvalidArgument: gamma must be an int >= 1, got True (a bool)
>>> check_choice("two_token", "proof", ["two-token", "rand7"])
Traceback (most recent call last):
...
specmath.validation.UnknownName: unknown proof 'two_token' (did you mean 'two-token'?); choose from: two-token, rand7
"""

from __future__ import annotations

import difflib
import math
import numbers
import operator
from collections.abc import Iterable
from fractions import Fraction
from pathlib import Path
from typing import Any

from specmath.laws import LawError, to_fraction

__all__ = [
    "InvalidArgument",
    "UnknownName",
    "InvalidFile",
    "check_integer",
    "check_real",
    "check_fraction",
    "check_probability",
    "check_bool",
    "check_choice",
    "check_choices",
    "check_seed",
    "check_generator",
    "check_generator_kind",
    "GENERATOR_KINDS",
    "check_file",
    "check_output_file",
    "did_you_mean",
]


class InvalidArgument(ValueError):
    """An argument of the wrong type or out of its range; the message names it and what is allowed."""


class UnknownName(InvalidArgument):
    """A name that is not among the allowed choices; the message lists them (and the nearest one)."""


class InvalidFile(InvalidArgument):
    """A file that is missing, unreadable or malformed; the message names the file and the problem."""


def _shown(value: Any) -> str:
    """How a bad value is shown in a message: its repr, and its type where the repr hides it."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    if isinstance(value, bool):
        return f"{text} (a bool)"
    if isinstance(value, (str, bytes, int, float)) and not isinstance(value, bool):
        return text
    return f"{text} (a {type(value).__name__})"


def _range_words(min_value: Any, max_value: Any, *, open_min: bool = False, open_max: bool = False) -> str:
    if min_value is not None and max_value is not None:
        left, right = "(" if open_min else "[", ")" if open_max else "]"
        return f" in {left}{min_value}, {max_value}{right}"
    if min_value is not None:
        return f" {'>' if open_min else '>='} {min_value}"
    if max_value is not None:
        return f" {'<' if open_max else '<='} {max_value}"
    return ""


def check_integer(value: Any, name: str, *, min_value: int | None = None, max_value: int | None = None) -> int:
    """``value`` as a Python int, when it is an integer (int, ``numpy.int64``, a 0-d integer tensor) in range.

    Rejects bools (``True`` is not a count), floats (even 2.0: a float count is a caller's slip) and
    strings. ``min_value`` <= value <= ``max_value`` where given.
    """
    if isinstance(value, bool) or getattr(getattr(value, "dtype", None), "kind", None) == "b":
        ok = False
    else:
        try:
            value = operator.index(value)  # int, numpy integers, 0-d integer arrays and tensors
            ok = True
        except TypeError:
            ok = False
    if not ok or (min_value is not None and value < min_value) or (max_value is not None and value > max_value):
        raise InvalidArgument(f"{name} must be an int{_range_words(min_value, max_value)}, got {_shown(value)}")
    return int(value)


def check_real(value: Any, name: str, *, min_value: float | None = None, max_value: float | None = None,
               open_min: bool = False, open_max: bool = False) -> float:
    """``value`` as a Python float, when it is a finite real number (not a bool) in the given range.

    ``open_min`` / ``open_max`` exclude the bound itself (temperature > 0, top_p in (0, 1]).
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real) and not _is_real_scalar(value):
        raise InvalidArgument(f"{name} must be a real number{_range_words(min_value, max_value, open_min=open_min, open_max=open_max)}, "
                              f"got {_shown(value)}")
    x = float(value)
    bad = not math.isfinite(x)
    if min_value is not None:
        bad = bad or (x <= min_value if open_min else x < min_value)
    if max_value is not None:
        bad = bad or (x >= max_value if open_max else x > max_value)
    if bad:
        raise InvalidArgument(f"{name} must be a finite number{_range_words(min_value, max_value, open_min=open_min, open_max=open_max)}, "
                              f"got {_shown(value)}")
    return x


def _is_real_scalar(value: Any) -> bool:
    """A 0-d numpy / torch value of a real (integer or float) dtype."""
    dtype = getattr(value, "dtype", None)
    if dtype is None or getattr(value, "ndim", 1) != 0:
        return False
    kind = getattr(dtype, "kind", None)
    if kind is None:  # torch dtypes have no .kind
        return bool(getattr(dtype, "is_floating_point", False)) or str(dtype).startswith(("torch.int", "torch.uint"))
    return kind in "iuf"


def check_fraction(value: Any, name: str, *, min_value: Any = None, max_value: Any = None,
                   open_min: bool = False, open_max: bool = False) -> Fraction:
    """``value`` as an exact Fraction in the given range: the exact side's ``check_real``.

    Read as ``specmath.laws.to_fraction`` reads a weight (a Python float as the decimal it prints
    as, 0.7 -> 7/10, and numpy and torch scalars likewise), so the bound is checked on the number the
    caller meant, never on a rounded double.
    """
    words = _range_words(min_value, max_value, open_min=open_min, open_max=open_max)
    try:
        x = to_fraction(value, what=name)
    except LawError:
        raise InvalidArgument(f"{name} must be a finite number{words}, got {_shown(value)}") from None
    bad = min_value is not None and (x <= min_value if open_min else x < min_value)
    bad = bad or max_value is not None and (x >= max_value if open_max else x > max_value)
    if bad:
        shown = str(x) if isinstance(value, (int, Fraction)) else _shown(value)
        raise InvalidArgument(f"{name} must be a number{words}, got {shown}")
    return x


def check_probability(value: Any, name: str) -> float:
    """A float in [0, 1]."""
    return check_real(value, name, min_value=0, max_value=1)


def check_bool(value: Any, name: str) -> bool:
    """``value`` when it is a bool (``True`` / ``False``; 1 and "yes" are not)."""
    if not isinstance(value, bool):
        raise InvalidArgument(f"{name} must be True or False, got {_shown(value)}")
    return value


def check_seed(value: Any, name: str = "seed") -> int:
    """A seed: an int >= 0 (what ``numpy.random.default_rng`` and ``torch.Generator.manual_seed`` both take)."""
    return check_integer(value, name, min_value=0)


def check_generator(rng: Any, name: str = "rng") -> Any:
    """A ``numpy.random.Generator``: the sampled side draws from an explicit, seeded one, never global state."""
    import numpy as np

    if not isinstance(rng, np.random.Generator):
        raise InvalidArgument(f"{name} must be a numpy.random.Generator, e.g. numpy.random.default_rng(seed), "
                              f"got {_shown(rng)}")
    return rng


#: the random generators a sampler under audit may draw from: numpy's PCG64 or torch's CPU generator
GENERATOR_KINDS = ("numpy", "torch")


def check_generator_kind(kind: Any, what: str = "generator kind") -> str:
    """One of ``GENERATOR_KINDS`` ("numpy" or "torch"); ``UnknownName`` otherwise."""
    return check_choice(kind, what, GENERATOR_KINDS)


def did_you_mean(value: str, choices: Iterable[str]) -> str | None:
    """The choice nearest to ``value`` when it is a likely slip (``two_token`` -> ``two-token``), else None."""
    choices = [str(c) for c in choices]
    normal = {c.lower().replace("_", "-"): c for c in choices}
    key = str(value).lower().replace("_", "-")
    if key in normal:
        return normal[key]
    close = difflib.get_close_matches(key, list(normal), n=1, cutoff=0.6)
    return normal[close[0]] if close else None


def check_choice(value: Any, what: str, choices: Iterable[str], *, also: str | None = None) -> str:
    """``value`` when it is one of ``choices``; else ``UnknownName`` listing them, with the nearest one.

    ``also`` names what else the caller accepts, for the message ("or module:function").
    """
    choices = list(choices)
    if isinstance(value, str) and value in choices:
        return value
    near = did_you_mean(value, choices) if isinstance(value, str) else None
    hint = f" (did you mean {near!r}?)" if near else ""
    listed = ", ".join(map(str, choices)) + (f", {also}" if also else "")
    raise UnknownName(f"unknown {what} {value!r}{hint}; choose from: {listed}")


def check_clock(clock: Any, threads: int | None, device: str | None) -> str:
    """``clock`` when a run of ``threads`` torch threads on ``device`` (a torch device name, such as "cpu" or
    "cuda:0") can be timed by it: "wall" always, "cpu" (this process's CPU time, ``specmath.lm.stopwatch``) only
    for 1 thread on a CPU, since it adds up every thread's time, waiting ones included, and is none of a GPU's work.
    None, from a command line that did not set them: the default thread count, and a device checked once known."""
    from specmath.choices import BENCH_CLOCKS

    clock = check_choice(clock, "clock", BENCH_CLOCKS)
    off_cpu = device is not None and device.split(":")[0] != "cpu"
    if clock == "cpu" and (threads != 1 or off_cpu):
        run = ('the default thread count' if threads is None else f"{threads} thread{'' if threads == 1 else 's'}") + (f" on {device}" if device else "")
        raise InvalidArgument(f"clock 'cpu' reads this process's CPU time, a run's own time only with 1 torch thread on a "
                              f"CPU (this run: {run}): set --threads 1 on a CPU, or use the wall clock")
    return clock


def check_choices(values: Iterable[Any], what: str, choices: Iterable[str]) -> list[str]:
    """Each of ``values`` checked by ``check_choice``; a bare string is one value, not its characters."""
    if isinstance(values, str):
        values = [values]
    choices = list(choices)
    return [check_choice(v, what, choices) for v in values]


def check_file(path: Any, what: str = "file") -> Path:
    """An existing regular file: ``InvalidFile`` naming it when it is missing or a directory."""
    try:
        p = Path(path)
    except TypeError:
        raise InvalidArgument(f"{what} must be a path, got {_shown(path)}") from None
    if not p.exists():
        raise InvalidFile(f"{what} {str(p)!r}: no such file")
    if not p.is_file():
        raise InvalidFile(f"{what} {str(p)!r} is not a file")
    return p



def check_output_file(path: Any, what: str = "output file") -> Path:
    """A file to write: its folder exists and it is not a folder itself (checked before the work that fills it)."""
    try:
        p = Path(path)
    except TypeError:
        raise InvalidArgument(f"{what} must be a path, got {_shown(path)}") from None
    if p.is_dir():
        raise InvalidFile(f"{what} {str(p)!r} is a folder; give a file name")
    if not p.parent.is_dir():
        raise InvalidFile(f"{what} {str(p)!r}: no such folder {str(p.parent)!r}")
    return p
