"""Is judge A better than judge B? Paired comparisons against the same gold (or human) labels, and p-value correction.

- :func:`compare_judges`: paired bootstrap of metric(A, gold) - metric(B, gold) on the same items
  (the same resamples for both judges, clustered if asked);
- :func:`dependent_correlation_test`: Williams' t and Steiger's z for two correlations sharing
  the gold variable, with Zou's (2007) CI for their difference;
- :func:`adjust_pvalues`: statsmodels ``multipletests`` over a tidy frame.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import special, stats
from statsmodels.stats.multitest import multipletests

from judgelab.stats._inputs import Aggregate, StatsInputError, resolve
from judgelab.stats.agreement import agreement_statistic, check_categorical, kappa_statistic, label_codes
from judgelab.stats.bootstrap import (
    DEFAULT_RESAMPLES,
    IndexStatistic,
    Interval,
    Seed,
    bootstrap,
    difference_statistic,
    paired_tables,
)
from judgelab.stats.classification import classification_statistic
from judgelab.stats.correlation import correlate, correlation_statistic
from judgelab.stats.errors import ERROR_FUNCTIONS, error_statistic
from judgelab.stats.tidy import join_notes, result_row, tidy_frame

__all__ = ["COMPARABLE_METRICS", "adjust_pvalues", "compare_judges", "dependent_correlation_test"]

# classification metrics of a judge's labels against gold, coded over the classes of both judges and gold
_CLASSIFICATION_METRICS = ("accuracy", "precision_macro", "recall_macro", "f1_macro", "precision_weighted",
                           "recall_weighted", "f1_weighted")
_LABEL_METRICS = ("kappa", "kappa_linear", "kappa_quadratic", "percent_agreement", *_CLASSIFICATION_METRICS)
_NUMERIC_METRICS = ("spearman", "pearson", "kendall", "mae", "rmse", "mean_signed_difference")
COMPARABLE_METRICS: tuple[str, ...] = _NUMERIC_METRICS + _LABEL_METRICS


def _metric_statistic(metric: str, judge: np.ndarray, gold: np.ndarray, k: int) -> IndexStatistic:
    """Index statistic of metric(judge, gold); label metrics receive integer codes over k categories."""
    if metric in ("spearman", "pearson", "kendall"):
        return correlation_statistic(metric, judge, gold)  # type: ignore[arg-type]
    if metric in ERROR_FUNCTIONS:
        return error_statistic(metric, judge, gold)
    if metric == "percent_agreement":
        return agreement_statistic(judge, gold)
    if metric in _CLASSIFICATION_METRICS:
        name, _, average = metric.partition("_")
        return classification_statistic(gold, judge, k, name, average or None)  # type: ignore[arg-type]
    weights = {"kappa": None, "kappa_linear": "linear", "kappa_quadratic": "quadratic"}[metric]
    return kappa_statistic(judge, gold, k, weights)  # type: ignore[arg-type]


def compare_judges(
    a: Any,
    b: Any,
    gold: Any,
    *,
    data: pd.DataFrame | None = None,
    metric: str = "spearman",
    value: str = "score",
    labels: Sequence[Any] | None = None,
    cluster: Any = None,
    aggregate: Aggregate = None,
    interval: Interval = "percentile", n_resamples: int = DEFAULT_RESAMPLES, ci_level: float = 0.95, seed: Seed = 0,
) -> pd.DataFrame:
    """metric(a, gold), metric(b, gold) and their difference a - b, with paired bootstrap CIs.

    Only items where a, b and the gold label are all present are used, so both judges are
    scored on exactly the same items. The difference's p-value is the bootstrap two-sided
    p: 2 (c + 1) / (B + 1), c the smaller count of resampled differences at or beyond zero.
    Label metrics (kappa, kappa_linear, kappa_quadratic, percent_agreement) use ``labels`` as the
    ordered categories, else each judge's own labels with gold's -- exactly as
    :func:`judgelab.stats.cohen_kappa` does for that pair, so metric(a, gold) here equals
    ``cohen_kappa(a, gold)`` on the same items. Classification metrics (``"accuracy"``, the share of items
    where the judge's label is gold's; ``precision_/recall_/f1_`` + ``macro`` or ``weighted``) count both
    judges over one class list (``labels``, else every class a, b or gold uses) and equal
    :func:`judgelab.stats.classification_report` on the same items (its default zero-division rule).
    For a pairwise judge judged in both orders, :func:`judgelab.stats.compare_pairwise_judges` compares
    over both orders. ``aggregate``: as in :func:`judgelab.stats.correlation`.
    """
    if metric not in COMPARABLE_METRICS:
        raise StatsInputError(f"unknown metric {metric!r}; use one of {list(COMPARABLE_METRICS)}")
    label_metric = metric in _LABEL_METRICS
    res = resolve(data, {"a": a, "b": b, "gold": gold}, cluster=cluster, numeric=not label_metric,
                  table_value=value, aggregate=aggregate)
    va, vb, vr = res.values["a"], res.values["b"], res.values["gold"]
    if label_metric:
        if labels is None and metric != "percent_agreement":
            check_categorical(res.values, f"compare_judges(metric={metric!r})")
        if metric in _CLASSIFICATION_METRICS:  # one class list for both judges: a macro mean over the same classes
            (ca, cb, ga), cats_a = label_codes([va, vb, vr], labels)
            gb, cats_b = ga, cats_a
        else:
            (ca, ga), cats_a = label_codes([va, vr], labels)
            (cb, gb), cats_b = label_codes([vb, vr], labels)
        stat_a = _metric_statistic(metric, ca, ga, max(len(cats_a), 1))
        stat_b = _metric_statistic(metric, cb, gb, max(len(cats_b), 1))
    else:
        stat_a, stat_b = _metric_statistic(metric, va, vr, 0), _metric_statistic(metric, vb, vr, 0)
    common: dict[str, Any] = dict(cluster=res.cluster, cluster_name=res.cluster_name, interval=interval,
                                  n_resamples=n_resamples, ci_level=ci_level, return_distribution=True)
    # the same seed gives the same resamples (tables over shared cells), so the three intervals are paired
    shared_seed = _shared_seed(seed)
    stat_a, stat_b = paired_tables(stat_a, stat_b)
    boots = {name: bootstrap(stat, res.n, seed=shared_seed, **common)
             for name, stat in (("a", stat_a), ("b", stat_b), ("difference", difference_statistic(stat_a, stat_b)))}
    names = {"a": _name(a, "a"), "b": _name(b, "b")}
    rows = []
    for part, boot in boots.items():
        label = f"{metric} ({names[part]} vs gold)" if part != "difference" else \
            f"{metric} difference ({names['a']} - {names['b']})"
        p_value, p_text = np.nan, ""
        if part == "difference":
            dist = boot.distribution[np.isfinite(boot.distribution)]
            if len(dist) and np.isfinite(boot.estimate):
                # (count + 1) / (B + 1): a resampling p-value is never exactly 0
                tail = min(np.sum(dist <= 0), np.sum(dist >= 0))
                p_value = float(min(1.0, 2 * (tail + 1) / (len(dist) + 1)))
                p_text = "; p: paired bootstrap, 2 x (resampled differences on the far side of 0 + 1) / (B + 1)"
        rows.append(result_row(label, boot.estimate, n=res.n, p_value=p_value,
                               method=f"paired on {res.n} shared items{p_text}; CI: {boot.method}",
                               note=join_notes(res.note, boot.note), **boot.fields(), part=part,
                               **res.context()))
    return tidy_frame(rows)


def _shared_seed(seed: Seed) -> int:
    """One integer seed for all three bootstraps (a Generator or None is turned into one draw)."""
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(2**63 - 1))
    if seed is None:
        return int(np.random.default_rng().integers(2**63 - 1))
    return int(seed)


def _name(value: Any, default: str) -> str:
    return value if isinstance(value, str) else default


def dependent_correlation_test(
    a: Any,
    b: Any,
    gold: Any,
    *,
    data: pd.DataFrame | None = None,
    method: Literal["pearson", "spearman"] = "pearson",
    ci_level: float = 0.95,
) -> pd.DataFrame:
    """Test r(gold, a) = r(gold, b) on the same items: Williams' t and Steiger's z rows.

    Estimate: r(gold, a) - r(gold, b); CI by Zou (2007) for overlapping dependent correlations.
    Both tests are derived for Pearson r; with ``method="spearman"`` they are applied to rho as
    an approximation (stated in the note).
    """
    res = resolve(data, {"a": a, "b": b, "gold": gold})
    va, vb, vr = res.values["a"], res.values["b"], res.values["gold"]
    n = res.n
    r_a, _, note_a = correlate(vr, va, method)
    r_b, _, note_b = correlate(vr, vb, method)
    r_ab, _, note_ab = correlate(va, vb, method)
    small = f"n={n} <= 3: Williams' t and Steiger's z need n > 3 (df = n - 3); no test and no interval" \
        if n <= 3 else ""
    note = join_notes(small, note_a, note_b, note_ab, "" if method == "pearson" else "tests derived for Pearson r; "
                      "applied to Spearman rho as an approximation")
    diff = r_a - r_b
    low, high = _zou_interval(r_a, r_b, r_ab, n, ci_level)
    rows = []
    for test, (statistic, p_value, df) in (("williams_t", _williams(r_a, r_b, r_ab, n)),
                                           ("steiger_z", _steiger(r_a, r_b, r_ab, n))):
        desc = "Williams' t (df = n - 3)" if test == "williams_t" else "Steiger's z (pooled r)"
        rows.append(result_row(f"{method} difference ({_name(a, 'a')} - {_name(b, 'b')}) vs gold",
                               diff, n=n, ci_low=low, ci_high=high, p_value=p_value,
                               method=f"{desc}, two-sided; CI {ci_level:.0%}: Zou (2007)", note=note,
                               test=test, statistic=statistic, df=df, r_gold_a=r_a, r_gold_b=r_b, r_a_b=r_ab,
                               ci_level=ci_level, **res.context()))
    return tidy_frame(rows)


def _williams(r_a: float, r_b: float, r_ab: float, n: int) -> tuple[float, float, float]:
    if n <= 3 or not np.isfinite([r_a, r_b, r_ab]).all():
        return np.nan, np.nan, n - 3
    det = 1 - r_a**2 - r_b**2 - r_ab**2 + 2 * r_a * r_b * r_ab
    r_mean = (r_a + r_b) / 2
    denom = 2 * (n - 1) / (n - 3) * det + r_mean**2 * (1 - r_ab) ** 3
    if denom <= 0:
        return np.nan, np.nan, n - 3
    t = (r_a - r_b) * np.sqrt((n - 1) * (1 + r_ab) / denom)
    return float(t), float(2 * stats.t.sf(abs(t), n - 3)), n - 3


def _steiger(r_a: float, r_b: float, r_ab: float, n: int) -> tuple[float, float, float]:
    if n <= 3 or not np.isfinite([r_a, r_b, r_ab]).all() or max(abs(r_a), abs(r_b)) >= 1:
        return np.nan, np.nan, np.nan
    r_mean = (r_a + r_b) / 2
    psi = r_ab * (1 - 2 * r_mean**2) - 0.5 * r_mean**2 * (1 - 2 * r_mean**2 - r_ab**2)
    cov = psi / (1 - r_mean**2) ** 2
    if 2 - 2 * cov <= 0:
        return np.nan, np.nan, np.nan
    z = (np.arctanh(r_a) - np.arctanh(r_b)) * np.sqrt(n - 3) / np.sqrt(2 - 2 * cov)
    return float(z), float(2 * special.ndtr(-abs(z))), np.nan


def _zou_interval(r_a: float, r_b: float, r_ab: float, n: int, ci_level: float) -> tuple[float, float]:
    if n <= 3 or not np.isfinite([r_a, r_b, r_ab]).all() or max(abs(r_a), abs(r_b)) >= 1:
        return np.nan, np.nan
    z = special.ndtri(1 - (1 - ci_level) / 2)

    def fisher_ci(r: float) -> tuple[float, float]:
        half = z / np.sqrt(n - 3)
        return float(np.tanh(np.arctanh(r) - half)), float(np.tanh(np.arctanh(r) + half))

    (l1, u1), (l2, u2) = fisher_ci(r_a), fisher_ci(r_b)
    c = ((r_ab - 0.5 * r_a * r_b) * (1 - r_a**2 - r_b**2 - r_ab**2) + r_ab**3) / ((1 - r_a**2) * (1 - r_b**2))
    low = r_a - r_b - np.sqrt(max(0.0, (r_a - l1) ** 2 + (u2 - r_b) ** 2 - 2 * c * (r_a - l1) * (u2 - r_b)))
    high = r_a - r_b + np.sqrt(max(0.0, (u1 - r_a) ** 2 + (r_b - l2) ** 2 - 2 * c * (u1 - r_a) * (r_b - l2)))
    return float(low), float(high)


def adjust_pvalues(
    results: pd.DataFrame,
    *,
    method: str = "holm",
    alpha: float = 0.05,
    p_col: str = "p_value",
) -> pd.DataFrame:
    """Add ``p_adjusted`` and ``reject`` columns (statsmodels multipletests; NaN p-values left out).

    ``method`` is any multipletests method ("holm", "bonferroni", "fdr_bh", ...).
    """
    if p_col not in results.columns:
        raise StatsInputError(f"column {p_col!r} is not in the results frame")
    out = results.copy()
    p = out[p_col].to_numpy(dtype=float)
    valid = np.isfinite(p)
    adjusted = np.full(len(p), np.nan)
    reject = np.zeros(len(p), dtype=bool)
    if valid.any():
        reject[valid], adjusted[valid], _, _ = multipletests(p[valid], alpha=alpha, method=method)
    out["p_adjusted"] = adjusted
    out["reject"] = reject
    out["correction"] = f"{method} over {int(valid.sum())} tests, alpha={alpha}"
    if not valid.all() and "note" in out.columns:
        extra = "p-value missing: left out of the correction"
        out.loc[~valid, "note"] = out.loc[~valid, "note"].map(lambda s: join_notes(s, extra))
    return out

