"""Positive bias against gold (or human) scores, per criterion: the analysis IS :func:`judgelab.stats.positive_bias`.

Items carry the reference scores: ``human_<criterion>`` columns (e.g. ``human_overall``,
``human_coherence``) or an explicit ``gold_fields={criterion: column}``. The analysis-only form
also accepts a table that already holds the reference rows (``judge == gold``, "human" by
default), as the dataset loaders produce. Per criterion: the mean judge - reference difference
(bootstrap CI, t-test), the Wilcoxon signed-rank and sign tests, and the shares over-, under- and
equally rated.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from judgelab.errors import ConfigError
from judgelab.judgments import is_scored
from judgelab.probes.experiment import check_one_run, prepare, run_once
from judgelab.probes.result import ProbeResult, from_stats_frame, summary_frame
from judgelab.rubrics.base import Rubric
from judgelab.stats import DEFAULT_RESAMPLES
from judgelab.stats import positive_bias as positive_bias_statistic
from judgelab.stats.tidy import result_row

__all__ = ["GOLD_PREFIX", "analyze", "gold_scores", "positive_bias"]

GOLD_PREFIX = "human_"  # item columns human_<criterion> hold the reference scores by default


def positive_bias(
    items: Any, rubric: Rubric | str, model: str,
    *,
    gold_fields: Mapping[str, str] | None = None,
    seed: int = 0,
    **run_kw: Any,
) -> ProbeResult:
    """Judge the items once and compare the judge's scores with the items' reference (gold/human) scores."""
    item_df, rubric = prepare(items, rubric)
    table = run_once(item_df, rubric, model, seed=seed, **run_kw)
    result = analyze(table, item_df, gold_fields=gold_fields, seed=seed)
    result.meta.update(model=model, rubric=rubric.name)
    return result


def gold_scores(items: pd.DataFrame, gold_fields: Mapping[str, str] | None) -> pd.DataFrame:
    """Long (item_id, criterion, gold) from the items' reference-score columns."""
    fields = dict(gold_fields) if gold_fields else {
        c[len(GOLD_PREFIX):]: c for c in items.columns if str(c).startswith(GOLD_PREFIX)
    }
    if not fields:
        raise ConfigError(f"items carry no reference scores: add {GOLD_PREFIX}<criterion> columns or pass gold_fields")
    missing = [c for c in fields.values() if c not in items.columns]
    if missing:
        raise ConfigError(f"items have no column(s) {missing} named in gold_fields")
    parts = [pd.DataFrame({"item_id": items["item_id"].astype(str), "criterion": crit,
                           "gold": pd.to_numeric(items[col], errors="coerce")}) for crit, col in fields.items()]
    return pd.concat(parts, ignore_index=True)


def analyze(
    table: pd.DataFrame,
    items: pd.DataFrame | None = None,
    *,
    gold_fields: Mapping[str, str] | None = None,
    gold: str = "human",
    judge: str | None = None,
    condition: str = "original",
    cluster: Mapping[str, Any] | pd.Series | None = None,
    seed: int = 0,
    n_resamples: int = DEFAULT_RESAMPLES,
) -> ProbeResult:
    """Positive-bias statistics: judge rows of ``table`` vs reference scores from ``items`` or ``judge == gold`` rows.

    ``cluster``: item_id -> group (e.g. the source document when several summaries share one), so the
    bootstrap intervals resample groups.
    """
    rows = table[(table["condition"] == condition) & table["side"].isna()]
    if items is not None:
        references = gold_scores(items, gold_fields)
    else:
        ref_rows = rows[(rows["judge"] == gold) & is_scored(rows)]
        if ref_rows.empty:
            raise ConfigError(f"no reference scores: pass items with {GOLD_PREFIX}<criterion> columns or a table with "
                              f"judge {gold!r}")
        dup = ref_rows.duplicated(["item_id", "criterion"], keep=False)
        if dup.any():  # several reference rows for one item are never averaged silently
            first = ref_rows.loc[dup, ["item_id", "criterion"]].iloc[0].tolist()
            raise ConfigError(f"judge {gold!r} has {int(dup.sum())} scored rows sharing an item and criterion (first: "
                              f"{first}); one reference score per item: filter its rows to one run and repeat")
        references = pd.DataFrame({"item_id": ref_rows["item_id"].astype(str), "criterion": ref_rows["criterion"],
                                   "gold": ref_rows["score"].astype(float)})
    # reference raters (``gold``, "human", "human:<annotator>", "gold") are not the judge under test
    is_reference = (rows["judge"].isin([gold, "human", "gold"]) | rows["judge"].str.startswith("human:"))
    judged = rows[~is_reference.fillna(False)]
    if judge is not None:
        judged = judged[judged["judge"] == judge]
    if judged["judge"].nunique() > 1:
        raise ConfigError(f"the table holds several judges {sorted(judged['judge'].unique())}; pass judge=<one>")
    for _, part in judged.groupby("criterion", sort=False):  # repeats are averaged, nothing else
        check_one_run(part)
    scores = judged.assign(judge_score=judged["score"].astype(float).where(is_scored(judged)))
    scores = scores.groupby(["item_id", "criterion"], as_index=False)["judge_score"].mean()
    scores["item_id"] = scores["item_id"].astype(str)
    scores["criterion"] = scores["criterion"].astype(str)
    references["item_id"] = references["item_id"].astype(str)
    references["criterion"] = references["criterion"].astype(str)
    merged = scores.merge(references, on=["item_id", "criterion"], how="inner")
    if merged.empty:
        raise ConfigError("no criterion has both judge and reference scores (criteria: judge "
                          f"{sorted(scores['criterion'].unique())}, reference {sorted(references['criterion'].unique())})")
    unscored = int(merged["judge_score"].isna().sum())
    scored = merged.dropna(subset=["judge_score", "gold"])
    empty = sorted(set(merged["criterion"]) - set(scored["criterion"]))
    out = [result_row("mean_difference", math.nan, n=0, method="judge - reference", condition=str(crit),
                      note="no item has both a scored judgment and a reference score") for crit in empty]
    if scored.empty:
        return ProbeResult("positive_bias", table, summary_frame(out), details={"pairs": merged},
                           meta={"n_items": 0, "criteria": sorted(merged["criterion"].unique())})
    merged = scored
    groups = None
    if cluster is not None:
        groups = merged["item_id"].map(pd.Series(cluster).rename(index=str)).to_numpy(object)
        if pd.isna(groups).any():
            raise ConfigError("cluster has no group for some judged items; give every item_id a group")
    frame = positive_bias_statistic(merged["judge_score"].to_numpy(float), merged["gold"].to_numpy(float),
                               criterion=merged["criterion"].to_numpy(object), cluster=groups,
                               n_resamples=n_resamples, seed=seed)
    for crit, part in frame.groupby("criterion", sort=False):
        out += from_stats_frame(part, condition=str(crit), policy="unscored judge rows or missing reference scores dropped",
                                note=f"{unscored} unscored judge score(s) dropped" if unscored else "")
    return ProbeResult("positive_bias", table, summary_frame(out), details={"pairs": merged},
                       meta={"n_items": int(merged["item_id"].nunique()),
                             "criteria": sorted(merged["criterion"].unique())})
