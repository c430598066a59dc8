"""Estimates with intervals, drawn: the input checks every plot shares, the row-of-intervals drawer, and
:func:`plot_estimates`, one forest plot for ANY tidy result frame (``metric, estimate, ci_low, ci_high``, as
every statistic and probe returns).

A frame of several metrics gets one panel per metric (an MAE and a correlation share no axis); rows are
labelled by the columns that tell them apart, coloured by ``group=``; ``reference=`` draws a dashed line (0 for a
difference, 0.5 for chance); the caption says which interval the bars are, read from the frame's ``method`` and
``ci_level`` columns, and how many rows had no estimate to draw.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from judgelab.errors import JudgelabError
from judgelab.viz.style import CI_COLOR, FIG_WIDTH, caption, family_colors, finish, shorten, use_style

__all__ = ["ESTIMATE_COLUMNS", "METRIC_LABELS", "PlotInputError", "interval_rows", "plot_estimates",
           "require_columns", "require_rows"]

# what an interval plot reads of a result frame
ESTIMATE_COLUMNS: tuple[str, ...] = ("metric", "estimate", "ci_low", "ci_high")

METRIC_LABELS = {
    "mae": "MAE (lower is better)",
    "spearman_rho": "Spearman's ρ",
    "kendall_tau": "Kendall's τ",
    "pearson_r": "Pearson's r",
    "mean_difference": "mean judge − human",
    "accuracy_mean": "accuracy (mean of both orders)",
    "position_consistency": "position consistency",
    "cohen_kappa": "Cohen's κ",
    "percent_agreement": "percent agreement",
    "length_coefficient": "length coefficient (log-odds per SD)",
}

# columns that describe how a row was computed, never what it is about: not used to label rows
_NOT_LABELS = frozenset({"metric", "method", "note", "ci_level", "unscored_reason", "policy_note"})


class PlotInputError(JudgelabError, ValueError):
    """A frame a plot cannot draw: the message names the missing columns (or rows) and the plot."""


def require_columns(frame: pd.DataFrame, columns: Sequence[str | None], plot: str) -> None:
    """Raise ONE :class:`PlotInputError` naming every column of ``columns`` (None entries skipped) absent from ``frame``."""
    if not isinstance(frame, pd.DataFrame):
        raise PlotInputError(f"{plot} draws a pandas DataFrame, not {type(frame).__name__}")
    missing = [c for c in dict.fromkeys(columns) if c is not None and c not in frame.columns]
    if missing:
        raise PlotInputError(f"{plot} needs columns {missing}, which the frame does not have (it has: "
                             f"{', '.join(map(str, frame.columns[:15]))}{' ...' if len(frame.columns) > 15 else ''})")


def require_rows(frame: pd.DataFrame, plot: str, what: str) -> pd.DataFrame:
    """``frame`` itself, or ONE :class:`PlotInputError` when it has no rows (``what``: the rows the plot draws)."""
    if frame.empty:
        raise PlotInputError(f"{plot} has nothing to draw: the frame has no {what}")
    return frame


def interval_rows(ax: Axes, frame: pd.DataFrame, y: str, hue: str | None, *, order: Sequence[str] | None = None,
                  hue_order: Sequence[str] | None = None, colors: dict[str, str] | None = None) -> None:
    """Points at ``estimate`` with horizontal CI bars, one row per ``y``, dodged by ``hue``."""
    order = list(order) if order is not None else list(dict.fromkeys(frame[y].astype(str)))
    hues = list(hue_order) if hue_order is not None else (
        list(dict.fromkeys(frame[hue].astype(str))) if hue else [""])
    colors = colors or family_colors(hues)
    width = 0.7
    step = width / max(len(hues), 1)
    for k, h in enumerate(hues):
        part = frame if not hue else frame[frame[hue].astype(str) == h]
        pos = {name: i - width / 2 + step * (k + 0.5) for i, name in enumerate(order)}
        part = part[part[y].astype(str).isin(pos)]
        ys = part[y].astype(str).map(pos).to_numpy(float)
        est = part["estimate"].to_numpy(float)
        lo = np.clip(est - part["ci_low"].to_numpy(float), 0, None)
        hi = np.clip(part["ci_high"].to_numpy(float) - est, 0, None)
        color = colors.get(h, CI_COLOR) if hue else CI_COLOR
        ax.errorbar(est, ys, xerr=[np.nan_to_num(lo), np.nan_to_num(hi)], fmt="o", color=color, ecolor=color,
                    markersize=5, elinewidth=1.4, label=h if hue else None)
    ax.set_yticks(range(len(order)), order)
    ax.set_ylim(len(order) - 0.5, -0.5)
    ax.grid(axis="y", visible=False)


def _label_columns(frame: pd.DataFrame, group: str | None) -> list[str]:
    """The descriptive columns whose values tell one metric's rows apart (text, category or bool columns)."""
    out = []
    for column in frame.columns:
        if column in _NOT_LABELS or column == group or column in ESTIMATE_COLUMNS:
            continue
        values = frame[column]
        if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
            continue
        if values.astype(str).groupby(frame["metric"].astype(str)).nunique().max() > 1:
            out.append(str(column))
    return out


