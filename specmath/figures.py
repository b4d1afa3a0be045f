"""Internal: The figures: one plotting function per file in ``figures/``.

A plotting function takes no required argument, returns a matplotlib Figure, and is marked with
``@figure("file_name.png")``; the mark only names the file (it adds the function to nothing).
``PLOT_MODULES`` lists the modules that hold plotting functions, and ``load_all`` joins their
marked functions into one file name -> function dict, the way ``specmath.proofs`` joins PROOFS.
Notebooks call the same functions, so what a notebook shows is what ``specmath figures``
(``make figures``) writes. The modules are imported on demand, so the exact core never imports
matplotlib.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from specmath.validation import InvalidFile, check_choices

__all__ = ["figure", "figures_in", "PLOT_MODULES", "load_all", "regenerate"]

#: modules holding plotting functions (one line per module)
PLOT_MODULES: tuple[str, ...] = (
    "specmath.plots.classic_plots",
    "specmath.plots.lm_plots",
    "specmath.plots.speculative_plots",
    "specmath.plots.beyond_plots",
    "specmath.plots.entropy_plots",
    "specmath.plots.tree_plots",
)


def figure(file_name: str):
    """Decorator: mark a plotting function as the producer of ``figures/<file_name>``."""

    def mark(fn: Callable) -> Callable:
        fn.figure_file = file_name
        return fn

    return mark


def figures_in(module: ModuleType) -> dict[str, Callable]:
    """The marked plotting functions defined in ``module``, by file name, in definition order."""
    out: dict[str, Callable] = {}
    for fn in vars(module).values():
        name = getattr(fn, "figure_file", None)
        if name is None or getattr(fn, "__module__", None) != module.__name__:
            continue
        if name in out:
            raise ValueError(f"two plotting functions in {module.__name__} claim figures/{name}")
        out[name] = fn
    return out


def load_all(modules: tuple[str, ...] | list[str] | None = None) -> dict[str, Callable]:
    """file name -> plotting function, joined over the plotting modules (all, or those named)."""
    joined: dict[str, Callable] = {}
    for module_name in modules or PLOT_MODULES:
        for name, fn in figures_in(importlib.import_module(module_name)).items():
            if name in joined:
                raise ValueError(f"figures/{name} is claimed by {joined[name].__module__} and {module_name}")
            joined[name] = fn
    return joined


def regenerate(out_dir: str | Path = "figures", only: list[str] | None = None) -> list[Path]:
    """Write every figure (or those in ``only``) to ``out_dir``; return the paths.

    A name in ``only`` that no plotting function claims is an ``UnknownName`` (with the nearest
    one), and an ``out_dir`` that is a file an ``InvalidFile``, both before anything is drawn.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InvalidFile(f"output folder {str(out)!r} is a file")
    plots = load_all()
    chosen = set(check_choices(only, "figure", plots)) if only is not None else set(plots)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    written = []
    for file_name, fn in plots.items():
        if file_name not in chosen:
            continue
        fig = fn()
        path = out / file_name
        # metadata without dates keeps regenerated PNGs byte-stable
        fig.savefig(path, dpi=110, bbox_inches="tight", metadata={"Software": None})
        plt.close(fig)
        written.append(path)
    return written
