"""specmath-models: the weights the specmath repository trains, for a specmath installed from its wheel.

* ``bundled/``: the character-level draft/target pair of ``specmath.lm.bundled`` (model card ``bundled/README.md``);
* ``smollm2_draft/ngram.safetensors``: SmolLM2-135M-Instruct's n-gram draft table (``specmath.lm.ngram_draft``).

Data only: specmath finds these files through ``specmath.lm.weight_files``, under the same relative paths it
looks for under ``specmath/lm/`` in a clone.
"""

from pathlib import Path

__all__ = ["ROOT"]

#: the folder holding ``bundled/`` and ``smollm2_draft/``
ROOT = Path(__file__).resolve().parent
