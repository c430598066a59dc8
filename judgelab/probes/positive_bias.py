"""Positive bias against human or gold scores, per criterion (judgelab.stats.positive_bias).

Items carry the human/gold scores: ``human_<criterion>`` columns (e.g. ``human_overall``,
``human_coherence``) or an explicit ``human_fields={criterion: column}``. The analysis-only form
also accepts a table that already holds the human rows (``judge == human``), as the dataset
loaders produce. Per criterion: the mean judge - human difference (bootstrap CI, t-test), the
Wilcoxon signed-rank and sign tests, and the shares over-, under- and equally rated.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from judgelab.probes.experiment import items_frame, resolve_rubric
from judgelab.probes.result import ProbeResult, from_stats_frame, summary_frame, summary_row
from judgelab.rubrics.base import Rubric
from judgelab.stats import positive_bias as positive_bias_stat

HUMAN_PREFIX = "human_"


def positive_bias(
    items: Any,
    rubric: Rubric | str,
    model: str,
    *,
    human_fields: Mapping[str, str] | None = None,
    seed: int = 0,
    **run_kw: Any,
) -> ProbeResult:
    """Judge the items once and compare the judge's scores with the items' human scores."""
    import judgelab

    rubric = resolve_rubric(rubric)
    item_df = items_frame(items)
    run_kw.setdefault("progress", False)
    run_kw.pop("return_stats", None)
    table = judgelab.run(item_df, rubric, model, seed=seed, **run_kw)
    result = analyze(table, item_df, human_fields=human_fields, seed=seed)
    result.meta.update(model=model, rubric=rubric.name)
    return result


def human_rows(items: pd.DataFrame, human_fields: Mapping[str, str] | None) -> pd.DataFrame:
    """Long (item_id, criterion, human) from the items' human columns."""
    fields = dict(human_fields) if human_fields else {
        c[len(HUMAN_PREFIX):]: c for c in items.columns if str(c).startswith(HUMAN_PREFIX)
    }
    if not fields:
        raise ValueError("items carry no human scores: add human_<criterion> columns or pass human_fields")
    missing = [c for c in fields.values() if c not in items.columns]
    if missing:
        raise ValueError(f"items have no column(s) {missing} named in human_fields")
    parts = [pd.DataFrame({"item_id": items["item_id"].astype(str), "criterion": crit,
                           "human": pd.to_numeric(items[col], errors="coerce")}) for crit, col in fields.items()]
    return pd.concat(parts, ignore_index=True)


def analyze(
    table: pd.DataFrame,
    items: pd.DataFrame | None = None,
    *,
    human_fields: Mapping[str, str] | None = None,
    human: str = "human",
    judge: str | None = None,
    condition: str = "original",
    cluster: Mapping[str, Any] | pd.Series | None = None,
    seed: int = 0,
    n_resamples: int = 2000,
) -> ProbeResult:
    """Positive-bias statistics: judge rows of ``table`` vs human scores from ``items`` or ``judge == human`` rows.

    ``cluster``: item_id -> group (e.g. the source document when several summaries share one), so the
    bootstrap intervals resample groups.
    """
    rows = table[(table["condition"] == condition) & table["side"].isna()]
    if items is not None:
        humans = human_rows(items, human_fields)
    else:
        hum = rows[(rows["judge"] == human) & (rows["status"] == "ok")]
        if hum.empty:
            raise ValueError(f"no human scores: pass items with human_<criterion> columns or a table with judge {human!r}")
        humans = (hum.groupby(["item_id", "criterion"], as_index=False)["score"].mean()
                  .rename(columns={"score": "human"}))
    # reference raters ("human", "human:<annotator>", "gold") are not the judge under test
    is_reference = (rows["judge"] == human) | rows["judge"].str.startswith("human:") | (rows["judge"] == "gold")
    judged = rows[~is_reference.fillna(False)]
    if judge is not None:
        judged = judged[judged["judge"] == judge]
    if judged["judge"].nunique() > 1:
        raise ValueError(f"the table holds several judges {sorted(judged['judge'].unique())}; pass judge=<one>")
    scores = judged.assign(judge_score=judged["score"].astype(float).where(judged["status"] == "ok"))
    scores = scores.groupby(["item_id", "criterion"], as_index=False)["judge_score"].mean()
    scores["item_id"] = scores["item_id"].astype(str)
    scores["criterion"] = scores["criterion"].astype(str)
    humans["item_id"] = humans["item_id"].astype(str)
    humans["criterion"] = humans["criterion"].astype(str)
    merged = scores.merge(humans, on=["item_id", "criterion"], how="inner")
    if merged.empty:
        raise ValueError("no criterion has both judge and human scores (criteria: judge "
                         f"{sorted(scores['criterion'].unique())}, human {sorted(humans['criterion'].unique())})")
    unscored = int(merged["judge_score"].isna().sum())
    scored = merged.dropna(subset=["judge_score", "human"])
    empty = sorted(set(merged["criterion"]) - set(scored["criterion"]))
    out = [summary_row("mean_difference", math.nan, n=0, method="judge - human", condition=str(crit),
                       note="no item has both a scored judgment and a human score") for crit in empty]
    if scored.empty:
        return ProbeResult("positive_bias", table, summary_frame(out), details={"pairs": merged},
                           meta={"n_items": 0, "criteria": sorted(merged["criterion"].unique())})
    merged = scored
    groups = None
    if cluster is not None:
        groups = merged["item_id"].map(pd.Series(cluster).rename(index=str)).to_numpy(object)
        if pd.isna(groups).any():
            raise ValueError("cluster has no group for some judged items; give every item_id a group")
    frame = positive_bias_stat(merged["judge_score"].to_numpy(float), merged["human"].to_numpy(float),
                               criterion=merged["criterion"].to_numpy(object), cluster=groups,
                               n_resamples=n_resamples, seed=seed)
    for crit, part in frame.groupby("criterion", sort=False):
        out += from_stats_frame(part, condition=str(crit), policy="unscored judge rows or missing human scores dropped",
                                note=f"{unscored} unscored judge score(s) dropped" if unscored else "")
    return ProbeResult("positive_bias", table, summary_frame(out), details={"pairs": merged},
                       meta={"n_items": int(merged["item_id"].nunique()),
                             "criteria": sorted(merged["criterion"].unique())})
