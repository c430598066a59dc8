"""The one look of every judgelab figure: palette, fonts, sizes, applied through ``use_style()``.

Every function in :mod:`judgelab.viz.plots` draws inside ``use_style()``, so a notebook, the
``judgelab reproduce`` command and a user's own script produce the same figure. The style is a
context manager (matplotlib's ``rc_context``): it never leaks into the caller's other plots.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import matplotlib
import matplotlib.pyplot as plt
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.figure import Figure

__all__ = ["CI_COLOR", "DIVERGING_CMAP", "DPI", "FAMILY_COLORS", "FIG_WIDTH", "FONT_SIZE", "PALETTE", "ROLE_COLORS",
           "TITLE_SIZE", "caption", "family_colors", "finish", "finish_axes", "panel_axes", "use_style"]

# Colour-blind-safe qualitative palette (Okabe & Ito); order = the order series are first seen.
PALETTE: tuple[str, ...] = (
    "#0072B2",  # blue
    "#D55E00",  # vermillion
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#E69F00",  # orange
    "#56B4E9",  # sky blue
    "#000000",  # black
    "#F0E442",  # yellow: last, it is faint on white
)
# Fixed roles, so "human" is the same grey in every figure and "judge" the same blue.
ROLE_COLORS: dict[str, str] = {"human": "#7F7F7F", "gold": "#7F7F7F", "judge": PALETTE[0], "paper": PALETTE[1]}
# Model families keep one colour in every figure (the paper's families and the released SummEval judges).
FAMILY_COLORS: dict[str, str] = {"GPT": "#0072B2", "deepseek": "#D55E00", "Gemma 3": "#009E73", "Llama 3": "#CC79A7",
                                 "Phi 4": "#E69F00", "Qwen 3": "#56B4E9", "Llama 2": "#000000"}
DIVERGING_CMAP = "vlag"  # signed quantities centred on 0

FONT_SIZE = 10
TITLE_SIZE = 11
FIG_WIDTH = 7.0  # inches: one readable column in a notebook and on a page
DPI = 150  # PNG resolution: sharp in a notebook, small on disk
CI_COLOR = "#4D4D4D"

_RC: dict[str, Any] = {
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Arial", "Helvetica"],
    "font.size": FONT_SIZE,
    "axes.titlesize": TITLE_SIZE,
    "axes.titleweight": "bold",
    "axes.labelsize": FONT_SIZE,
    "xtick.labelsize": FONT_SIZE - 1,
    "ytick.labelsize": FONT_SIZE - 1,
    "legend.fontsize": FONT_SIZE - 1,
    "legend.title_fontsize": FONT_SIZE - 1,
    "legend.frameon": False,
    "figure.dpi": 100,
    "savefig.dpi": DPI,
    "savefig.bbox": "tight",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.35,
    "grid.linewidth": 0.6,
    "errorbar.capsize": 3,
    # PDF text as text (editable, searchable), fixed metadata so reruns are byte-comparable
    "pdf.fonttype": 42,
    "svg.hashsalt": "judgelab",
}


def family_colors(names: Sequence[str]) -> dict[str, str]:
    """A stable colour per name: roles and known model families keep theirs, others take free palette colours."""
    out: dict[str, str] = {}
    unique = list(dict.fromkeys(names))
    fixed = {n: ROLE_COLORS.get(n.lower()) or FAMILY_COLORS.get(n) for n in unique}
    taken = {c for c in fixed.values() if c}
    free = [c for c in PALETTE if c not in taken] or list(PALETTE)
    k = 0
    for name in unique:
        if fixed[name]:
            out[name] = fixed[name]  # type: ignore[assignment]
        else:
            out[name] = free[k % len(free)]
            k += 1
    return out


@contextmanager
def use_style(**overrides: Any) -> Iterator[None]:
    """Apply judgelab's seaborn theme and rc settings for the duration of the block.

    ``overrides`` are extra matplotlib rc parameters (e.g. ``{"font.size": 12}`` spelled
    ``**{"font.size": 12}``).
    """
    theme = sns.axes_style("whitegrid")
    with matplotlib.rc_context({**theme, **_RC, **overrides}):
        with sns.color_palette(list(PALETTE)):
            yield


def caption(fig: Any, text: str) -> None:
    """Put a caption under the figure (source, interval method, resamples): it travels with the PNG.

    The text is wrapped here to the figure's width (matplotlib's own wrapping is lost when
    ``bbox_inches="tight"`` grows the canvas), then placed just below the axes.
    """
    chars_per_line = max(int(fig.get_figwidth() * 72 / ((FONT_SIZE - 2) * 0.55)), 40)
    wrapped = "\n".join(textwrap.wrap(text, chars_per_line))
    fig.text(0.01, 0.0, wrapped, ha="left", va="top", fontsize=FONT_SIZE - 2, color="#333333",
             transform=fig.transFigure)


def finish(fig: Figure, text: str | None) -> Figure:
    """Lay out a figure a plot function made, caption it, and hand it to the caller.

    The figure is detached from pyplot: the caller owns it, and Jupyter shows the returned value
    once instead of also auto-showing every open pyplot figure at the end of the cell.
    """
    fig.tight_layout()
    if text:
        caption(fig, text)
    plt.close(fig)
    return fig


def panel_axes(ax: Axes | None, size: tuple[float, float]) -> tuple[Axes, bool]:
    """The Axes a one-panel plot draws on: ``ax``, or a new figure's of ``size`` (then ``True``: ours to lay out)."""
    if ax is not None:
        return ax, False
    _, new = plt.subplots(figsize=size)
    return new, True


def finish_axes(ax: Axes, own: bool, text: str | None) -> Axes:
    """Lay out (when the plot made the figure) and caption a one-panel plot; return its Axes.

    The figure stays with pyplot, so Jupyter shows it once, as it shows a seaborn Axes plot.
    """
    if own:
        ax.figure.tight_layout()
    if text:
        caption(ax.figure, text)
    return ax
