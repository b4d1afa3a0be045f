"""The figure registry: one plotting function per file in ``figures/``.

A plotting function takes no required argument, returns a matplotlib Figure, and is registered
with ``@figure("file_name.png")``. Notebooks call the same functions, so what a notebook shows is
what ``specmath figures`` (``make figures``) writes. Modules holding plotting functions are listed
in PLOT_MODULES; they are imported lazily, so the exact core never imports matplotlib.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

__all__ = ["figure", "FIGURES", "PLOT_MODULES", "load_all", "regenerate"]

#: file name -> plotting function returning a matplotlib Figure
FIGURES: dict[str, Callable] = {}

#: modules whose import registers figures (one line per module)
PLOT_MODULES: list[str] = [
    "specmath.plots.classic_plots",
    "specmath.plots.lm_plots",
    "specmath.plots.speculative_plots",
    "specmath.plots.beyond_plots",
    "specmath.plots.entropy_plots",
]


def figure(file_name: str):
    """Decorator: register a plotting function as the producer of ``figures/<file_name>``."""

    def deco(fn: Callable) -> Callable:
        if file_name in FIGURES and FIGURES[file_name] is not fn:
            raise ValueError(f"two plotting functions claim figures/{file_name}")
        FIGURES[file_name] = fn
        return fn

    return deco


def load_all(modules: list[str] | None = None) -> dict[str, Callable]:
    """Import the plotting modules (all, or those named) and return the registry."""
    for name in modules or PLOT_MODULES:
        importlib.import_module(name)
    return FIGURES


def regenerate(out_dir: str | Path = "figures", only: list[str] | None = None) -> list[Path]:
    """Write every registered figure (or those in ``only``) to ``out_dir``; return the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    load_all()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for file_name, fn in FIGURES.items():
        if only and file_name not in only:
            continue
        fig = fn()
        path = out / file_name
        # metadata without dates keeps regenerated PNGs byte-stable
        fig.savefig(path, dpi=110, bbox_inches="tight", metadata={"Software": None})
        plt.close(fig)
        written.append(path)
    return written
