"""The finishing touches every multi-panel figure shares: grid, axis labels, legend, title.

One function, so the figures of different tracks look alike and say what their axes are.
"""

from __future__ import annotations

__all__ = ["finish_panels"]


def finish_panels(fig, axes, *, xlabel: str, ylabel: str, title: str, title_size: int = 10):
    """Grid and x label on every panel, y label and legend on the first, a figure title; returns ``fig``."""
    for ax in axes:
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(ylabel)
    axes[0].legend(fontsize=8)
    fig.suptitle(title, fontsize=title_size)
    fig.tight_layout()
    return fig
