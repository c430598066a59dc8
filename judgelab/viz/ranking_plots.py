"""Figures of system rankings and judge reliability: leaderboard forest with rank intervals, win-rate heatmap,
ranking-by-judge bump chart, and estimated-vs-actual judge accuracy.

They draw the tidy frames of :func:`judgelab.stats.rank_systems`, :func:`~judgelab.stats.rank_by_score`,
:func:`~judgelab.stats.win_rate_matrix` and :func:`judgelab.ensembles.latent_truth`, and follow
:mod:`judgelab.viz.plots`' conventions: one panel, ``ax=`` to draw into your own Axes, the Axes returned,
``caption_text=`` for a caption, and one :class:`PlotInputError` naming what is missing or ambiguous. A
figure draws ONE ranking: a frame holding several (one per judge or criterion) is refused with the column
that tells them apart, never overplotted -- filter it, or draw the judges side by side with
:func:`plot_ranking_by_judge`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib import colors as mcolors
from matplotlib.axes import Axes

from judgelab.viz.intervals import PlotInputError, interval_rows, require_columns, require_rows
from judgelab.viz.style import (
    CI_COLOR,
    DIVERGING_CMAP,
    FIG_WIDTH,
    PALETTE,
    family_colors,
    finish_axes,
    panel_axes,
    use_style,
)

__all__ = ["plot_judge_reliability", "plot_leaderboard", "plot_ranking_by_judge", "plot_win_rate_heatmap"]

_RANK_COLUMNS = ("system", "metric", "estimate", "ci_low", "ci_high", "rank", "rank_low", "rank_high")
# the metric a ranking frame is drawn on when it holds several (rank_systems returns two with one ranking)
_PREFERRED = ("bt_coefficient", "mean_score", "win_probability")
_AXIS_LABELS = {
    "bt_coefficient": "Bradley–Terry coefficient (logit scale)",
    "win_probability": "expected score against an average system",
    "mean_score": "mean score",
    "elo_rating": "Elo rating",
}
# columns that describe how a row was computed, never which ranking it belongs to
_NOT_SPLITS = frozenset({"metric", "estimate", "ci_low", "ci_high", "p_value", "n", "method", "note", "term", "rank",
                         "rank_low", "rank_high", "ci_level", "n_resamples", "n_invalid_resamples", "n_unscored",
                         "system", "opponent"})


def _distinct_colors(names: Sequence[str]) -> dict[str, str]:
    """The project's palette while it has a colour per name; beyond it, evenly spaced hues (no colour twice)."""
    if len(set(names)) <= len(PALETTE):
        return family_colors(names)
    return {name: mcolors.to_hex(c) for name, c in zip(names, sns.color_palette("husl", len(names)), strict=True)}


def _one_metric(frame: pd.DataFrame, metric: str | None, plot: str) -> pd.DataFrame:
    """The rows of one metric: ``metric`` if named, else the only one, else the first of ``_PREFERRED`` present."""
    metrics = list(dict.fromkeys(frame["metric"].astype(str)))
    if metric is None:
        if len(metrics) == 1:
            metric = metrics[0]
        else:
            metric = next((m for m in _PREFERRED if m in metrics), None)
            if metric is None:
                raise PlotInputError(f"{plot}: the frame holds metrics {metrics}; pass metric= to choose one")
    elif metric not in metrics:
        raise PlotInputError(f"{plot}: metric {metric!r} is not in the frame (it has {metrics})")
    rows = frame[frame["metric"].astype(str) == metric]
    if "term" in rows.columns:  # covariate coefficients ("style control") are not systems
        rows = rows[rows["term"].isna() | (rows["term"].astype(str) == "")]
    return require_rows(rows, plot, f"{metric!r} rows for systems")


def _splits(frame: pd.DataFrame, keep: Sequence[str] = ()) -> list[str]:
    """The descriptive columns (judge, criterion ...) that take more than one value in ``frame``."""
    return [str(c) for c in frame.columns if c not in _NOT_SPLITS and c not in keep
            and frame[c].astype(str).nunique(dropna=False) > 1]


