"""Internal: One plotting function per figure in ``figures/`` (matplotlib), joined by ``specmath.figures``.

Layer 5 (audits and views) of the layers in docs/explanation/architecture.md: imports the layers
before it and ``specmath.figures``; the real-model figures import ``specmath.lm`` inside their functions.
"""
