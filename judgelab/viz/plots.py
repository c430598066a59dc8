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
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from judgelab.viz.style import (
    CI_COLOR,
    DIVERGING_CMAP,
    FIG_WIDTH,
    ROLE_COLORS,
    caption,
    family_colors,
    finish,
    finish_axes,
    panel_axes,
    use_style,
)

__all__ = ["plot_agreement_forest", "plot_agreement_heatmap", "plot_error_breakdown", "plot_length_effect",
           "plot_meta_forest", "plot_pairwise_accuracy_grid", "plot_positive_bias_forest", "plot_score_distributions",
           "plot_score_shares"]

_METRIC_LABELS = {
    "mae": "MAE (lower is better)",
    "spearman_rho": "Spearman's ρ",
    "mean_difference": "mean judge − human",
    "accuracy_mean": "accuracy (mean of both orders)",
    "position_consistency": "position consistency",
    "cohen_kappa": "Cohen's κ",
    "percent_agreement": "percent agreement",
    "length_coefficient": "length coefficient (log-odds per SD)",
}


def _interval_rows(ax: Axes, frame: pd.DataFrame, y: str, hue: str | None, *, order: Sequence[str] | None = None,
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


def plot_meta_forest(meta: pd.DataFrame, *, title: str = "Judges vs human experts",
                     caption_text: str | None = None) -> Figure:
    """Table-1 style: each judge's MAE and Spearman rho with CIs (hue = criterion when there are several)."""
    criteria = list(dict.fromkeys(meta["criterion"])) if "criterion" in meta.columns else ["all"]
    hue = "criterion" if len(criteria) > 1 else None
    judges = list(dict.fromkeys(meta["judge"]))
    with use_style():
        fig, axes = plt.subplots(1, 2, figsize=(FIG_WIDTH, 0.55 * len(judges) * max(1, len(criteria) / 2.5) + 1.6),
                                 sharey=True)
        for ax, metric in zip(axes, ("mae", "spearman_rho"), strict=True):
            _interval_rows(ax, meta[meta["metric"] == metric], "judge", hue, order=judges)
            ax.set_xlabel(_METRIC_LABELS[metric])
            if metric == "spearman_rho":
                ax.axvline(0, color="black", linewidth=0.8)
        if hue:
            axes[1].legend(title="criterion", loc="center left", bbox_to_anchor=(1.0, 0.5))
        fig.suptitle(title)
        return finish(fig, caption_text)


def plot_score_distributions(dist: pd.DataFrame, *, title: str = "Human vs judge score distributions",
                             caption_text: str | None = None) -> Figure:
    """Figures-4/5/6 style: share of each score, judge beside human, one panel per judge x criterion."""
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
    """Mean judge − human difference per criterion with CIs, one colour per judge."""
    frame = bias[bias["metric"] == "mean_difference"]
    criteria = list(dict.fromkeys(frame["criterion"]))
    judges = list(dict.fromkeys(frame["judge"]))
    with use_style():
        ax, own = panel_axes(ax, (FIG_WIDTH, 0.5 * len(criteria) * max(1, len(judges) / 2) + 1.5))
        _interval_rows(ax, frame, "criterion", "judge", order=criteria, hue_order=judges)
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_xlabel("mean judge − human score (positive = judge rates higher)")
        ax.legend(title="judge", loc="center left", bbox_to_anchor=(1.0, 0.5))
        ax.set_title(title)
        return finish_axes(ax, own, caption_text)


def plot_agreement_heatmap(agreement: pd.DataFrame, *, ax: Axes | None = None,
                           title: str = "Model-to-model agreement (Spearman's ρ)",
                           caption_text: str | None = None) -> Axes:
    """Square heatmap of pairwise rho (from stats.agreement_matrix), each cell annotated with rho and its band."""
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
                    square=True, cbar_kws={"label": "Spearman's ρ"}, annot_kws={"fontsize": 8}, linewidths=0.5)
        ax.set_xlabel("")
        ax.set_ylabel("")
        ax.set_title(title)
        ax.tick_params(axis="x", rotation=30)
        return finish_axes(ax, own, caption_text)


