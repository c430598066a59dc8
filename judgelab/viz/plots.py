"""Seaborn figures for judge studies: one ``plot_<what>`` function per figure.

Every function takes the tidy frames that :mod:`judgelab.stats` and :mod:`judgelab.studies`
return (estimate, ci_low, ci_high, p_value, n ...), draws inside :func:`judgelab.viz.style.use_style`,
and never computes a statistic itself: what a figure shows is what the table says.
``caption_text=`` puts a caption (data source, interval, resamples) under the figure.

What they return:

- a plot that draws ONE panel takes ``ax=`` (draw into an Axes of your own figure; default: a new
  figure) and returns that **Axes** (``ax.figure`` is the figure), as seaborn's axes-level plots do;
- a plot of SEVERAL panels (a grid, one panel per metric) makes its own figure and returns the
  **Figure**.

In a notebook both show once: a returned Figure is closed to pyplot and shown as the cell's value; an Axes
plot's figure stays with pyplot, which shows it when the cell ends -- end such a cell with ``;`` so the
``<Axes ...>`` value is not printed under it. :func:`plot_estimates` draws any result frame (a Figure).

Each docstring states the plot's **input contract**: the columns it reads. A frame without them
raises ONE :class:`PlotInputError` naming every missing column (:func:`require_columns`); so does a
frame with none of the rows the plot draws. No plot assumes one data set's columns or title:
grouping columns and titles are parameters.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from judgelab.viz.intervals import (
    ESTIMATE_COLUMNS,
    METRIC_LABELS,
    PlotInputError,
    interval_rows,
    plot_estimates,
    require_columns,
    require_rows,
)
from judgelab.viz.style import (
    CI_COLOR,
    DIVERGING_CMAP,
    FIG_WIDTH,
    PALETTE,
    ROLE_COLORS,
    caption,
    family_colors,
    finish,
    finish_axes,
    panel_axes,
    use_style,
)

__all__ = ["ESTIMATE_COLUMNS", "PlotInputError", "plot_agreement_forest", "plot_agreement_heatmap",
           "ERROR_OUTCOMES", "plot_error_breakdown", "plot_length_effect", "plot_meta_forest", "plot_pairwise_accuracy_grid",
           "plot_positive_bias_forest", "plot_rubric_comparison", "plot_score_distributions", "plot_score_shares",
           "require_columns",
           "require_rows", "plot_cascade_splits", "plot_corrected_coverage", "plot_corrected_intervals",
           "plot_estimates", "plot_label_budget", "plot_confusion_matrix"]



def plot_meta_forest(meta: pd.DataFrame, *, title: str = "Judges vs human experts",
                     caption_text: str | None = None) -> Figure:
    """Table-1 style: each judge's MAE and Spearman rho with CIs (hue = criterion when there are several).

    Input: a result frame (``stats.meta_evaluation``) with columns ``judge``, ``metric`` (rows "mae" and
    "spearman_rho" are drawn, one panel each; a frame with only one of them gets one panel), ``estimate``, ``ci_low``, ``ci_high``; ``criterion`` is optional.
    """
    require_columns(meta, ("judge", *ESTIMATE_COLUMNS), "plot_meta_forest")
    require_rows(meta[meta["metric"].isin(["mae", "spearman_rho"])], "plot_meta_forest", "'mae' or 'spearman_rho' rows")
    metrics = [m for m in ("mae", "spearman_rho") if m in set(meta["metric"])]  # no empty panel for a missing one
    criteria = list(dict.fromkeys(meta["criterion"])) if "criterion" in meta.columns else ["all"]
    hue = "criterion" if len(criteria) > 1 else None
    judges = list(dict.fromkeys(meta["judge"]))
    with use_style():
        fig, axes = plt.subplots(1, len(metrics), figsize=(FIG_WIDTH, 0.55 * len(judges) * max(1, len(criteria) / 2.5)
                                                             + 1.6), sharey=True, squeeze=False)
        for ax, metric in zip(axes[0], metrics, strict=True):
            interval_rows(ax, meta[meta["metric"] == metric], "judge", hue, order=judges)
            ax.set_xlabel(METRIC_LABELS[metric])
            if metric == "spearman_rho":
                ax.axvline(0, color="black", linewidth=0.8)
        if hue:
            axes[0][-1].legend(title="criterion", loc="center left", bbox_to_anchor=(1.0, 0.5))
        fig.suptitle(title)
        return finish(fig, caption_text)


def plot_score_distributions(dist: pd.DataFrame, *, title: str = "Human vs judge score distributions",
                             caption_text: str | None = None) -> Figure:
    """Figures-4/5/6 style: share of each score, judge beside human, one panel per judge x criterion.

    Input: ``stats.score_distributions`` output, columns ``judge``, ``criterion``, ``rater`` (raters
    named "human..." get the human colour), ``score``, ``share``.
    """
    require_columns(dist, ("judge", "criterion", "rater", "score", "share"), "plot_score_distributions")
    require_rows(dist, "plot_score_distributions", "rows")
    judges = list(dict.fromkeys(dist["judge"]))
    criteria = list(dict.fromkeys(dist["criterion"]))
    raters = list(dict.fromkeys(dist["rater"]))
    palette = _rater_palette(raters)
    with use_style():
        grid = sns.catplot(data=dist, x="score", y="share", hue="rater", row="judge", col="criterion", kind="bar",
                           row_order=judges, col_order=criteria, hue_order=raters, palette=palette,
                           height=1.9, aspect=1.25, sharey=True, legend_out=True)
        grid.set_titles("{row_name} · {col_name}", size=8)
        grid.set_axis_labels("score", "share of ratings")
        grid.figure.suptitle(title, y=1.02)
        fig = grid.figure
        if caption_text:
            caption(fig, caption_text)
        plt.close(fig)
        return fig


def plot_positive_bias_forest(bias: pd.DataFrame, *, ax: Axes | None = None,
                              title: str = "Judge − human, per criterion", caption_text: str | None = None) -> Axes:
    """Mean judge − human difference per criterion with CIs, one colour per judge.

    Input: ``stats.positive_bias`` output, columns ``judge``, ``criterion``, ``metric`` (rows
    "mean_difference" are drawn), ``estimate``, ``ci_low``, ``ci_high``.
    """
    require_columns(bias, ("judge", "criterion", *ESTIMATE_COLUMNS), "plot_positive_bias_forest")
    frame = require_rows(bias[bias["metric"] == "mean_difference"], "plot_positive_bias_forest",
                         "'mean_difference' rows")
    criteria = list(dict.fromkeys(frame["criterion"]))
    judges = list(dict.fromkeys(frame["judge"]))
    with use_style():
        ax, own = panel_axes(ax, (FIG_WIDTH, 0.5 * len(criteria) * max(1, len(judges) / 2) + 1.5))
        interval_rows(ax, frame, "criterion", "judge", order=criteria, hue_order=judges)
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_xlabel("mean judge − human score (positive = judge rates higher)")
        ax.legend(title="judge", loc="center left", bbox_to_anchor=(1.0, 0.5))
        ax.set_title(title)
        return finish_axes(ax, own, caption_text)


def plot_agreement_heatmap(agreement: pd.DataFrame, *, ax: Axes | None = None,
                           title: str = "Model-to-model agreement (Spearman's ρ)", value_label: str = "Spearman's ρ",
                           caption_text: str | None = None) -> Axes:
    """Square heatmap of pairwise agreement, each cell annotated with the estimate and its band.

    Input: ``stats.agreement_matrix`` output, columns ``judge_a``, ``judge_b``, ``estimate`` (in [-1, 1])
    and ``label`` (the agreement band). ``value_label`` names the estimate on the colour bar.
    """
    require_columns(agreement, ("judge_a", "judge_b", "estimate", "label"), "plot_agreement_heatmap")
    require_rows(agreement, "plot_agreement_heatmap", "judge pairs")
    names = list(dict.fromkeys([*agreement["judge_a"], *agreement["judge_b"]]))
    rho = pd.DataFrame(np.eye(len(names)), index=names, columns=names)
    text = pd.DataFrame("", index=names, columns=names, dtype=object)
    for _, row in agreement.iterrows():
        for a, b in ((row["judge_a"], row["judge_b"]), (row["judge_b"], row["judge_a"])):
            rho.loc[a, b] = row["estimate"]
            text.loc[a, b] = f"{row['estimate']:.2f}\n{row['label']}"
    for name in names:
        text.loc[name, name] = "—"
    with use_style():
        ax, own = panel_axes(ax, (FIG_WIDTH * 0.85, 0.9 * len(names) + 1.4))
        sns.heatmap(rho, annot=text.to_numpy(), fmt="", cmap=DIVERGING_CMAP, vmin=-1, vmax=1, center=0, ax=ax,
                    square=True, cbar_kws={"label": value_label}, annot_kws={"fontsize": 8}, linewidths=0.5)
        ax.set_xlabel("")
        ax.set_ylabel("")
        ax.set_title(title)
        ax.tick_params(axis="x", rotation=30)
        return finish_axes(ax, own, caption_text)


def plot_pairwise_accuracy_grid(pa: pd.DataFrame, *,
                                metrics: Sequence[str] = ("accuracy_mean", "position_consistency"),
                                y: str | None = None, row: str | None = None, hue: str | None = None,
                                title: str = "Pairwise accuracy and position consistency",
                                caption_text: str | None = None) -> Figure:
    """A grid of pairwise accuracies with CIs: one column per metric, one point per ``y`` value.

    Input: ``stats.pairwise_accuracy`` output, columns ``metric``, ``estimate``, ``ci_low``, ``ci_high``
    and the grouping columns named by ``y`` (default "judge"), ``row`` (one panel row per value, e.g.
    "judge" when ``y="split"``) and ``hue`` (one colour per value, e.g. "strategy"). The three must tell
    the rows of a metric apart; LLMBar's figure is ``row="judge", y="split", hue="strategy"``.
    (Until judgelab 0.3, a frame with ``split`` and ``strategy`` columns and none of y/row/hue given
    is drawn in that layout with a FutureWarning, as 0.1 did.)
    """
    if y is None and row is None and hue is None and {"split", "strategy"} <= set(pa.columns):
        warnings.warn("plot_pairwise_accuracy_grid: pass row='judge', y='split', hue='strategy' for LLMBar's layout; "
                      "the implicit layout goes in judgelab 0.3", FutureWarning, stacklevel=2)
        y, row, hue = "split", "judge", "strategy"
    y = y or "judge"
    require_columns(pa, (*ESTIMATE_COLUMNS, y, row, hue), "plot_pairwise_accuracy_grid")
    drawn = require_rows(pa[pa["metric"].isin(list(metrics))], "plot_pairwise_accuracy_grid",
                         f"rows with metric in {list(metrics)}")
    keys = ["metric", *(c for c in (row, y, hue) if c is not None)]
    dup = drawn.duplicated(keys)
    if dup.any():
        first = drawn.loc[dup, keys].iloc[0].to_dict()
        raise PlotInputError(f"plot_pairwise_accuracy_grid: several rows share {keys} (first: {first}); name the "
                             "columns that tell them apart with row= and hue=")
    rows = list(dict.fromkeys(drawn[row])) if row is not None else [None]
    ys = list(dict.fromkeys(drawn[y].astype(str)))
    hues = list(dict.fromkeys(drawn[hue].astype(str))) if hue is not None else []
    colors = family_colors(hues) if hue is not None else None
    with use_style():
        fig, axes = plt.subplots(len(rows), len(metrics), figsize=(FIG_WIDTH * 1.3, 0.5 * len(ys) *
                                 len(rows) * max(1.0, len(hues) / 3) + 1.5), sharex="col", squeeze=False)
        for r, value in enumerate(rows):
            for c, metric in enumerate(metrics):
                ax = axes[r][c]
                part = drawn[drawn["metric"] == metric]
                if row is not None:
                    part = part[part[row] == value]
                interval_rows(ax, part, y, hue, order=ys, hue_order=hues or None, colors=colors)
                ax.axvline(0.5, color="#999999", linewidth=0.8, linestyle="--")
                label = METRIC_LABELS.get(metric, metric)
                ax.set_title(f"{value} · {label}" if row is not None else label, fontsize=9)
                if r == len(rows) - 1:
                    ax.set_xlabel(label)
        if hue is not None:
            axes[0][-1].legend(title=hue, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        fig.suptitle(title)
        return finish(fig, caption_text)


def plot_length_effect(frame: pd.DataFrame, *, ax: Axes | None = None, by: Sequence[str] | None = None,
                       title: str = "Does the verdict follow length?", caption_text: str | None = None) -> Axes:
    """Length coefficient (log-odds of choosing output 1 per SD of its extra length) with CIs, one row per group.

    Input: a result frame with columns ``metric`` (rows "length_coefficient" are drawn), ``estimate``,
    ``ci_low``, ``ci_high`` and the columns in ``by`` (the row label joins them; the colour follows the
    first); default ("judge",). Two rows with one label are an error. LLMBar's figure: ``by=("judge",
    "strategy")`` (until judgelab 0.3 also chosen, with a FutureWarning, when ``by`` is not given and the
    frame has a ``strategy`` column).
    """
    if by is None and "strategy" in frame.columns:
        warnings.warn("plot_length_effect: pass by=('judge', 'strategy') for LLMBar's rows; the implicit choice "
                      "goes in judgelab 0.3", FutureWarning, stacklevel=2)
        by = ("judge", "strategy")
    by = list(by or ("judge",))
    if not by:
        raise PlotInputError("plot_length_effect needs at least one column in by= to label its rows")
    require_columns(frame, (*ESTIMATE_COLUMNS, *by), "plot_length_effect")
    rows = require_rows(frame[frame["metric"] == "length_coefficient"], "plot_length_effect",
                        "'length_coefficient' rows").copy()
    rows["who"] = rows[by].astype(str).agg(" · ".join, axis=1)
    shared = rows.loc[rows["who"].duplicated(), "who"]
    if len(shared):
        raise PlotInputError(f"plot_length_effect: several rows share the label {shared.iloc[0]!r}; add the columns "
                             "that tell them apart to by=")
    order = list(dict.fromkeys(rows["who"]))
    colors = family_colors(list(dict.fromkeys(rows[by[0]].astype(str))))
    with use_style():
        ax, own = panel_axes(ax, (FIG_WIDTH, 0.35 * len(order) + 1.5))
        interval_rows(ax, rows, "who", by[0], order=order, colors=colors)
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_xlabel(METRIC_LABELS["length_coefficient"] + "; > 0 = prefers the longer output")
        ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5))
        ax.set_title(title)
        return finish_axes(ax, own, caption_text)


def plot_agreement_forest(frame: pd.DataFrame, *, pair: str = "pair", title: str = "Agreement with the reference",
                          caption_text: str | None = None) -> Figure:
    """Percent agreement and Cohen's kappa per rater pair with CIs (one panel per metric).

    Input: result rows of ``stats.percent_agreement`` / ``stats.cohen_kappa`` stacked, with columns
    ``metric`` (rows "percent_agreement" and "cohen_kappa" are drawn), ``estimate``, ``ci_low``,
    ``ci_high`` and the column named by ``pair`` labelling each comparison (e.g. "gpt-4 vs human").
    """
    require_columns(frame, (*ESTIMATE_COLUMNS, pair), "plot_agreement_forest")
    metrics = [m for m in ("percent_agreement", "cohen_kappa") if m in set(frame["metric"])]
    if not metrics:
        raise PlotInputError("plot_agreement_forest has nothing to draw: the frame has no 'percent_agreement' or "
                             "'cohen_kappa' rows")
    pairs = list(dict.fromkeys(frame[pair].astype(str)))
    with use_style():
        fig, axes = plt.subplots(1, len(metrics), figsize=(FIG_WIDTH, 0.45 * len(pairs) + 1.6), sharey=True,
                                 squeeze=False)
        for ax, metric in zip(axes[0], metrics, strict=True):
            interval_rows(ax, frame[frame["metric"] == metric], pair, None, order=pairs)
            ax.set_xlabel(METRIC_LABELS[metric])
        fig.suptitle(title)
        return finish(fig, caption_text)


ERROR_OUTCOMES: tuple[str, ...] = ("agree", "false accept (judge yes, human no)", "false reject (judge no, human yes)",
                                   "unscored")


def plot_error_breakdown(counts: pd.DataFrame, *, ax: Axes | None = None, title: str = "Where the judges err",
                         unit: str = "items", caption_text: str | None = None) -> Axes:
    """Stacked shares per judge: agrees, says yes where humans say no, says no where humans say yes, unscored.

    Input: columns ``judge``, ``outcome`` and ``share`` (a judge's shares sum to 1). The four outcomes of
    :data:`ERROR_OUTCOMES` keep their colours and order; any other outcome is drawn after them.
    ``unit`` names what the shares count on the x axis ("share of <unit>").
    """
    require_columns(counts, ("judge", "outcome", "share"), "plot_error_breakdown")
    require_rows(counts, "plot_error_breakdown", "rows")
    present = list(dict.fromkeys(counts["outcome"].astype(str)))
    order = [o for o in ERROR_OUTCOMES if o in present] + [o for o in present if o not in ERROR_OUTCOMES]
    wide = counts.pivot_table(index="judge", columns="outcome", values="share", sort=False).reindex(
        columns=order).fillna(0.0)
    colors = {"agree": "#BBBBBB", ERROR_OUTCOMES[1]: "#D55E00", ERROR_OUTCOMES[2]: "#0072B2", "unscored": "#000000"}
    extra = [c for c in PALETTE if c not in colors.values()]
    colors |= {o: extra[k % len(extra)] for k, o in enumerate(o for o in order if o not in colors)}
    with use_style():
        ax, own = panel_axes(ax, (FIG_WIDTH, 0.5 * len(wide) + 1.6))
        left = np.zeros(len(wide))
        for col in wide.columns:
            ax.barh(wide.index, wide[col], left=left, color=colors[col], label=col)
            left += wide[col].to_numpy()
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        ax.set_xlabel(f"share of {unit}")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=2)
        ax.set_title(title)
        return finish_axes(ax, own, caption_text)


def plot_score_shares(dist: pd.DataFrame, *, ax: Axes | None = None, title: str = "Score shares",
                      caption_text: str | None = None) -> Axes:
    """One judge, one criterion: share of each score for the judge beside the human raters (one panel).

    Input: columns ``score``, ``share`` and ``rater`` (raters named "human..." get the human colour).
    """
    require_columns(dist, ("score", "share", "rater"), "plot_score_shares")
    require_rows(dist, "plot_score_shares", "rows")
    with use_style():
        ax, own = panel_axes(ax, (FIG_WIDTH * 0.75, 3.2))
        sns.barplot(data=dist, x="score", y="share", hue="rater", palette=_rater_palette(dist["rater"]), ax=ax)
        ax.set_ylabel("share of ratings")
        ax.legend(title="", loc="upper left", bbox_to_anchor=(1.0, 1.0))  # beside the bars, never over the top score
        ax.set_title(title)
        return finish_axes(ax, own, caption_text)


def _rater_palette(raters: Sequence[str]) -> dict[str, str]:
    """Human raters in the human colour, everyone else in the judge colour."""
    return {r: ROLE_COLORS["human"] if r.startswith("human") else ROLE_COLORS["judge"] for r in raters}


def plot_rubric_comparison(result: pd.DataFrame, *, ax: Axes | None = None, group: str | None = None,
                           title: str = "Rubric variants vs the gold labels, on held-out items",
                           caption_text: str | None = None) -> Axes:
    """Each variant's held-out metric with its CI; a star marks the variant selected on the other split.

    Input: a :func:`judgelab.stats.compare_rubrics` frame, columns ``part``, ``variant``, ``base``,
    ``selected``, ``metric``, ``estimate``, ``ci_low``, ``ci_high`` (rows with ``part == "variant"`` are
    drawn). ``group``: a column (e.g. ``judge`` or ``criterion``) whose values are drawn side by side in
    colours; with one group, each non-base variant's label carries its corrected p-value vs the base
    (``p_adjusted`` of the ``part == "difference"`` rows).
    """
    require_columns(result, ("part", "variant", "base", "selected", *ESTIMATE_COLUMNS, group),
                    "plot_rubric_comparison")
    rows = require_rows(result[result["part"] == "variant"], "plot_rubric_comparison", "part == 'variant' rows")
    if group is None and rows["variant"].duplicated().any():
        raise PlotInputError("plot_rubric_comparison: the frame has several rows per variant (judges or criteria); "
                             "pass group=<the column that tells them apart>")
    metric = str(rows["metric"].iloc[0])
    variants = list(dict.fromkeys(rows["variant"].astype(str)))
    groups = list(dict.fromkeys(rows[group].astype(str))) if group else [""]
    labels = {v: v for v in variants}
    if len(groups) == 1:
        diffs = result[result["part"] == "difference"]
        p_adj = dict(zip(diffs["variant"].astype(str), diffs.get("p_adjusted", diffs["p_value"]), strict=True))
        for v in variants:
            labels[v] = f"{v} (base)" if v in set(rows["base"].astype(str)) else \
                f"{v}  p_adj={p_adj[v]:.2g}" if v in p_adj and np.isfinite(p_adj[v]) else v
    with use_style():
        ax, own = panel_axes(ax, (FIG_WIDTH, 0.45 * len(variants) * max(1, len(groups) / 2) + 1.6))
        hue = group if len(groups) > 1 else None
        interval_rows(ax, rows, "variant", hue, order=variants, hue_order=groups if hue else None)
        step = 0.7 / len(groups)
        for k, g in enumerate(groups):  # the same dodge as _interval_rows
            chosen = rows[rows["selected"].astype(bool) & ((rows[group].astype(str) == g) if hue else True)]
            ys = [variants.index(str(v)) - 0.35 + step * (k + 0.5) for v in chosen["variant"]]
            ax.scatter(chosen["estimate"], ys, marker="*", s=160, color="#E69F00", zorder=3,
                       label="selected on the other split" if k == 0 else None)
        ax.set_yticks(range(len(variants)), [labels[v] for v in variants])
        ax.set_xlabel(f"{METRIC_LABELS.get(metric, metric)}, held out")
        ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5))
        ax.set_title(title)
        return finish_axes(ax, own, caption_text)


def plot_corrected_intervals(result: pd.DataFrame, *, ax: Axes | None = None, truth: float | None = None,
                             title: str = "Corrected estimates of the mean", caption_text: str | None = None) -> Axes:
    """Each method's corrected mean with its interval (one row per method), and the true value if known.

    Input: a :func:`judgelab.stats.corrected_mean` frame of one group, columns ``metric`` (rows "mean"
    are drawn), ``estimator``, ``estimate``, ``ci_low``, ``ci_high``, ``n_labelled``. ``truth``: a value
    drawn as a dashed line (e.g. the all-human mean when the labels were hidden on purpose); default:
    the frame's ``truth`` column when it has one.
    """
    require_columns(result, ("estimator", "n_labelled", *ESTIMATE_COLUMNS), "plot_corrected_intervals")
    rows = require_rows(result[result["metric"] == "mean"], "plot_corrected_intervals", "'mean' rows")
    if rows["estimator"].duplicated().any():
        raise PlotInputError("plot_corrected_intervals draws one group: the frame has several 'mean' rows per "
                             "estimator (several systems or criteria); select one group first")
    if truth is None and "truth" in rows.columns:
        truth = float(rows["truth"].iloc[0])
    methods = list(rows["estimator"].astype(str))
    labels = [f"{m} (n labelled = {int(n)})" for m, n in zip(methods, rows["n_labelled"], strict=True)]
    with use_style():
        ax, own = panel_axes(ax, (FIG_WIDTH, 0.45 * len(methods) + 1.6))
        interval_rows(ax, rows, "estimator", None, order=methods)
        ax.set_yticks(range(len(methods)), labels)
        if truth is not None and np.isfinite(truth):
            ax.axvline(truth, color=ROLE_COLORS["human"], linestyle="--", linewidth=1.2, label="all-human value")
            ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5))
        ax.set_xlabel("estimated mean")
        ax.set_title(title)
        return finish_axes(ax, own, caption_text)


def plot_corrected_coverage(coverage: pd.DataFrame, *, ax: Axes | None = None, group: str = "case",
                            title: str = "Coverage of the corrected intervals", caption_text: str | None = None) -> Axes:
    """Achieved coverage per group and method (Wilson interval of the share) against the nominal level.

    Input: a :func:`judgelab.studies.corrected_study.coverage_table` or ``coverage_simulation`` frame,
    columns ``group`` (default ``case``; ``design`` for the simulation), ``estimator``, ``nominal``,
    ``metric`` (rows "coverage" are drawn), ``estimate``, ``ci_low``, ``ci_high``. Widths stay in the table.
    """
    require_columns(coverage, (group, "estimator", "nominal", *ESTIMATE_COLUMNS), "plot_corrected_coverage")
    rows = require_rows(coverage[coverage["metric"] == "coverage"], "plot_corrected_coverage", "'coverage' rows")
    groups = list(dict.fromkeys(rows[group].astype(str)))
    methods = list(dict.fromkeys(rows["estimator"].astype(str)))
    nominal = rows["nominal"].unique()
    with use_style():
        ax, own = panel_axes(ax, (FIG_WIDTH, 0.35 * len(groups) * max(2, len(methods)) + 1.6))
        interval_rows(ax, rows, group, "estimator", order=groups, hue_order=methods)
        for level in nominal:
            ax.axvline(float(level), color="black", linestyle="--", linewidth=0.9,
                       label=f"nominal {float(level):.0%}" if level == nominal[0] else None)
        ax.set_xlabel("share of intervals holding the true value")
        ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5))
        ax.set_title(title)
        return finish_axes(ax, own, caption_text)


def plot_label_budget(curve: pd.DataFrame, *, ax: Axes | None = None,
                      title: str = "Interval width vs number of gold labels", caption_text: str | None = None) -> Axes:
    """Interval width against the number of labels, per method: projected from a pilot (lines) and
    measured over repeated draws (points).

    Input: a :func:`judgelab.studies.corrected_study.budget_curve` frame (or ``stats.projected_width``
    rows alone), columns ``estimator``, ``n_labels``, ``estimate`` (the width) and ``kind``
    ("projected from a pilot" or "measured over draws").
    """
    require_columns(curve, ("estimator", "n_labels", "estimate", "kind"), "plot_label_budget")
    require_rows(curve, "plot_label_budget", "rows")
    methods = list(dict.fromkeys(curve["estimator"].astype(str)))
    colors = family_colors(methods)
    with use_style():
        ax, own = panel_axes(ax, (FIG_WIDTH, 3.6))
        for m in methods:
            part = curve[curve["estimator"].astype(str) == m].sort_values("n_labels")
            proj = part[part["kind"].astype(str).str.startswith("projected")]
            meas = part[~part["kind"].astype(str).str.startswith("projected")]
            if len(proj):
                ax.plot(proj["n_labels"], proj["estimate"], "-", color=colors[m], label=f"{m}, projected")
            if len(meas):
                ax.plot(meas["n_labels"], meas["estimate"], "o", color=colors[m], label=f"{m}, measured")
        ax.set_xlabel("number of gold labels")
        ax.set_ylabel("interval width")
        ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5))
        ax.set_title(title)
        return finish_axes(ax, own, caption_text)


def plot_cascade_splits(splits: pd.DataFrame, *, alpha: float, ax: Axes | None = None,
                        title: str = "Guaranteed cascade on held-out items", caption_text: str | None = None) -> Axes:
    """One point per calibration/test split: the share of test items the judges keep against the agreement
    with gold on them, with the target 1 − ``alpha`` as a line.

    Input: the ``splits`` frame of :func:`judgelab.studies.corrected_study.llmbar_cascade`, columns
    ``coverage``, ``agreement_on_kept`` and ``certified`` (uncertified splits keep nothing and are not drawn).
    """
    require_columns(splits, ("coverage", "agreement_on_kept", "certified"), "plot_cascade_splits")
    rows = require_rows(splits[splits["certified"].astype(bool) & splits["agreement_on_kept"].notna()],
                        "plot_cascade_splits", "certified splits that kept an item")
    with use_style():
        ax, own = panel_axes(ax, (FIG_WIDTH * 0.8, 3.6))
        below = rows["agreement_on_kept"] < 1 - alpha
        ax.scatter(rows.loc[~below, "coverage"], rows.loc[~below, "agreement_on_kept"], s=14, alpha=0.6,
                   color=ROLE_COLORS["judge"], label="at or above the target")
        ax.scatter(rows.loc[below, "coverage"], rows.loc[below, "agreement_on_kept"], s=14, alpha=0.8,
                   color="#D55E00", label="below the target")
        ax.axhline(1 - alpha, color="black", linestyle="--", linewidth=0.9, label=f"target 1 − α = {1 - alpha:g}")
        ax.set_xlabel("share of test items the judges keep")
        ax.set_ylabel("agreement with gold on kept items")
        ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5))
        ax.set_title(title)
        return finish_axes(ax, own, caption_text)


def plot_confusion_matrix(cm: pd.DataFrame, *, ax: Axes | None = None, value: str = "row_share",
                          title: str = "Judge labels against gold", caption_text: str | None = None) -> Axes:
    """The confusion matrix as a heatmap: gold classes down, the judge's labels across; each cell shows its
    row share (the diagonal is each class's recall) and its count.

    Input: ``stats.confusion_matrix`` output, columns ``gold``, ``predicted``, ``count`` and ``row_share``
    (``value="count"`` colours by the count instead). A gold class with no rows has no shares: its cells stay
    blank, with its counts. Classes keep the frame's order.
    """
    require_columns(cm, ("gold", "predicted", "count", "row_share"), "plot_confusion_matrix")
    require_rows(cm, "plot_confusion_matrix", "cells")
    if value not in ("row_share", "count"):
        raise PlotInputError(f"plot_confusion_matrix colours by 'row_share' or 'count', not {value!r}")
    classes = list(dict.fromkeys([*cm["gold"].astype(str), *cm["predicted"].astype(str)]))
    frame = cm.assign(gold=cm["gold"].astype(str), predicted=cm["predicted"].astype(str))
    shares = frame.pivot(index="gold", columns="predicted", values="row_share").reindex(index=classes, columns=classes)
    counts = frame.pivot(index="gold", columns="predicted", values="count").reindex(index=classes, columns=classes)
    text = np.empty(counts.shape, dtype=object)
    for i in range(counts.shape[0]):
        for j in range(counts.shape[1]):
            n, share = counts.iat[i, j], shares.iat[i, j]
            text[i, j] = "" if pd.isna(n) else (f"{int(n)}" if pd.isna(share) else f"{share:.2f}\n({int(n)})")
    colour = shares if value == "row_share" else counts.astype(float)
    with use_style():
        side = 0.8 * len(classes) + 2.2
        ax, own = panel_axes(ax, (min(FIG_WIDTH, side + 1.2), side))
        sns.heatmap(colour, annot=text, fmt="", cmap="Blues", vmin=0, vmax=1 if value == "row_share" else None,
                    ax=ax, square=True, linewidths=0.5, annot_kws={"fontsize": 8},
                    cbar_kws={"label": "share of the gold class" if value == "row_share" else "count"})
        for i, j in zip(*np.nonzero(colour.isna().to_numpy() & counts.notna().to_numpy()), strict=True):
            ax.text(j + 0.5, i + 0.5, text[i, j], ha="center", va="center", fontsize=8, color=CI_COLOR)
        ax.set_xlabel("judge's label")
        ax.set_ylabel("gold")
        ax.set_title(title)
        return finish_axes(ax, own, caption_text)

