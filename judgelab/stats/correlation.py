"""Spearman, Kendall (tau-b / tau-c) and Pearson correlations with p-values and bootstrap CIs.

Which p-value (the ``method`` string says it):

- **Kendall**: exact -- the permutation distribution of tau (``scipy.stats.kendalltau(method="exact")``) --
  when neither side has ties and n < 50, else the asymptotic normal approximation with the tie
  correction (``method="asymptotic"``). This is R's ``cor.test(method="kendall")`` rule. (scipy's own default
  switches to exact only up to n = 33.)
- **Spearman**: exact -- every one of the n! pairings, enumerated as the distribution of the sum of squared
  rank differences -- when neither side has ties and n <= 9, else scipy.stats.spearmanr's t approximation
  (asymptotic). R's ``cor.test(method="spearman")`` is exact for the same samples (AS 89 enumerates n <= 9);
  for 10 <= n < 1290 without ties R uses AS 89's Edgeworth series, which differs slightly from the t
  approximation used here.
- **Pearson**: scipy.stats.pearsonr's exact t test (normal data).
"""

from __future__ import annotations

import warnings
from functools import lru_cache
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

__all__ = ["Alternative", "CorrelationMethod", "EXACT_KENDALL_MAX_N", "EXACT_SPEARMAN_MAX_N", "correlate", "correlation",
           "correlation_row", "correlation_statistic", "kendall", "metric_name", "p_value_method", "pearson",
           "spearman", "spearman_exact_p"]

CorrelationMethod = Literal["spearman", "kendall", "pearson"]
Alternative = Literal["two-sided", "less", "greater"]
_P_SOURCE = {
    "spearman": "asymptotic: scipy.stats.spearmanr's t approximation",
    "kendall": "asymptotic: scipy.stats.kendalltau's normal approximation with tie correction",
    "pearson": "scipy.stats.pearsonr, exact t",
}
_P_EXACT = {
    "spearman": "exact: all n! pairings (no ties, n <= 9)",
    "kendall": "exact: scipy.stats.kendalltau(method='exact') (no ties, n < 50)",
}
EXACT_KENDALL_MAX_N = 49  # R's cor.test: exact below 50 untied pairs
EXACT_SPEARMAN_MAX_N = 9  # R's AS 89 enumerates up to 9; n! pairings stay cheap


def _untied(values: np.ndarray) -> bool:
    return len(np.unique(values)) == len(values)


def _exact_p(method: str, x: np.ndarray, y: np.ndarray) -> bool:
    """Whether the p-value of ``method`` on (x, y) is exact (small samples without ties)."""
    limit = {"kendall": EXACT_KENDALL_MAX_N, "spearman": EXACT_SPEARMAN_MAX_N}.get(method)
    return limit is not None and 3 <= len(x) <= limit and _untied(x) and _untied(y)


def p_value_method(method: str, x: np.ndarray, y: np.ndarray, alternative: str = "two-sided") -> str:
    """How :func:`correlate` computes the p-value of ``method`` on (x, y): "exact: ..." or "asymptotic: ..."."""
    text = _P_EXACT[method] if _exact_p(method, x, y) else _P_SOURCE[method]
    return f"{text} ({alternative})"


@lru_cache(maxsize=EXACT_SPEARMAN_MAX_N + 1)
def _squared_rank_difference_counts(n: int) -> np.ndarray:
    """How many of the n! pairings of ranks 1..n give each sum of squared rank differences S = 0, 1, ...

    A dynamic programme over the set of ranks already paired (positions are filled in order): 2^n states.
    """
    top = n * (n * n - 1) // 3
    counts = np.zeros((1 << n, top + 1), dtype=np.int64)
    counts[0, 0] = 1
    for mask in range(1 << n):
        position = bin(mask).count("1")
        if position == n or not counts[mask].any():
            continue
        for rank in range(n):
            if not mask >> rank & 1:
                step = (position - rank) ** 2
                counts[mask | 1 << rank, step:] += counts[mask, : top + 1 - step]
    return counts[-1]


def spearman_exact_p(x: np.ndarray, y: np.ndarray, alternative: str = "two-sided") -> float:
    """The exact permutation p-value of Spearman's rho for untied x and y (n <= 9): the share of the n! pairings
    with a rho at least as extreme; two-sided: twice the smaller tail, at most 1 (R's and scipy's
    ``permutation_test`` convention)."""
    n = len(x)
    rank_x, rank_y = np.argsort(np.argsort(x)), np.argsort(np.argsort(y))
    observed = int(np.sum((rank_x - rank_y) ** 2))
    counts = _squared_rank_difference_counts(n)
    total = counts.sum()
    greater = counts[: observed + 1].sum() / total  # rho >= observed  <=>  S <= observed
    less = counts[observed:].sum() / total
    if alternative == "greater":
        return float(greater)
    if alternative == "less":
        return float(less)
    return float(min(1.0, 2 * min(greater, less)))


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
    exact = _exact_p(method, x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns for n=2 and near-constant input; we report NaN/notes instead
        if method == "spearman":
            res = stats.spearmanr(x, y, alternative=alternative)
        elif method == "pearson":
            res = stats.pearsonr(x, y, alternative=alternative)
        else:
            res = stats.kendalltau(x, y, variant=variant, alternative=alternative,
                                   method="exact" if exact else "asymptotic")
    p_value = spearman_exact_p(x, y, alternative) if method == "spearman" and exact else float(res.pvalue)
    note = "p-value undefined for n=2" if len(x) == 2 and np.isnan(p_value) else ""
    return float(res.statistic), p_value, note


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
    method_text = f"{label}, p {p_value_method(method, x, y, alternative)}; CI: {boot.method}"
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
