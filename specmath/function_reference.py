"""Internal: A user's function named on the command line: ``module:function`` or ``path/to/file.py:function``.

``specmath verify-rule`` (a rule), ``specmath audit`` (a sampler) and any command that takes a
user's function resolve the name with ``resolve_function``, so the same mistake gets the same line
everywhere: not of that form, no such file, no module named, a module that raised while it was
imported, no such attribute (with the nearest public callable of the module, if one is close), not
callable. Each is an ``InvalidArgument`` (``InvalidFile`` for a
file) that names what the function is for and the reference as given.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from specmath.validation import InvalidArgument, InvalidFile, did_you_mean

__all__ = ["FUNCTION_REFERENCE", "resolve_function"]

#: how a function is named on the command line (``specmath verify-rule``, ``specmath audit``)
FUNCTION_REFERENCE = "module:function or path/to/file.py:function"


def resolve_function(reference: Any, what: str = "function") -> Callable:
    """The callable that ``"module:function"`` or ``"path/to/file.py:function"`` names.

    ``what`` says what the function is for ("rule", "sampler"), for the messages. A dotted module
    is imported with the current directory on the path (as ``python -m`` does); a ``.py`` file is
    loaded as a module of its own stem, once (again only when it has changed).
    """
    text = str(reference) if isinstance(reference, (str, Path)) else None
    module_name, sep, function_name = (text or "").rpartition(":")
    if not sep or not module_name or not function_name.isidentifier():
        raise InvalidArgument(f"{what} must be {FUNCTION_REFERENCE}, got {reference!r}")
    prefix = f"{what} {text!r}"
    if module_name.endswith(".py"):
        path = Path(module_name)
        if not path.is_file():
            raise InvalidFile(f"{prefix}: no such file {module_name!r}" if not path.exists()
                              else f"{prefix}: {module_name!r} is not a file")
        module = _load_file(path, prefix)
    elif Path(module_name).is_file():
        raise InvalidFile(f"{prefix}: {module_name!r} is not a Python file (its name must end in .py)")
    elif not all(part.isidentifier() for part in module_name.split(".")):
        raise InvalidArgument(f"{prefix}: {module_name!r} is neither a dotted module name nor a file ending in .py")
    else:
        module = _import_module(module_name, prefix)
    if not hasattr(module, function_name):
        near = did_you_mean(function_name, [name for name, value in vars(module).items()
                                            if callable(value) and not name.startswith("_")])
        hint = f" (did you mean {near!r}?)" if near else ""
        raise InvalidArgument(f"{prefix}: module {module_name!r} has no attribute {function_name!r}{hint}")
    function = getattr(module, function_name)
    if not callable(function):
        raise InvalidArgument(f"{prefix}: {function_name!r} is not callable, it is a {type(function).__name__}")
    return function


def _raised(exc: BaseException) -> str:
    """An exception raised by a user's module, in one line."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def _import_module(module_name: str, prefix: str) -> ModuleType:
    if "" not in sys.path:  # the console script, unlike ``python -m``, leaves the current directory off the path
        sys.path.insert(0, "")
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        # the module itself (or a package above it) is missing, not something it imports
        if exc.name and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            raise InvalidArgument(f"{prefix}: no module named {exc.name!r}") from None
        raise InvalidArgument(f"{prefix}: importing module {module_name!r} raised {_raised(exc)}") from exc
    except Exception as exc:  # the user's module raised while it ran: name it, in one line
        raise InvalidArgument(f"{prefix}: importing module {module_name!r} raised {_raised(exc)}") from exc


#: files loaded so far, by (resolved path, size, modification time): a file is run once, as an import is
_LOADED: dict[tuple[Path, int, int], ModuleType] = {}


def _load_file(path: Path, prefix: str) -> ModuleType:
    stat = path.stat()
    key = (path.resolve(), stat.st_size, stat.st_mtime_ns)
    if key in _LOADED:
        return _LOADED[key]
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise InvalidFile(f"{prefix}: {str(path)!r} cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # a syntax error or any exception at the file's top level
        raise InvalidFile(f"{prefix}: loading {str(path)!r} raised {_raised(exc)}") from exc
    _LOADED[key] = module
    return module
