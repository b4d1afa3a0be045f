"""ipywidgets front ends of the explorers: sliders wired to the tested view functions.

Each ``*_explorer()`` returns an ``ipywidgets.interactive`` whose ``result`` is the current view;
moving a slider recomputes the view (exactly, for the toy explorers), prints its report and redraws
its plot. The computations live in ``two_token``, ``rand``, ``rounds`` and ``model_step``.
"""

from __future__ import annotations

from fractions import Fraction

import ipywidgets as w
import matplotlib.pyplot as plt

from specmath.explorers.explorer_plots import plot_model_step, plot_rand_view, plot_round_view, plot_two_token_view
from specmath.explorers.rand_explorer import METHODS, format_rand, rand_view
from specmath.explorers.round_explorer import format_round, round_view
from specmath.explorers.step_explorer import format_two_token, two_token_view

__all__ = ["show_two_token", "show_rand", "show_round", "two_token_explorer", "rand_explorer", "round_explorer", "model_step_explorer"]

#: room for the longest label ("temperature", "b (target)") so ipywidgets does not cut it to "temperat..."
LABEL_STYLE = {"description_width": "7em"}
#: sliders wide enough for their label and readout
SLIDER_LAYOUT = {"width": "32em"}
#: the prompt box spans the panel, so a sentence fits
PROMPT_LAYOUT = {"width": "48em"}


def _labelled(widget_class, *args, layout=None, **kwargs):
    """A widget with the course's label width and layout (see LABEL_STYLE)."""
    return widget_class(*args, style=LABEL_STYLE, layout=w.Layout(**(layout or SLIDER_LAYOUT)), **kwargs)


def _show(compute, report, plot):
    """Compute a view, print its ``report`` and draw its ``plot``; a ValueError (a combination of
    slider values the view does not cover) prints its one-line reason instead."""
    try:
        view = compute()
    except ValueError as error:
        print(f"not available: {error}")
        return None
    print(report(view))
    plot(view)
    plt.show()
    return view


def show_two_token(p_percent: int = 70, q_percent: int = 40):
    """Print and plot the two-token step at p(A) = p_percent/100, q(A) = q_percent/100 (exact)."""
    return _show(lambda: two_token_view(Fraction(p_percent, 100), Fraction(q_percent, 100)), format_two_token, plot_two_token_view)


def show_rand(method: str = "basic", a: int = 5, b: int = 7):
    """Print and plot rand_a -> rand_b by ``method``; a bad combination prints the ValueError's reason."""
    return _show(lambda: rand_view(method, a, b), format_rand, plot_rand_view)


def show_round(alpha_percent: int = 80, gamma: int = 4, c_percent: int = 10):
    """Print and plot the speedup model at alpha = alpha_percent/100, c = c_percent/100 (exact)."""
    return _show(lambda: round_view(Fraction(alpha_percent, 100), gamma, Fraction(c_percent, 100)), format_round, plot_round_view)


def two_token_explorer() -> w.interactive:
    """Sliders p(A), q(A) in percent -> acceptance, residual, path table, output law."""
    return w.interactive(
        show_two_token,
        p_percent=_labelled(w.IntSlider, 70, 0, 100, description="p(A) %"),
        q_percent=_labelled(w.IntSlider, 40, 0, 100, description="q(A) %"),
    )


def rand_explorer() -> w.interactive:
    """Method and die sizes a, b -> exact law and expected calls."""
    return w.interactive(
        show_rand,
        method=_labelled(w.Dropdown, options=METHODS, value="basic", description="method"),
        a=_labelled(w.IntSlider, 5, 2, 12, description="a (die)"),
        b=_labelled(w.IntSlider, 7, 2, 12, description="b (target)"),
    )


def round_explorer() -> w.interactive:
    """alpha, gamma, c -> expected tokens per round, speedup and the best gamma."""
    return w.interactive(
        show_round,
        alpha_percent=_labelled(w.IntSlider, 80, 0, 100, description="alpha %"),
        gamma=_labelled(w.IntSlider, 4, 0, 16, description="gamma"),
        c_percent=_labelled(w.IntSlider, 10, 0, 100, description="c %"),
    )


def model_step_explorer(target, draft, tokenizer) -> w.interactive:
    """Prompt, gamma, seed, temperature -> p and q bars and the acceptance of each draft token."""
    from specmath.explorers.model_step_explorer import format_model_step, model_step
    from specmath.sampling_options import SamplingOptions

    def show_model_step(prompt: str = "It was the best of times, it was the ", gamma: int = 4, seed: int = 0, temperature: float = 1.0):
        def compute():
            return model_step(target, draft, tokenizer, prompt, gamma, seed=seed, sampling=SamplingOptions(temperature=temperature))

        return _show(compute, format_model_step, plot_model_step)

    return w.interactive(
        show_model_step,
        {"manual": True, "manual_name": "run one round"},
        prompt=_labelled(w.Text, "It was the best of times, it was the ", description="prompt", continuous_update=False,
                         layout=PROMPT_LAYOUT),
        gamma=_labelled(w.IntSlider, 4, 1, 8, description="gamma"),
        seed=_labelled(w.IntText, 0, description="seed"),
        temperature=_labelled(w.FloatSlider, value=1.0, min=0.0, max=2.0, step=0.1, description="temperature"),
    )
