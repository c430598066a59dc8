"""The HTML report of statistics: ``judgelab.report(results)`` where ``results`` is a tidy result frame (``metric,
estimate, ci_low, ci_high`` ...), or a dict of them by name.

Each frame becomes a section: a table read like a paper's (:func:`judgelab.viz.style.frame_html`: three significant
digits, p-values as ``<0.001``, intervals as ``[lo, hi]``, long methods and notes in a tooltip) and its forest plot
(:func:`judgelab.viz.intervals.plot_estimates`) when it has intervals to draw.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import pandas as pd

from judgelab.errors import ConfigError

__all__ = ["RESULT_COLUMNS", "is_result_frame", "result_frames", "stats_document"]

RESULT_COLUMNS = ("metric", "estimate")  # what makes a frame a statistics result (intervals are optional)
_JUDGMENT_MARKERS = ("item_id", "status")  # what makes it a judgments table instead


def is_result_frame(frame: Any) -> bool:
    """Whether ``frame`` is a tidy statistics result (has ``metric`` and ``estimate``, not a judgments table)."""
    return (isinstance(frame, pd.DataFrame) and all(c in frame.columns for c in RESULT_COLUMNS)
            and not all(c in frame.columns for c in _JUDGMENT_MARKERS))


def result_frames(result: Any) -> dict[str, pd.DataFrame] | None:
    """``{name: frame}`` when ``result`` is a result frame or a mapping of them; None when it is neither."""
    if is_result_frame(result):
        return {"results": result}
    if isinstance(result, Mapping) and result and all(is_result_frame(v) for v in result.values()):
        return {str(k): v for k, v in result.items()}
    return None


def what_report_takes(frame: pd.DataFrame) -> ConfigError:
    """The one-sentence refusal for a DataFrame that is neither a judgments table nor a result frame."""
    shown = ", ".join(map(str, frame.columns[:8])) + (" ..." if len(frame.columns) > 8 else "")
    return ConfigError("report() takes a judgments table (columns item_id, judge, criterion, status ...) or a "
                       "statistics result frame (columns metric, estimate, and ci_low, ci_high for intervals), or a "
                       f"dict of result frames; this DataFrame has neither (its columns: {shown})")


def _figure(frame: pd.DataFrame) -> str:
    """The frame's forest plot, one figure per metric, drawn off pyplot (a file's figures never show in a notebook)."""
    from matplotlib.figure import Figure

    from judgelab.viz.intervals import PlotInputError, interval_caption, plot_estimates
    from judgelab.viz.report_sections import png_img
    from judgelab.viz.style import FIG_WIDTH

    if not {"ci_low", "ci_high"} <= set(frame.columns) or frame["estimate"].isna().all():
        return ""
    out = []
    for metric, part in frame.groupby(frame["metric"].astype(str), sort=False):
        if part["estimate"].isna().all():
            continue
        fig = Figure(figsize=(FIG_WIDTH, 0.42 * len(part) + 1.9))
        try:
            plot_estimates(part, ax=fig.add_subplot(), caption_text=interval_caption(part), title=metric)
            fig.tight_layout()
        except PlotInputError as exc:  # nothing drawable: say so in place of a figure
            out.append(f"<p><i>no figure: {html.escape(str(exc))}</i></p>")
            continue
        out.append(png_img(fig))
    return "".join(out)


def stats_document(frames: Mapping[str, pd.DataFrame], title: str) -> list[str]:
    """The report's sections for result frames: per frame, its name, its table and its forest plot."""
    from judgelab.viz.style import frame_html

    sections = [f"<h1>{html.escape(title)}</h1>",
                f"<p class='summary' id='summary'>{len(frames)} result table(s), "
                f"{sum(len(f) for f in frames.values()):,} rows. Numbers: 3 significant digits; p-values below "
                "0.001 as &lt;0.001; intervals as [low, high]; hover a shortened method or note for all of it.</p>"]
    for name, frame in frames.items():
        sections.append(f"<h2>{html.escape(name)}</h2>"
                        + f"<div style='overflow-x:auto'>{frame_html(frame, text_width=90)}</div>" + _figure(frame))
    return sections
