"""Error metrics of judge scores against human scores: MAE, RMSE, mean signed difference (judge - human)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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
    table_statistic,
)
from judgelab.stats.contingency import mean_from_table, rms_from_table
from judgelab.stats.tidy import join_notes, result_row, tidy_frame

__all__ = ["ERROR_FUNCTIONS", "error_metrics", "error_statistic", "mae", "mean_signed_difference", "rmse"]

ERROR_FUNCTIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    # each maps a (B, m) matrix of differences judge - human to B values
    "mae": lambda d: np.abs(d).mean(axis=-1),
    "rmse": lambda d: np.sqrt((d**2).mean(axis=-1)),
    "mean_signed_difference": lambda d: d.mean(axis=-1),
}
_DESCRIPTIONS = {
    "mae": "mean absolute error |judge - human|",
    "rmse": "root mean squared error",
    "mean_signed_difference": "mean of judge - human (positive = judge rates higher)",
}


def error_statistic(metric: str, judge: np.ndarray, gold: np.ndarray) -> IndexStatistic:
    """Index statistic of an error metric (a key of :data:`ERROR_FUNCTIONS`) of ``judge - gold``.

    On discrete scales the metric depends on the rows only through how often each difference
    (each |difference| for the MAE) occurs: a table statistic over those few values.
    """
    diff, func = judge - gold, ERROR_FUNCTIONS[metric]
    on_table = {"mae": mean_from_table, "rmse": rms_from_table, "mean_signed_difference": mean_from_table}
    if metric in on_table:
        levels, codes = np.unique(np.abs(diff) if metric == "mae" else diff, return_inverse=True)
        table = table_statistic(np.zeros(len(diff), dtype=np.int64), codes.ravel(),
                                lambda counts: on_table[metric](counts, levels[None, :]), codes=True,
                                shape=(1, len(levels)))
        if table is not None:
            return table
    return lambda idx: func(diff[idx])


def _error_row(res: Resolved, metric: str, boot_kwargs: dict[str, Any]) -> dict[str, Any]:
    diff = res.values["x"] - res.values["y"]
    boot = bootstrap(error_statistic(metric, res.values["x"], res.values["y"]), len(diff), cluster=res.cluster, cluster_name=res.cluster_name,
                     return_distribution=False, **boot_kwargs)
    p_value, p_text, note = np.nan, "no test", ""
    if metric == "mean_signed_difference" and len(diff) >= 2:
        if np.all(diff == diff[0]):
            note = "differences are constant: t-test undefined"
        else:
            p_value, p_text = float(stats.ttest_1samp(diff, 0.0).pvalue), "p from one-sample t-test of mean = 0"
    return result_row(metric, boot.estimate, n=len(diff), p_value=p_value,
                      method=f"{_DESCRIPTIONS[metric]}; {p_text}; CI: {boot.method}",
                      note=join_notes(note, res.note, boot.note), **boot.fields(), **res.context())


def error_metrics(
    x: Any,
    y: Any,
    *,
    data: pd.DataFrame | None = None,
    value: str = "score",
    metrics: tuple[str, ...] = ("mae", "rmse", "mean_signed_difference"),
    cluster: Any = None,
    by: By = None,
    aggregate: Aggregate = None,
    interval: Interval = "percentile", n_resamples: int = DEFAULT_RESAMPLES, ci_level: float = 0.95, seed: Seed = 0,
) -> pd.DataFrame:
    """MAE, RMSE and mean signed difference of judge ``x`` against human ``y``, one row each.

    ``value``, ``by`` and ``aggregate``: as in :func:`judgelab.stats.correlation`.
    """
    unknown = [m for m in metrics if m not in ERROR_FUNCTIONS]
    if unknown:
        raise StatsInputError(f"unknown error metric(s) {unknown}; use {list(ERROR_FUNCTIONS)}")
    if by is not None:
        return per_group(lambda part: error_metrics(
            x, y, data=part, value=value, metrics=metrics, cluster=cluster, aggregate=aggregate, interval=interval,
            n_resamples=n_resamples, ci_level=ci_level, seed=seed), data, by,
            rows_of=judge_names(data, {"x": x, "y": y}))
    res = resolve(data, {"x": x, "y": y}, cluster=cluster, aggregate=aggregate, table_value=value,
                  statistic="an error metric")
    boot_kwargs = dict(interval=interval, n_resamples=n_resamples, ci_level=ci_level, seed=seed)
    return tidy_frame([_error_row(res, m, boot_kwargs) for m in metrics])


def mae(x: Any, y: Any, **kwargs: Any) -> pd.DataFrame:
    """Mean absolute error of judge ``x`` vs human ``y``; see :func:`error_metrics`."""
    return error_metrics(x, y, metrics=("mae",), **kwargs)


def rmse(x: Any, y: Any, **kwargs: Any) -> pd.DataFrame:
    """Root mean squared error of judge ``x`` vs human ``y``; see :func:`error_metrics`."""
    return error_metrics(x, y, metrics=("rmse",), **kwargs)


def mean_signed_difference(x: Any, y: Any, **kwargs: Any) -> pd.DataFrame:
    """Mean of judge ``x`` minus human ``y`` with a t-test p-value; see :func:`error_metrics`."""
    return error_metrics(x, y, metrics=("mean_signed_difference",), **kwargs)