def _refuse_several(frame: pd.DataFrame, key: Sequence[str], plot: str, hint: str) -> None:
    """One ranking per figure: refuse a frame where a ``key`` appears twice, naming the column that splits it."""
    if frame.duplicated(list(key)).any():
        split = _splits(frame, keep=key)
        named = f" (they differ in {', '.join(map(repr, split))})" if split else ""
        raise PlotInputError(f"{plot} draws one ranking, and this frame holds several{named}: {hint}")


def plot_leaderboard(ranking: pd.DataFrame, *, metric: str | None = None, ax: Axes | None = None,
                     title: str = "Leaderboard", caption_text: str | None = None) -> Axes:
    """Systems from best to worst: the estimate with its CI, and the rank interval written beside each system.

    Input: ``stats.rank_systems`` or ``stats.rank_by_score`` output for ONE ranking; columns ``system``,
    ``metric``, ``estimate``, ``ci_low``, ``ci_high``, ``rank``, ``rank_low``, ``rank_high``. With several metrics
    (rank_systems gives ``bt_coefficient`` and ``win_probability``) the Bradley-Terry coefficient is drawn
    unless ``metric=`` names another. The label "#2 (1–4)" is the rank and the ranks the system took in the
    central share of resamples (the frame's ``ci_level``).
    """
    plot = "plot_leaderboard"
    require_columns(ranking, _RANK_COLUMNS, plot)
    rows = _one_metric(ranking, metric, plot)
    _refuse_several(rows, ["system"], plot, "filter it to one judge/criterion, or use plot_ranking_by_judge")
    rows = rows.sort_values(["rank", "estimate"], ascending=[True, False], kind="stable")
    order = rows["system"].astype(str).tolist()
    name = str(rows["metric"].iloc[0])
    with use_style():
        ax, own = panel_axes(ax, (FIG_WIDTH, 0.36 * len(order) + 1.4))
        interval_rows(ax, rows.assign(system=rows["system"].astype(str)), "system", None, order=order)
        if name == "win_probability":
            ax.axvline(0.5, color="black", linewidth=0.8, linestyle="--")
        labels = [f"#{int(r)} ({int(lo)}–{int(hi)})" if np.isfinite([r, lo, hi]).all() else "–"
                  for r, lo, hi in rows[["rank", "rank_low", "rank_high"]].to_numpy(float)]
        for y, text in enumerate(labels):
            ax.annotate(text, (1.01, y), xycoords=("axes fraction", "data"), va="center", fontsize=8, color=CI_COLOR)
        ax.set_xlabel(_AXIS_LABELS.get(name, name))
        ax.set_ylabel("")
        level = rows["ci_level"].dropna() if "ci_level" in rows.columns else pd.Series(dtype=float)
        share = f"{float(level.iloc[0]):.0%} " if len(level) else ""
        ax.set_title(f"{title}\n(bars: {share}CIs; right: rank and {share}rank interval)", fontsize=10)
        return finish_axes(ax, own, caption_text)


def plot_win_rate_heatmap(win_rates: pd.DataFrame, *, order: Sequence[str] | None = None, ax: Axes | None = None,
                          annotate: bool = True, title: str = "Win rate of the row system against the column system",
                          caption_text: str | None = None) -> Axes:
    """The pairwise win-rate matrix as a heatmap centred on 0.5; cells without battles stay blank.

    Input: ``stats.win_rate_matrix`` output for ONE set of battles; columns ``system``, ``opponent``,
    ``estimate`` (the row system's share of wins, ties as half). ``order``: the systems' order (e.g. the
    leaderboard's); default: by mean win rate, best first. ``annotate``: write each cell's estimate.
    """
    plot = "plot_win_rate_heatmap"
    require_columns(win_rates, ("system", "opponent", "estimate"), plot)
    rows = require_rows(win_rates, plot, "system pairs")
    if "metric" in rows.columns:
        rows = require_rows(rows[rows["metric"].astype(str) == "win_rate"], plot, "'win_rate' rows")
    _refuse_several(rows, ["system", "opponent"], plot, "filter it to one judge/criterion first")
    frame = rows.assign(system=rows["system"].astype(str), opponent=rows["opponent"].astype(str))
    names = list(dict.fromkeys([*frame["system"], *frame["opponent"]]))
    if order is None:
        order = frame.groupby("system")["estimate"].mean().reindex(names).sort_values(ascending=False,
                                                                                      kind="stable").index.tolist()
    else:
        order = [str(s) for s in order]
        missing = sorted(set(names) - set(order))
        if missing or len(set(order)) != len(order):
            raise PlotInputError(f"{plot}: order= must list each system of the frame once (missing: {missing})")
    matrix = frame.pivot(index="system", columns="opponent", values="estimate").reindex(index=order, columns=order)
    with use_style():
        side = 0.5 * len(order) + 2.0
        ax, own = panel_axes(ax, (min(FIG_WIDTH + 1, side + 1.5), side))
        sns.heatmap(matrix, annot=annotate, fmt=".2f", cmap=DIVERGING_CMAP, vmin=0, vmax=1, center=0.5, ax=ax,
                    square=True, linewidths=0.5, annot_kws={"fontsize": 7 if len(order) > 8 else 8},
                    cbar_kws={"label": "win rate (ties as half)"})
        ax.set_xlabel("opponent")
        ax.set_ylabel("system")
        ax.set_title(title)
        return finish_axes(ax, own, caption_text)


