"""Internal: Where the weights this repository trains are found: beside the code in a clone, else in ``specmath-models``.

In a clone (and an editable install) the files live where the training scripts write them, under
``specmath/lm/``: ``bundled/`` (``scripts/train_bundled_pair.py``) and ``smollm2_draft/ngram.safetensors``
(``scripts/build_smollm2_ngram.py``). specmath's wheel carries none of them: they are most of its size and
useless without torch. The distribution ``specmath-models``, which ``models/`` builds from the same files
(``pip install ./models``, or its wheel), installs them as the package ``specmath_models`` under the same
relative paths. So ``find_weights(relative)`` is ``specmath/lm/<relative>`` where that exists, else
``specmath_models/<relative>``: a clone always uses its own files, retrained or not.

Imports neither torch nor ``specmath_models`` (the package is located, not run).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

__all__ = ["SOURCE_DIR", "MODELS_PACKAGE", "INSTALL_HINT", "installed_models_dir", "find_weights"]

#: ``specmath/lm/``: where a clone keeps the weights and the training scripts write them
SOURCE_DIR = Path(__file__).resolve().parent

#: the importable name of the ``specmath-models`` distribution
MODELS_PACKAGE = "specmath_models"

#: how to get the weights where specmath was installed from its wheel
INSTALL_HINT = ("install specmath-models: `pip install ./models` in a clone of specmath, or its wheel "
                "(docs/how-to/install.md)")


def installed_models_dir() -> Path | None:
    """The folder of the installed ``specmath_models`` package, or None where it is not installed."""
    spec = importlib.util.find_spec(MODELS_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return Path(locations[0]) if locations else None


def find_weights(relative: str, what: str) -> Path:
    """``specmath/lm/<relative>`` if it exists, else ``<specmath_models>/<relative>``; ``what`` names it in the error.

    Raises ValueError naming both places and how to install or train the file where neither has it.
    """
    here = SOURCE_DIR / relative
    if here.exists():
        return here
    installed = installed_models_dir()
    if installed is None:
        raise ValueError(f"{what} not found: {here} does not exist and specmath-models is not installed; {INSTALL_HINT}")
    if not (installed / relative).exists():
        raise ValueError(f"{what} not found: neither {here} nor {installed / relative} exists; {INSTALL_HINT}")
    return installed / relative
