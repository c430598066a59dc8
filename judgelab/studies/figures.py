"""Figures of Donati, Savino & Torroni's study ("Do Large Language Models understand how to be judges?") and its SummEval redo.

Study-specific: they read the ``family`` and ``size_b`` columns that :mod:`judgelab.studies.summeval_study`
attaches to each judge (and the paper's Table 1), so they live with the study, not in :mod:`judgelab.viz`.
They follow :mod:`judgelab.viz.plots`' conventions: named ``plot_<what>``; a one-panel plot takes
``ax=`` and returns the Axes, a plot of several panels returns the Figure; each docstring states the
columns it reads, and a frame without them raises one ``PlotInputError`` naming them.
"""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from judgelab.viz.plots import require_columns, require_rows
from judgelab.viz.style import FIG_WIDTH, family_colors, finish, finish_axes, panel_axes, use_style

__all__ = ["plot_mae_vs_rho", "plot_metric_vs_size", "plot_paper_side_by_side"]


def _draw_mae_rho(ax: Axes, wide: pd.DataFrame, *, label: str, title: str, colors: dict[str, str]) -> None:
    """MAE (y) against Spearman rho (x), coloured by family; hollow markers where rho's p >= 0.05."""
    for _, row in wide.iterrows():
        color = colors[row["family"]]
        significant = bool(row.get("rho_p", 0.0) < 0.05)
        xerr = yerr = None
        if "rho_ci_low" in wide.columns and np.isfinite(row["rho_ci_low"]):
            xerr = [[row["rho"] - row["rho_ci_low"]], [row["rho_ci_high"] - row["rho"]]]
        if "mae_ci_low" in wide.columns and np.isfinite(row["mae_ci_low"]):
            yerr = [[row["mae"] - row["mae_ci_low"]], [row["mae_ci_high"] - row["mae"]]]
        ax.errorbar(row["rho"], row["mae"], xerr=xerr, yerr=yerr, fmt="o", color=color, ecolor=color,
                    markerfacecolor=color if significant else "white", markersize=6, elinewidth=1)
        ax.annotate(str(row[label]), (row["rho"], row["mae"]), textcoords="offset points", xytext=(4, 3),
                    fontsize=6.5, color="#333333")
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel("Spearman's ρ vs human")
    ax.set_ylabel("MAE vs human")
    ax.set_title(title)


def _family_legend(ax: Axes, colors: dict[str, str]) -> None:
    handles = [plt.Line2D([], [], marker="o", linestyle="", color=c, label=f) for f, c in colors.items()]
    handles.append(plt.Line2D([], [], marker="o", linestyle="", color="grey", markerfacecolor="white",
                              label="ρ not significant (p ≥ 0.05)"))
    ax.legend(handles=handles, loc="center left", bbox_to_anchor=(1.0, 0.5), title="family")


def plot_mae_vs_rho(wide: pd.DataFrame, *, ax: Axes | None = None, label: str = "judge",
                    title: str = "MAE vs Spearman's ρ", caption_text: str | None = None) -> Axes:
    """Figure-1 style scatter: one point per judge, MAE against rho (CIs as bars when the frame has them).

    Input: one row per judge with columns ``family``, ``mae``, ``rho`` and the ``label`` column (default
    "judge"); optional ``rho_p`` (hollow marker when >= 0.05) and ``rho_ci_low``/``rho_ci_high``,
    ``mae_ci_low``/``mae_ci_high`` (error bars).
    """
    require_columns(wide, ("family", "mae", "rho", label), "plot_mae_vs_rho")
    require_rows(wide, "plot_mae_vs_rho", "judges")
    colors = family_colors(list(wide["family"]))
    with use_style():
        ax, own = panel_axes(ax, (FIG_WIDTH, 4.2))
        _draw_mae_rho(ax, wide, label=label, title=title, colors=colors)
        _family_legend(ax, colors)
        return finish_axes(ax, own, caption_text)


