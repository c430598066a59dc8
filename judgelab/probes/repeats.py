"""Within-judge reliability: k samples per item at temperature > 0.

Each repeat is a rater: ICC (all six forms, judgelab.stats.icc) and Krippendorff's alpha
(interval level, item bootstrap CI) measure how much of the score variance is between items
rather than between samples. Spread: the mean per-item standard deviation across repeats
(bootstrap CI) and the share of items whose repeats disagree (exact CI). Drift: the provider's
``system_fingerprint`` values seen, and when there are several, a Kruskal-Wallis test of the
scores across them (the backend changed during the run).
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
from scipy import stats as sps

from judgelab.errors import ConfigError
from judgelab.probes.experiment import is_reference, proportion_row, resolve_rubric, run_once, verdict_values
from judgelab.probes.result import ProbeResult, stats_rows, summary_frame
from judgelab.rubrics.base import Rubric
from judgelab.stats import DEFAULT_RESAMPLES, bootstrap_ci, icc, krippendorff_alpha
from judgelab.stats.tidy import result_row

__all__ = ["ICC_FORMS", "analyze", "drift_rows", "repeat_values", "repeats"]

ICC_FORMS: tuple[str, ...] = ("ICC1", "ICC1k")  # repeats are exchangeable samples: one-way random


def repeats(
    items: Any, rubric: Rubric | str, model: str,
    *,
    k: int = 5,
    temperature: float = 0.7,
    criterion: str = "overall",
    seed: int = 0,
    **run_kw: Any,
) -> ProbeResult:
    """Judge every item ``k`` times at ``temperature`` (each repeat its own, cached, call)."""
    if k < 2:
        raise ConfigError("the repeats probe needs k >= 2 samples per item")
    if temperature <= 0:
        raise ConfigError("the repeats probe needs temperature > 0 (at 0 the samples only show backend noise)")
    rubric = resolve_rubric(rubric)
    table = run_once(items, rubric, model, repeats=k, temperature=temperature, seed=seed, **run_kw)
    result = analyze(table, criterion=criterion, seed=seed)
    result.meta.update(model=model, rubric=rubric.name, k=k, temperature=temperature)
    return result


def repeat_values(table: pd.DataFrame, criterion: str, judge: str | None, condition: str = "original") -> pd.DataFrame:
    """Long frame: item_id, repeat, value (score, or A's points for pairwise), system_fingerprint."""
    rows = table[(table["criterion"] == criterion) & table["side"].isna() & (table["condition"] == condition)
                 & ~is_reference(table)]
    if judge is not None:
        rows = rows[rows["judge"] == judge]
    if rows.empty:
        raise ConfigError(f"the judgments table has no rows for criterion {criterion!r} in condition {condition!r}")
    if rows["judge"].nunique() > 1:
        raise ConfigError(f"the table holds several judges {sorted(rows['judge'].unique())}; pass judge=<one>")
    return pd.DataFrame({"item_id": rows["item_id"].astype(str), "repeat": rows["repeat"].astype(int),
                         "value": verdict_values(rows),
                         "system_fingerprint": rows["system_fingerprint"].astype(object)})


def analyze(table: pd.DataFrame, *, criterion: str = "overall", judge: str | None = None,
            condition: str = "original", seed: int = 0, n_resamples: int = DEFAULT_RESAMPLES) -> ProbeResult:
    """Reliability, spread and drift from a table with several repeats per item of one condition (no calls)."""
    long = repeat_values(table, criterion, judge, condition)
    if long["repeat"].nunique() < 2:
        raise ConfigError("the table has one repeat per item; run the judge with repeats >= 2")
    unscored = int(long["value"].isna().sum())
    policy = "unscored samples excluded"
    note = f"{unscored} unscored sample(s) excluded" if unscored else ""
    scored = long.dropna(subset=["value"])
    rows: list[dict[str, Any]] = []
    rows += stats_rows(lambda: icc(data=scored, item="item_id", rater="repeat", value="value"), ICC_FORMS,
                       policy="items missing a repeat dropped", note=note)
    rows += stats_rows(lambda: krippendorff_alpha(data=scored, item="item_id", rater="repeat", value="value",
                                                  level="interval", n_resamples=n_resamples, seed=seed),
                       ["krippendorff_alpha_interval"], policy=policy, note=note)
    per_item = scored.groupby("item_id")["value"].agg(["std", "nunique", "count"])
    per_item = per_item[per_item["count"] >= 2]
    if len(per_item):
        sd = per_item["std"].to_numpy(float)
        ci = bootstrap_ci(sd, statistic="mean", n_resamples=n_resamples, seed=seed).iloc[0]
        rows.append(result_row("mean_within_item_sd", float(sd.mean()), n=len(sd), ci_low=ci["ci_low"],
                               ci_high=ci["ci_high"], method=f"mean of per-item sample SDs, {ci['method']}",
                               policy="items with >= 2 scored repeats", note=note))
        rows.append(proportion_row("items_with_disagreeing_repeats", int((per_item["nunique"] > 1).sum()),
                                   len(per_item), policy="items with >= 2 scored repeats", note=note))
    rows += drift_rows(scored)
    return ProbeResult("repeats", table, summary_frame(rows), details={"samples": long},
                       meta={"criterion": criterion, "n_items": int(long["item_id"].nunique()),
                             "k": int(long["repeat"].nunique())})


def drift_rows(scored: pd.DataFrame) -> list[dict[str, Any]]:
    fps = scored["system_fingerprint"].dropna().astype(str)
    n_fp = fps.nunique()
    rows = [result_row("n_system_fingerprints", float(n_fp), n=len(fps),
                       method="distinct system_fingerprint values among scored samples",
                       note="" if len(fps) else "the provider reported no system_fingerprint")]
    if n_fp >= 2:
        groups = [g["value"].to_numpy(float) for _, g in scored.dropna(subset=["system_fingerprint"])
                  .groupby("system_fingerprint")]
        means = [g.mean() for g in groups]
        p = float(sps.kruskal(*groups).pvalue) if all(len(g) for g in groups) else math.nan
        rows.append(result_row("fingerprint_mean_range", float(max(means) - min(means)), n=len(fps), p_value=p,
                               method="max - min of mean score per system_fingerprint; Kruskal-Wallis test"))
    return rows