def plot_pairwise_accuracy_grid(pa: pd.DataFrame, *,
                                metrics: Sequence[str] = ("accuracy_mean", "position_consistency"),
                                title: str = "LLMBar: accuracy and position consistency",
                                caption_text: str | None = None) -> Figure:
    """LLMBar-style grid: rows = judge, columns = metric, y = split, colour = prompting strategy, with CIs."""
    judges = list(dict.fromkeys(pa["judge"]))
    splits = list(dict.fromkeys(pa["split"]))
    strategies = list(dict.fromkeys(pa["strategy"]))
    colors = family_colors(strategies)
    with use_style():
        fig, axes = plt.subplots(len(judges), len(metrics), figsize=(FIG_WIDTH * 1.3, 0.5 * len(splits) *
                                 len(judges) * max(1.0, len(strategies) / 3) + 1.5), sharex="col", squeeze=False)
        for r, judge in enumerate(judges):
            for c, metric in enumerate(metrics):
                ax = axes[r][c]
                part = pa[(pa["judge"] == judge) & (pa["metric"] == metric)]
                _interval_rows(ax, part, "split", "strategy", order=splits, hue_order=strategies, colors=colors)
                ax.axvline(0.5, color="#999999", linewidth=0.8, linestyle="--")
                ax.set_title(f"{judge} · {_METRIC_LABELS.get(metric, metric)}", fontsize=9)
                if r == len(judges) - 1:
                    ax.set_xlabel(_METRIC_LABELS.get(metric, metric))
        axes[0][-1].legend(title="strategy", loc="upper left", bbox_to_anchor=(1.0, 1.0))
        fig.suptitle(title)
        return finish(fig, caption_text)


def plot_length_effect(frame: pd.DataFrame, *, ax: Axes | None = None,
                       title: str = "LLMBar: does the verdict follow length?", caption_text: str | None = None) -> Axes:
    """Length coefficient (log-odds of choosing output 1 per SD of its extra length) per judge x strategy, gold beside."""
    rows = frame[frame["metric"] == "length_coefficient"].copy()
    rows["who"] = rows["judge"].astype(str) + " · " + rows["strategy"].astype(str)
    order = list(dict.fromkeys(rows["who"]))
    colors = family_colors(list(dict.fromkeys(rows["judge"])))
    with use_style():
        ax, own = panel_axes(ax, (FIG_WIDTH, 0.35 * len(order) + 1.5))
        _interval_rows(ax, rows, "who", "judge", order=order, colors=colors)
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_xlabel(_METRIC_LABELS["length_coefficient"] + "; > 0 = prefers the longer output")
        ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5))
        ax.set_title(title)
        return finish_axes(ax, own, caption_text)


def plot_agreement_forest(frame: pd.DataFrame, *, title: str = "Agreement with the human verdict",
                          caption_text: str | None = None) -> Figure:
    """Percent agreement and Cohen's kappa per rater pair with CIs (one panel per metric)."""
    metrics = [m for m in ("percent_agreement", "cohen_kappa") if m in set(frame["metric"])]
    pairs = list(dict.fromkeys(frame["pair"]))
    with use_style():
        fig, axes = plt.subplots(1, len(metrics), figsize=(FIG_WIDTH, 0.45 * len(pairs) + 1.6), sharey=True,
                                 squeeze=False)
        for ax, metric in zip(axes[0], metrics, strict=True):
            _interval_rows(ax, frame[frame["metric"] == metric], "pair", None, order=pairs)
            ax.set_xlabel(_METRIC_LABELS[metric])
        fig.suptitle(title)
        return finish(fig, caption_text)


def plot_error_breakdown(counts: pd.DataFrame, *, ax: Axes | None = None, title: str = "Where the judges err",
                         caption_text: str | None = None) -> Axes:
    """Stacked shares per judge: agrees, says yes where humans say no, says no where humans say yes, unscored."""
    order = ["agree", "false accept (judge yes, human no)", "false reject (judge no, human yes)", "unscored"]
    wide = counts.pivot_table(index="judge", columns="outcome", values="share", sort=False).reindex(
        columns=[o for o in order if o in set(counts["outcome"])]).fillna(0.0)
    colors = {"agree": "#BBBBBB", order[1]: "#D55E00", order[2]: "#0072B2", "unscored": "#000000"}
    with use_style():
        ax, own = panel_axes(ax, (FIG_WIDTH, 0.5 * len(wide) + 1.6))
        left = np.zeros(len(wide))
        for col in wide.columns:
            ax.barh(wide.index, wide[col], left=left, color=colors[col], label=col)
            left += wide[col].to_numpy()
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        ax.set_xlabel("share of question/answer pairs")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=2)
        ax.set_title(title)
        return finish_axes(ax, own, caption_text)


def plot_score_shares(dist: pd.DataFrame, *, ax: Axes | None = None, title: str = "Score shares",
                      caption_text: str | None = None) -> Axes:
    """One judge, one criterion: share of each score for the judge beside the human raters (one panel)."""
    with use_style():
        ax, own = panel_axes(ax, (FIG_WIDTH * 0.75, 3.2))
        sns.barplot(data=dist, x="score", y="share", hue="rater", palette=_rater_palette(dist["rater"]), ax=ax)
        ax.set_ylabel("share of ratings")
        ax.set_title(title)
        return finish_axes(ax, own, caption_text)


def _rater_palette(raters: Sequence[str]) -> dict[str, str]:
    """Human raters in the human colour, everyone else in the judge colour."""
    return {r: ROLE_COLORS["human"] if r.startswith("human") else ROLE_COLORS["judge"] for r in raters}
