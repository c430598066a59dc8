"""The one look of everything judgelab shows: figures (palette, fonts, sizes, applied through
``use_style()``) and numbers in tables (:func:`format_number`, :func:`format_p_value`, :func:`frame_html`).

Every function in :mod:`judgelab.viz.plots` draws inside ``use_style()``, so a notebook, the
``judgelab reproduce`` command and a user's own script produce the same figure. The style is a
context manager: it never leaks into the caller's other plots, and never changes the session's backend or
interactive mode (so the plots a notebook draws after judgelab's still show).

Tables in notebooks, widgets and the HTML report go through :func:`frame_html`: numbers right-aligned
and never wrapped mid-number, p-values in one cell (``<0.001``), an interval in one cell. Matplotlib is
imported on first use, so a result's notebook view does not load it.
"""

from __future__ import annotations

import html
import math
import numbers
import textwrap
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["CI_COLOR", "DIVERGING_CMAP", "DPI", "FAMILY_COLORS", "FIG_WIDTH", "FONT_SIZE", "NUMBER_CELL", "PALETTE",
           "ROLE_COLORS", "SESSION_RC_KEYS", "TEXT_CELL", "TITLE_SIZE", "caption", "family_colors", "finish", "finish_axes", "format_interval",
           "format_number", "format_p_value", "frame_html", "is_p_column", "panel_axes", "records_html", "shorten", "use_style"]

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


# rc keys the style never restores: which backend draws and whether pyplot shows figures as they are made
# belong to the session. A first figure made inside the block can switch IPython's inline backend on (which
# turns interactive mode on); matplotlib's rc_context would then switch interactive mode off again on exit,
# and every later plot in the notebook would show an ``<Axes ...>`` line instead of its figure.
SESSION_RC_KEYS: tuple[str, ...] = ("backend", "interactive")


@contextmanager
def use_style(**overrides: Any) -> Iterator[None]:
    """Apply judgelab's seaborn theme and rc settings for the duration of the block.

    ``overrides`` are extra matplotlib rc parameters (e.g. ``{"font.size": 12}`` spelled
    ``**{"font.size": 12}``). On exit every rc parameter is restored to its value before the block, except
    the session's own (:data:`SESSION_RC_KEYS`: the backend and interactive mode), which the block may have
    set for the first time and which stay as they are then.
    """
    import matplotlib
    import seaborn as sns

    saved = dict(matplotlib.rcParams.copy())  # as rc_context reads it: the backend is not resolved here
    for key in SESSION_RC_KEYS:
        saved.pop(key, None)
    theme = sns.axes_style("whitegrid")
    try:
        matplotlib.rcParams.update({**theme, **_RC, **overrides})
        with sns.color_palette(list(PALETTE)):
            yield
    finally:
        matplotlib.rcParams.update(saved)


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
    import matplotlib.pyplot as plt

    fig.tight_layout()
    if text:
        caption(fig, text)
    plt.close(fig)
    return fig


def panel_axes(ax: Axes | None, size: tuple[float, float]) -> tuple[Axes, bool]:
    """The Axes a one-panel plot draws on: ``ax``, or a new figure's of ``size`` (then ``True``: ours to lay out)."""
    import matplotlib.pyplot as plt

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


# ---------------------------------------------------------------- numbers and tables for reading
# inline (not a class): Jupyter keeps inline styles of an output, and a report has no stylesheet to depend on
TEXT_CELL = "padding:2px 8px;vertical-align:top;text-align:left"
NUMBER_CELL = "padding:2px 8px;vertical-align:top;white-space:nowrap;text-align:right;font-variant-numeric:tabular-nums"
_MISSING = "–"  # an en dash: missing or undefined (NaN), never shown as 0
_P_COLUMNS = ("p_value", "p_adjusted")  # and every column named p_value... or ..._p (a wide table's rho_p)