def interval_caption(frame: pd.DataFrame, n_undrawn: int = 0) -> str:
    """What the bars are, from the frame: the CI part of each distinct ``method`` and the ``ci_level``."""
    level = ""
    if "ci_level" in frame.columns and frame["ci_level"].notna().any():
        levels = sorted({float(v) for v in frame["ci_level"].dropna()})
        level = " / ".join(f"{v:.0%}" for v in levels) + " "
    methods: list[str] = []
    if "method" in frame.columns:  # the interval part of each method, once (two statistics often share it)
        parts = (m.split("CI: ", 1)[1] if "CI: " in m else m for m in frame["method"].dropna().astype(str))
        methods = list(dict.fromkeys(parts))
    text = f"Points: estimates; bars: {level}confidence intervals"
    if methods:
        shown = "; ".join(shorten(m, 140) for m in methods[:3])
        more = f"; and {len(methods) - 3} more methods" if len(methods) > 3 else ""
        text += f" ({shown}{more})"
    text += "."
    if n_undrawn:
        text += f" {n_undrawn} row{'s' if n_undrawn > 1 else ''} without an estimate not drawn."
    return text


def plot_estimates(results: pd.DataFrame, *, y: str | Sequence[str] | None = None, group: str | None = None,
                   reference: float | Mapping[str, float] | None = None, title: str | None = None,
                   xlabel: str | None = None, caption_text: str | None = None, ax: Axes | None = None) -> Figure:
    """A forest plot of any tidy result frame: one row per estimate with its interval, one panel per metric.

    Input: columns ``metric``, ``estimate``, ``ci_low``, ``ci_high`` (every statistic's and probe's result);
    ``method`` and ``ci_level`` feed the caption when present.

    - ``y``: the column (or columns, joined with " · ") labelling the rows; default: the text columns whose
      values differ between rows of one metric (judge, pair, criterion, condition ...), else the metric.
    - ``group``: a column whose values get one colour each, dodged within a row (e.g. ``"criterion"``).
    - ``reference``: a value drawn as a dashed line in every panel, or ``{metric: value}`` per panel.
    - ``caption_text``: default: what the bars are (the interval method from ``method``, the level).
    - ``ax``: draw a one-metric frame into your own Axes (its figure is returned and left open).

    Returns the Figure. Rows without an estimate (NaN) are not drawn and the caption counts them.
    """
    require_columns(results, (*ESTIMATE_COLUMNS, group), "plot_estimates")
    frame = require_rows(results, "plot_estimates", "rows").copy()
    drawable = frame["estimate"].notna()
    n_undrawn = int((~drawable).sum())
    frame = require_rows(frame[drawable], "plot_estimates", "rows with an estimate (every estimate is NaN)")
    frame["metric"] = frame["metric"].astype(str)
    metrics = list(dict.fromkeys(frame["metric"]))
    if ax is not None and len(metrics) > 1:
        raise PlotInputError(f"plot_estimates draws one panel per metric; with ax= give it one metric, not {metrics}")
    columns = [y] if isinstance(y, str) else list(y) if y is not None else _label_columns(frame, group)
    require_columns(frame, columns, "plot_estimates")
    if columns:
        frame["_label"] = frame[columns].astype(str).agg(" · ".join, axis=1)
    else:
        frame["_label"] = frame["metric"]
    labels = list(dict.fromkeys(frame["_label"]))
    hues = list(dict.fromkeys(frame[group].astype(str))) if group else None
    rows = max(frame.groupby("metric")["_label"].nunique().max(), 1)
    own = ax is None
    orders = {tuple(lab for lab in labels if lab in set(frame.loc[frame["metric"] == m, "_label"])) for m in metrics}
    shared = len(orders) == 1  # every metric has the same rows: panels side by side, the labels once
    with use_style():
        if own:
            height = 0.42 * rows * max(1.0, len(hues or []) / 2.5) + 1.7
            if shared:
                fig, axes = plt.subplots(1, len(metrics), figsize=(FIG_WIDTH, height), squeeze=False, sharey=True)
                panels = list(axes[0])
            else:  # other rows per metric: one panel under the other, each with its own labels at full width
                fig, axes = plt.subplots(len(metrics), 1, figsize=(FIG_WIDTH, height * len(metrics)), squeeze=False)
                panels = list(axes[:, 0])
        else:
            fig, panels = ax.figure, [ax]
        for panel, metric in zip(panels, metrics, strict=True):
            part = frame[frame["metric"] == metric]
            order = [lab for lab in labels if lab in set(part["_label"])]
            interval_rows(panel, part, "_label", group, order=order, hue_order=hues)
            value = reference.get(metric) if isinstance(reference, Mapping) else reference
            if value is not None:
                panel.axvline(float(value), color="black", linestyle="--", linewidth=0.9)
            panel.set_xlabel(xlabel or METRIC_LABELS.get(metric, metric))
        if group:
            panels[-1].legend(title=group, loc="center left", bbox_to_anchor=(1.0, 0.5))
        if title:
            (fig.suptitle(title) if own else panels[0].set_title(title))
        text = caption_text if caption_text is not None else interval_caption(results, n_undrawn)
        if own:
            return finish(fig, text)
        if caption_text:  # your figure, your layout: a caption only when asked for
            caption(fig, caption_text)
        return fig