def plot_ranking_by_judge(rankings: pd.DataFrame, *, by: str = "judge", metric: str | None = None,
                          order: Sequence[str] | None = None, ax: Axes | None = None, intervals: bool = True,
                          title: str = "How the ranking moves with the judge",
                          caption_text: str | None = None) -> Axes:
    """A bump chart: one column per judge (or any ``by`` value), each system's rank joined across them, with its
    rank interval as a bar when ``intervals``.

    Input: ``rank_systems(..., by="judge")`` or ``rank_by_score(..., by="judge")`` output (or several rankings
    concatenated with a ``by`` column); columns ``by``, ``system``, ``metric``, ``rank``, ``rank_low``,
    ``rank_high``. ``order``: the ``by`` values left to right (default: the frame's order). Rank 1 is at the
    top; systems are labelled at both ends.
    """
    plot = "plot_ranking_by_judge"
    require_columns(rankings, (by, *_RANK_COLUMNS), plot)
    rows = _one_metric(rankings, metric, plot)
    _refuse_several(rows, [by, "system"], plot, f"filter it so that each {by} holds one ranking")
    rows = rows.assign(**{by: rows[by].astype(str), "system": rows["system"].astype(str)})
    columns = list(dict.fromkeys(rows[by])) if order is None else [str(v) for v in order]
    unknown = sorted(set(columns) - set(rows[by]))
    if unknown:
        raise PlotInputError(f"{plot}: order= names {unknown}, which the frame's {by!r} column does not hold")
    rows = rows[rows[by].isin(columns)]
    systems = rows[rows[by] == columns[0]].sort_values("rank", kind="stable")["system"].tolist()
    systems += sorted(set(rows["system"]) - set(systems))
    colors = _distinct_colors(systems)
    x_of = {v: i for i, v in enumerate(columns)}
    n_ranks = int(np.nanmax(rows[["rank", "rank_high"]].to_numpy(float)))
    with use_style():
        ax, own = panel_axes(ax, (max(FIG_WIDTH * 0.6, 1.3 * len(columns) + 2.5), 0.33 * n_ranks + 1.6))
        dodge = np.linspace(-0.12, 0.12, len(systems)) if len(systems) > 1 else np.zeros(1)
        for k, system in enumerate(systems):
            part = rows[rows["system"] == system].assign(x=lambda f: f[by].map(x_of)).sort_values("x")
            xs = part["x"].to_numpy(float)
            color = colors[system]
            ax.plot(xs, part["rank"].to_numpy(float), "-o", color=color, linewidth=1.4, markersize=4)
            if intervals:
                ax.vlines(xs + dodge[k], part["rank_low"].to_numpy(float), part["rank_high"].to_numpy(float),
                          color=color, linewidth=1, alpha=0.45)
            for x_end, ha, shift in ((xs.min(), "right", -0.18), (xs.max(), "left", 0.18)):
                end = part[part["x"] == x_end]
                ax.text(x_end + shift, float(end["rank"].iloc[0]), system, ha=ha, va="center", fontsize=7.5,
                        color=color)
        ax.set_xticks(range(len(columns)), columns)
        ax.tick_params(axis="x", rotation=20)
        ax.set_xlim(-0.8, len(columns) - 0.2)
        ax.set_ylim(n_ranks + 0.6, 0.4)
        ax.set_yticks(range(1, n_ranks + 1))
        ax.set_ylabel("rank (1 = best)")
        ax.set_xlabel(by)
        ax.grid(axis="x", visible=False)
        ax.set_title(title + ("\n(bars: rank intervals)" if intervals else ""), fontsize=10)
        return finish_axes(ax, own, caption_text)