def _missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def format_number(value: Any, digits: int = 3, *, decimals: int | None = None) -> str:
    """A number as a paper prints it: integers with thousands separators, others with ``digits`` significant
    digits (trailing zeros kept: ``0.500``, ``12.3``; rounded to a whole number with separators from 1,000 up;
    scientific below 10^-digits), missing/NaN as an en dash. ``decimals``: a fixed number of decimals instead
    (a column of proportions printed alike). The value itself is never changed, only shown."""
    if (decimals is not None and isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral)
            and not _missing(value) and math.isfinite(float(value))):
        return f"{float(value):.{decimals}f}"
    if _missing(value):
        return _MISSING
    if isinstance(value, bool):
        return str(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isinf(number):
        return "∞" if number > 0 else "−∞"
    if number.is_integer() and abs(number) < 1e15 and not isinstance(value, float):
        return f"{int(number):,}"
    if number == 0:
        return f"{0:.{max(digits - 1, 0)}f}"
    if abs(number) < 10 ** -digits:
        return f"{number:.{max(digits - 1, 1)}e}"
    rounded = float(f"{number:.{digits - 1}e}")  # to ``digits`` significant digits first: 999.6 reads 1,000
    if abs(rounded) >= 1_000:
        return f"{number:,.0f}"
    decimals = max(digits - 1 - math.floor(math.log10(abs(rounded))), 0)
    return f"{rounded:.{decimals}f}"


def format_p_value(p: Any) -> str:
    """A p-value in one short token: ``<0.001`` below 0.001, else three decimals; missing as an en dash."""
    if _missing(p):
        return _MISSING
    p = float(p)
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def format_interval(low: Any, high: Any, digits: int = 3, *, decimals: int | None = None) -> str:
    """``[low, high]`` in one token (each end as :func:`format_number` shows it); an en dash when missing."""
    if _missing(low) and _missing(high):
        return _MISSING
    return f"[{format_number(low, digits, decimals=decimals)}, {format_number(high, digits, decimals=decimals)}]"


def is_p_column(column: str, p_columns: Iterable[str] = _P_COLUMNS) -> bool:
    """Whether ``column`` holds p-values: one of ``p_columns``, ``p_value...``, or ``..._p`` (a wide table's
    ``rho_p``)."""
    return column in p_columns or column.startswith("p_value") or column.endswith("_p")


def shorten(text: str, width: int) -> str:
    """``text`` cut at the last word boundary before ``width`` characters, with an ellipsis (never mid-word)."""
    if len(text) <= width:
        return text
    head = text[: width + 1]
    space = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
    base = text[:space] if space > 0 else text[:width]  # no space: the first word alone is too long
    return (base.rstrip(" \n\t,;:.-–") or base) + "…"


def _text_cell(value: Any, text_width: int | None) -> str:
    text = str(value)
    if text_width is None or len(text) <= text_width:
        return f"<td style='{TEXT_CELL}'>{html.escape(text)}</td>"
    # a long method or note: its start, wrapped once in a column of readable width, all of it in a tooltip
    return (f"<td style='{TEXT_CELL};min-width:14em;max-width:30em' title='{html.escape(text, quote=True)}'>"
            f"{html.escape(shorten(text, text_width))}</td>")


def frame_html(frame: pd.DataFrame, *, max_rows: int | None = None, join_ci: bool = True,
               p_columns: Iterable[str] = _P_COLUMNS, table_id: str | None = None,
               text_width: int | None = None) -> str:
    """A DataFrame as an HTML table for reading: every text cell HTML-escaped, numbers right-aligned and
    never wrapped, p-values via :func:`format_p_value`, and (``join_ci``) ``ci_low``/``ci_high`` shown as one
    ``CI`` cell. ``max_rows`` shows the first rows and says how many were left out. ``text_width``: a text
    cell longer than this many characters shows its start (cut at a word) with the whole text as a tooltip.
    Only the view is formatted: the frame is not changed."""
    if frame is None or len(frame.columns) == 0:
        return "<p><i>no rows</i></p>"
    shown = frame if max_rows is None else frame.head(max_rows)
    out = records_html(shown.to_dict(orient="records"), [str(c) for c in shown.columns], join_ci=join_ci,
                       p_columns=p_columns, table_id=table_id, text_width=text_width)
    if len(shown) < len(frame):
        out += f"<p><i>first {len(shown):,} of {len(frame):,} rows</i></p>"
    return out


def records_html(records: Sequence[dict[str, Any]], columns: Sequence[str], *, join_ci: bool = True,
                 p_columns: Iterable[str] = _P_COLUMNS, table_id: str | None = None,
                 text_width: int | None = None) -> str:
    """:func:`frame_html` for rows already as dicts (cheap inside a loop over many small tables)."""
    columns = list(columns)
    p_columns = set(p_columns)
    ci = join_ci and {"ci_low", "ci_high"} <= set(columns)
    if ci:
        columns = [c for c in columns if c != "ci_high"]
    head = "".join(f"<th style='{TEXT_CELL}'>{html.escape('CI' if ci and c == 'ci_low' else str(c))}</th>"
                   for c in columns)
    body = []
    for record in records:
        cells = []
        for c in columns:
            value = record.get(c)
            if ci and c == "ci_low":
                cells.append(f"<td style='{NUMBER_CELL}'>{html.escape(format_interval(value, record['ci_high']))}</td>")
            elif is_p_column(c, p_columns):
                cells.append(f"<td style='{NUMBER_CELL}'>{html.escape(format_p_value(value))}</td>")
            elif _missing(value) or (isinstance(value, numbers.Number) and not isinstance(value, bool)):
                cells.append(f"<td style='{NUMBER_CELL}'>{html.escape(format_number(value))}</td>")
            else:
                cells.append(_text_cell(value, text_width))
        body.append("<tr>" + "".join(cells) + "</tr>")
    ident = f" id='{html.escape(table_id)}'" if table_id else ""
    return (f"<table{ident} class='judgelab-table' style='border-collapse:collapse'><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>")
