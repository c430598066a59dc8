"""Spearman, Kendall (tau-b / tau-c) and Pearson correlations with p-values and bootstrap CIs."""

from __future__ import annotations

import warnings
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

from judgelab.stats._inputs import Aggregate, By, Resolved, StatsInputError, judge_names, per_group, resolve
from judgelab.stats.bootstrap import (
    DEFAULT_RESAMPLES,
    IndexStatistic,
    Interval,
    Seed,
    bootstrap,
    kendall_statistic,
    pearson_statistic,
    spearman_statistic,
)
from judgelab.stats.tidy import join_notes, result_row, tidy_frame

__all__ = ["Alternative", "CorrelationMethod", "correlate", "correlation", "correlation_row", "correlation_statistic",
           "kendall", "metric_name", "pearson", "spearman"]

CorrelationMethod = Literal["spearman", "kendall", "pearson"]
Alternative = Literal["two-sided", "less", "greater"]
_P_SOURCE = {
    "spearman": "scipy.stats.spearmanr, t approximation",
    "kendall": "scipy.stats.kendalltau",
    "pearson": "scipy.stats.pearsonr, exact t",
}


def correlation_statistic(method: CorrelationMethod, x: np.ndarray, y: np.ndarray, variant: str = "b") -> IndexStatistic:
    """The vectorised index statistic for a correlation method (for the bootstrap engine)."""
    if method == "spearman":
        return spearman_statistic(x, y)
    if method == "pearson":
        return pearson_statistic(x, y)
    if method == "kendall":
        return kendall_statistic(x, y, variant)  # type: ignore[arg-type]
    raise StatsInputError(f"unknown correlation method {method!r}; use 'spearman', 'kendall' or 'pearson'")


def correlate(
    x: np.ndarray, y: np.ndarray, method: CorrelationMethod, variant: str = "b", alternative: Alternative = "two-sided"
) -> tuple[float, float, str]:
    """(estimate, p_value, note); NaN with a note for n < 2 or a constant side, never an exception."""
    if method not in _P_SOURCE:
        raise StatsInputError(f"unknown correlation method {method!r}; use 'spearman', 'kendall' or 'pearson'")
    if len(x) < 2:
        return np.nan, np.nan, f"correlation undefined: n={len(x)} < 2"
    constant = [name for name, v in (("x", x), ("y", y)) if np.all(v == v[0])]
    if constant:
        return np.nan, np.nan, f"correlation undefined: {' and '.join(constant)} constant"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns for n=2 and near-constant input; we report NaN/notes instead
        if method == "spearman":
            res = stats.spearmanr(x, y, alternative=alternative)
        elif method == "pearson":
            res = stats.pearsonr(x, y, alternative=alternative)
        else:
            res = stats.kendalltau(x, y, variant=variant, alternative=alternative)
    note = "p-value undefined for n=2" if len(x) == 2 and np.isnan(res.pvalue) else ""
    return float(res.statistic), float(res.pvalue), note


def metric_name(method: CorrelationMethod, variant: str = "b") -> str:
    return {"spearman": "spearman_rho", "pearson": "pearson_r"}.get(method, f"kendall_tau_{variant}")


def correlation_row(
    res: Resolved,
    method: CorrelationMethod,
    *,
    variant: str = "b",
    alternative: Alternative = "two-sided",
    interval: Interval = "percentile", n_resamples: int = DEFAULT_RESAMPLES, ci_level: float = 0.95, seed: Seed = 0,
    metric: str | None = None,
    **context: Any,
) -> dict[str, Any]:
    """One tidy row for a correlation of the resolved ``x`` and ``y`` (used by other modules too)."""
    x, y = res.values["x"], res.values["y"]
    estimate, p_value, note = correlate(x, y, method, variant, alternative)
    boot = bootstrap(correlation_statistic(method, x, y, variant), res.n, cluster=res.cluster,
                     cluster_name=res.cluster_name, n_resamples=n_resamples, ci_level=ci_level,
                     interval=interval, seed=seed, return_distribution=False)
    if not np.isfinite(estimate):
        fields = {"ci_low": np.nan, "ci_high": np.nan, "ci_level": ci_level, "n_resamples": n_resamples}
        boot_note = ""
    else:
        fields, boot_note = boot.fields(), boot.note
    label = {"spearman": "Spearman rho", "pearson": "Pearson r"}.get(method, f"Kendall tau-{variant}")
    method_text = f"{label}, p from {_P_SOURCE[method]} ({alternative}); CI: {boot.method}"
    cluster_note = "p-value assumes independent rows; only the CI accounts for clustering" if res.cluster is not None else ""
    return result_row(metric or metric_name(method, variant), estimate, n=res.n, p_value=p_value,
                      method=method_text, note=join_notes(note, res.note, boot_note, cluster_note), **fields,
                      **res.context(), **context)


def correlation(
    x: Any,
    y: Any,
    *,
    data: pd.DataFrame | None = None,
    value: str = "score",
    method: CorrelationMethod = "spearman",
    variant: Literal["b", "c"] = "b",
    cluster: Any = None,
    alternative: Alternative = "two-sided",
    by: By = None,
    aggregate: Aggregate = None,
    interval: Interval = "percentile", n_resamples: int = DEFAULT_RESAMPLES, ci_level: float = 0.95, seed: Seed = 0,
) -> pd.DataFrame:
    """Correlation of ``x`` and ``y`` with its p-value and a (clustered) bootstrap CI.

    ``x``/``y``: arrays, or column names of ``data`` (judge names on a judgments table, whose ``value``
    column is compared). Rows where either is missing are dropped pairwise (``n_missing_dropped``). A
    constant side or n < 2 gives a NaN estimate with a ``note``. ``by``: one row per group, the group
    columns first (``by="criterion"``: a per-criterion table in one call); a judgments table with several
    criteria, conditions or repeats needs it (or a filter). ``aggregate`` ("mean", "median", "first"): how
    to merge a judge's several scored rows of one key on a judgments table (else an error).
    """
    if by is not None:
        return per_group(lambda part: correlation(
            x, y, data=part, value=value, method=method, variant=variant, cluster=cluster, alternative=alternative,
            aggregate=aggregate, interval=interval, n_resamples=n_resamples, ci_level=ci_level, seed=seed),
            data, by, rows_of=judge_names(data, {"x": x, "y": y}))
    res = resolve(data, {"x": x, "y": y}, cluster=cluster, aggregate=aggregate, table_value=value,
                  statistic="a correlation")
    row = correlation_row(res, method, variant=variant, alternative=alternative, interval=interval,
                          n_resamples=n_resamples, ci_level=ci_level, seed=seed)
    return tidy_frame([row])


def spearman(x: Any, y: Any, **kwargs: Any) -> pd.DataFrame:
    """Spearman's rho (average ranks for ties); see :func:`correlation` for the arguments."""
    return correlation(x, y, method="spearman", **kwargs)


def kendall(x: Any, y: Any, *, variant: Literal["b", "c"] = "b", **kwargs: Any) -> pd.DataFrame:
    """Kendall's tau-b (ties adjusted) or tau-c (Stuart's, for non-square tables); see :func:`correlation`.

    Its bootstrap calls scipy.stats.kendalltau once per resample (O(n log n) each), so for
    thousands of items a smaller ``n_resamples`` keeps it quick.
    """
    return correlation(x, y, method="kendall", variant=variant, **kwargs)


def pearson(x: Any, y: Any, **kwargs: Any) -> pd.DataFrame:
    """Pearson's r; see :func:`correlation` for the arguments."""
    return correlation(x, y, method="pearson", **kwargs)