def plot_paper_side_by_side(paper: pd.DataFrame, ours: pd.DataFrame, *, caption_text: str | None = None) -> Figure:
    """The paper's Table 1 and the SummEval redo drawn the same way, side by side (shared MAE axis).

    Input: ``paper`` with columns ``family``, ``model``, ``mae``, ``spearman_rho``, ``p_value``, ``n``
    (``studies.paper``'s Table 1); ``ours`` with ``family``, ``judge``, ``mae``, ``rho``, ``n`` (and the
    optional columns of :func:`plot_mae_vs_rho`).
    """
    require_columns(paper, ("family", "model", "mae", "spearman_rho", "p_value", "n"), "plot_paper_side_by_side (paper)")
    require_columns(ours, ("family", "judge", "mae", "rho", "n"), "plot_paper_side_by_side (ours)")
    require_rows(paper, "plot_paper_side_by_side", "paper rows")
    require_rows(ours, "plot_paper_side_by_side", "rows of ours")
    colors = family_colors([*paper["family"], *ours["family"]])
    paper = paper.rename(columns={"spearman_rho": "rho", "p_value": "rho_p", "model": "judge"})
    with use_style():
        fig, axes = plt.subplots(1, 2, figsize=(FIG_WIDTH * 1.5, 4.6), sharey=True)
        _draw_mae_rho(axes[0], paper, label="judge", colors=colors,
                      title=f"Paper Table 1 (n = {int(paper['n'].iloc[0])}; no CIs)")
        _draw_mae_rho(axes[1], ours, label="judge", colors=colors,
                      title=f"SummEval redo (n = {int(ours['n'].max())}; 95% CIs)")
        _family_legend(axes[1], colors)
        return finish(fig, caption_text)


def plot_metric_vs_size(wide: pd.DataFrame, *, label: str = "judge", title: str = "MAE and ρ vs judge size",
                        caption_text: str | None = None) -> Figure:
    """Figures-2/3 style: MAE and rho against parameters (log scale), one line per family.

    Judges with an unknown size (NaN ``size_b``) cannot be placed; they are named in a note on the figure.

    Input: one row per judge with columns ``family``, ``size_b`` (billions of parameters), ``mae``,
    ``rho`` and the ``label`` column (default "judge"); optional ``mae_ci_low``/``mae_ci_high`` and
    ``rho_ci_low``/``rho_ci_high``.
    """
    require_columns(wide, ("family", "size_b", "mae", "rho", label), "plot_metric_vs_size")
    require_rows(wide, "plot_metric_vs_size", "judges")
    known = require_rows(wide[np.isfinite(wide["size_b"].astype(float))].sort_values("size_b"), "plot_metric_vs_size",
                         "judge with a known size_b")
    unknown = wide.loc[~wide.index.isin(known.index), label].astype(str).tolist()
    colors = family_colors(list(wide["family"]))
    with use_style():
        fig, axes = plt.subplots(1, 2, figsize=(FIG_WIDTH * 1.3, 3.8))
        for ax, (col, ylabel) in zip(axes, (("mae", "MAE vs human"), ("rho", "Spearman's ρ vs human")),
                                     strict=True):
            for fam, part in known.groupby("family", sort=False):
                err = None
                if f"{col}_ci_low" in part.columns and part[f"{col}_ci_low"].notna().all():
                    err = [part[col] - part[f"{col}_ci_low"], part[f"{col}_ci_high"] - part[col]]
                ax.errorbar(part["size_b"], part[col], yerr=err, marker="o", color=colors[fam], label=fam,
                            elinewidth=1)
            ax.set_xscale("log")
            # round-number ticks spanning the sizes, as plain numbers (log-scale default labels collide)
            lo, hi = float(known["size_b"].min()), float(known["size_b"].max())
            ticks = [t for t in (0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500) if lo / 1.5 <= t <= hi * 1.5] or [lo, hi]
            ax.xaxis.set_major_locator(FixedLocator(ticks))
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.xaxis.set_minor_locator(NullLocator())
            ax.tick_params(axis="x", labelsize=7)
            ax.set_xlabel("parameters (billions, log scale)")
            ax.set_ylabel(ylabel)
            if col == "rho":
                ax.axhline(0, color="black", linewidth=0.8)
        axes[1].legend(title="family", loc="center left", bbox_to_anchor=(1.0, 0.5))
        note = "\n".join(textwrap.wrap("not shown (size unpublished): " + ", ".join(unknown), 110)) if unknown else ""
        fig.suptitle(f"{title}\n{note}" if note else title, fontsize=10 if note else None)
        return finish(fig, caption_text)
