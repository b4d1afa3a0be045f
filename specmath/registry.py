"""A registry of named things loaded on demand: name -> ``"module:attr"``, imported on first use.

Naming what a registry holds costs nothing (no import), so the command line can offer and check the
names, and list them, without loading what each entry needs (torch, scipy, an engine's client); the
entry's module is imported only when the entry itself is asked for::

    SAMPLERS = Registry("sampler", {
        "reference": "specmath.audit.rounds.builtin_adapters:REFERENCE",
        "specmath-torch": "specmath.audit.rounds.builtin_adapters:SPECMATH_TORCH",
    })
    SAMPLERS.names            # ('reference', 'specmath-torch'): nothing imported
    SAMPLERS.named("refrence")  # UnknownName: unknown sampler 'refrence' (did you mean 'reference'?); ...
    SAMPLERS["reference"]     # imports builtin_adapters, returns its REFERENCE

An entry's module must not import torch at its top unless what it names cannot work without torch
(``tests/test_layout.py``); ``tests/test_layout.py`` also reads each ``"module:attr"`` string as an
import edge of the module that holds it, so a registry obeys the layers as an import does. Every
registry has a test that each entry loads and is what the registry promises.

The registry is a read-only ``Mapping``: iterating it yields names, ``in`` checks a name, and
``registry[name]`` (or ``values()``, ``items()``) loads.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator, Mapping
from typing import Any

from specmath.validation import check_choice

__all__ = ["Registry"]

#: an entry's location: a dotted module, a colon, an attribute
LOCATION = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*")


class Registry(Mapping):
    """Named entries, each a ``"module:attr"`` location imported when the entry is first asked for.

    ``what`` names an entry in messages ("adapter", "engine"); ``entries`` maps each name to its
    location, in the order the registry offers them. A location not of the form ``module:attr`` is a
    ``ValueError`` when the registry is built (so a typo fails at import, not at first use).
    """

    def __init__(self, what: str, entries: Mapping[str, str]) -> None:
        for name, location in entries.items():
            if not isinstance(location, str) or not LOCATION.fullmatch(location):
                raise ValueError(f"{what} {name!r}: its location must be 'module:attr', got {location!r}")
        self.what = what
        self._entries = dict(entries)

    @property
    def names(self) -> tuple[str, ...]:
        """The entries' names, in order; imports nothing."""
        return tuple(self._entries)

    def location(self, name: str) -> str:
        """Where entry ``name`` lives, ``"module:attr"``; imports nothing."""
        return self._entries[self.check(name)]

    def check(self, name: Any, also: str | None = None) -> str:
        """``name`` when it is an entry; else ``UnknownName`` with the nearest name and the choices
        (``also``: what else is accepted where the name is read, e.g. "or module:function")."""
        return check_choice(name, self.what, self._entries, also=also)

    def named(self, name: Any, also: str | None = None) -> Any:
        """The entry called ``name``, loaded (``check`` first, so a near miss gets "did you mean")."""
        return self[self.check(name, also)]

    def __getitem__(self, name: str) -> Any:
        module, _, attr = self._entries[name].partition(":")
        return getattr(importlib.import_module(module), attr)

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __repr__(self) -> str:
        return f"Registry({self.what!r}, {self._entries!r})"