def plot_judge_reliability(latent: pd.DataFrame, *, ax: Axes | None = None,
                           title: str = "Judge accuracy: estimated without labels vs measured against gold",
                           caption_text: str | None = None) -> Axes:
    """Each judge's accuracy as a latent-truth model estimates it (x) against its agreement with gold (y), with
    both CIs; one colour per model; the diagonal is perfect calibration of the estimate.

    Input: ``ensembles.latent_truth(..., gold=...)`` output (several methods' frames may be concatenated);
    columns ``judge``, ``metric`` (rows "accuracy" and "actual_accuracy"), ``method``, ``estimate``,
    ``ci_low``, ``ci_high``. A frame without "actual_accuracy" rows (no gold) is refused: there is nothing to
    put the estimate against.
    """
    plot = "plot_judge_reliability"
    require_columns(latent, ("judge", "metric", "method", "estimate", "ci_low", "ci_high"), plot)
    est = require_rows(latent[latent["metric"].astype(str) == "accuracy"], plot, "'accuracy' rows")
    act = require_rows(latent[latent["metric"].astype(str) == "actual_accuracy"], plot,
                       "'actual_accuracy' rows (call latent_truth with a gold rater)")
    _refuse_several(est, ["judge", "method"], plot, "filter it to one question per figure")
    actual = act.drop_duplicates(["judge", "estimate", "ci_low", "ci_high"])
    if actual.duplicated(["judge"]).any():
        judge = actual.loc[actual.duplicated(["judge"]), "judge"].iloc[0]
        raise PlotInputError(f"{plot}: judge {judge!r} has different actual accuracies in the frame (several data "
                             f"sets or questions): filter it to one")
    both = est.merge(actual[["judge", "estimate", "ci_low", "ci_high"]], on="judge", suffixes=("", "_actual"))
    both = require_rows(both, plot, "judges with both an estimated and an actual accuracy")
    methods = list(dict.fromkeys(both["method"].astype(str)))
    colors = family_colors(methods)
    with use_style():
        ax, own = panel_axes(ax, (FIG_WIDTH * 0.8, FIG_WIDTH * 0.7))
        for method in methods:
            part = both[both["method"].astype(str) == method]
            x, y = part["estimate"].to_numpy(float), part["estimate_actual"].to_numpy(float)
            xerr = np.nan_to_num(np.clip([x - part["ci_low"].to_numpy(float), part["ci_high"].to_numpy(float) - x],
                                         0, None))
            yerr = np.nan_to_num(np.clip([y - part["ci_low_actual"].to_numpy(float),
                                          part["ci_high_actual"].to_numpy(float) - y], 0, None))
            ax.errorbar(x, y, xerr=xerr, yerr=yerr, fmt="o", color=colors[method], ecolor=colors[method],
                        markersize=5, elinewidth=1, label=method, alpha=0.9)
        for judge, part in both.groupby(both["judge"].astype(str), sort=False):  # one label per judge
            ax.annotate(judge, (float(part["estimate"].max()), float(part["estimate_actual"].iloc[0])),
                        textcoords="offset points", xytext=(8, -3), fontsize=7.5, color="#333333")
        values = np.concatenate([both[c].to_numpy(float) for c in ("ci_low", "ci_high", "ci_low_actual",
                                                                     "ci_high_actual", "estimate", "estimate_actual")])
        values = values[np.isfinite(values)]
        low, high = max(0.0, values.min() - 0.05), min(1.0, values.max() + 0.05)
        ax.plot([low, high], [low, high], color="black", linewidth=0.8, linestyle="--")
        ax.set_xlim(low, high)
        ax.set_ylim(low, high)
        ax.set_xlabel("estimated accuracy (latent truth, no labels)")
        ax.set_ylabel("actual accuracy (agreement with gold)")
        ax.legend(title="model", loc="lower right")
        ax.set_title(title, fontsize=10)
        return finish_axes(ax, own, caption_text)
