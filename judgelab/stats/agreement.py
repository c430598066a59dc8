"""Categorical agreement: percent agreement, Cohen's kappa (unweighted / linear / quadratic), Fleiss' kappa.

Krippendorff's alpha lives in :mod:`judgelab.stats.krippendorff`, the ICC in :mod:`judgelab.stats.icc`.
All CIs are bootstrap intervals (clustered when ``cluster=`` is given); kappa p-values are
z-tests with the large-sample null variance (Fleiss, Cohen & Everitt 1969 for Cohen's kappa;
Fleiss, Nee & Landis 1979 for Fleiss' kappa).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import special

from judgelab.stats._inputs import ratings_matrix, resolve
from judgelab.stats.bootstrap import DEFAULT_RESAMPLES, IndexStatistic, Interval, Seed, bootstrap
from judgelab.stats.tidy import join_notes, result_row, tidy_frame

__all__ = ["KappaWeights", "agreement_statistic", "cohen_kappa", "fleiss_kappa", "kappa_statistic", "label_codes",
           "percent_agreement"]

KappaWeights = Literal["linear", "quadratic"] | None


def label_codes(
    arrays: Sequence[np.ndarray], labels: Sequence[Any] | None = None
) -> tuple[list[np.ndarray], list[Any]]:
    """Integer codes of label arrays over one shared, ordered category list (sorted unless ``labels``)."""
    if labels is None:
        pooled = pd.unique(pd.Series(np.concatenate([np.asarray(a, dtype=object) for a in arrays]), dtype=object))
        try:
            categories = sorted(pooled)
        except TypeError:  # mixed, unorderable labels: order of first appearance
            categories = list(pooled)
    else:
        categories = list(labels)
    index = {c: i for i, c in enumerate(categories)}
    codes = []
    for a in arrays:
        unknown = [v for v in pd.unique(pd.Series(a, dtype=object)) if v not in index]
        if unknown:
            raise ValueError(f"labels {unknown[:5]} are not in the given labels {categories}")
        codes.append(np.array([index[v] for v in a], dtype=np.int64))
    return codes, categories


def _disagreement_weights(k: int, weights: KappaWeights) -> np.ndarray:
    i, j = np.indices((k, k))
    if weights is None:
        return (i != j).astype(float)
    if weights == "linear":
        return np.abs(i - j).astype(float)
    if weights == "quadratic":
        return ((i - j) ** 2).astype(float)
    raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")


def _confusion_counts(cx: np.ndarray, cy: np.ndarray, idx: np.ndarray, k: int) -> np.ndarray:
    """(B, k, k) confusion counts of each resample."""
    cells = cx[idx] * k + cy[idx] + (np.arange(idx.shape[0]) * k * k)[:, None]
    return np.bincount(cells.ravel(), minlength=idx.shape[0] * k * k).reshape(-1, k, k).astype(float)


def _kappa_from_counts(counts: np.ndarray, disagree: np.ndarray) -> np.ndarray:
    n = counts.sum(axis=(1, 2))
    observed = np.einsum("bij,ij->b", counts, disagree) / n
    expected = np.einsum("bi,ij,bj->b", counts.sum(axis=2), disagree, counts.sum(axis=1)) / n**2
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = 1.0 - observed / expected
    kappa[expected <= 0] = np.nan
    return kappa


def agreement_statistic(x: np.ndarray, y: np.ndarray) -> IndexStatistic:
    """Index statistic: the share of rows where the two label arrays are equal."""
    same = (np.asarray(x) == np.asarray(y)).astype(float)
    return lambda idx: same[idx].mean(axis=1)


def kappa_statistic(cx: np.ndarray, cy: np.ndarray, k: int, weights: KappaWeights = None) -> IndexStatistic:
    """Index statistic: Cohen's kappa of two integer-coded label arrays over ``k`` categories."""
    disagree = _disagreement_weights(k, weights)
    return lambda idx: _kappa_from_counts(_confusion_counts(cx, cy, idx, k), disagree)


def _kappa_null_p(counts: np.ndarray, disagree: np.ndarray, kappa: float) -> float:
    """Two-sided z-test of kappa = 0 with the null variance of Fleiss, Cohen & Everitt (1969)."""
    n = counts.sum()
    agree = 1.0 - disagree / disagree.max()
    rows, cols = counts.sum(axis=1) / n, counts.sum(axis=0) / n
    p_e = rows @ agree @ cols
    w_row, w_col = agree @ cols, rows @ agree
    spread = np.sum(np.outer(rows, cols) * (agree - (w_row[:, None] + w_col[None, :])) ** 2) - p_e**2
    var0 = spread / (n * (1 - p_e) ** 2)
    if not (np.isfinite(var0) and var0 > 0 and np.isfinite(kappa)):
        return np.nan
    return float(2 * special.ndtr(-abs(kappa) / np.sqrt(var0)))


def percent_agreement(
    x: Any,
    y: Any,
    *,
    data: pd.DataFrame | None = None,
    value: str = "score",
    cluster: Any = None,
    interval: Interval = "percentile", n_resamples: int = DEFAULT_RESAMPLES, ci_level: float = 0.95, seed: Seed = 0,
) -> pd.DataFrame:
    """Share of rows where the two raters give the same label; bootstrap CI, no test."""
    res = resolve(data, {"x": x, "y": y}, cluster=cluster, numeric=False, table_value=value)
    (cx, cy), _ = label_codes([res.values["x"], res.values["y"]])
    boot = bootstrap(agreement_statistic(cx, cy), res.n, cluster=res.cluster, cluster_name=res.cluster_name,
                     interval=interval, n_resamples=n_resamples, ci_level=ci_level, seed=seed,
                     return_distribution=False)
    row = result_row("percent_agreement", boot.estimate, n=res.n, method=f"share of identical labels; CI: {boot.method}",
                     note=boot.note, **boot.fields(), **res.context())
    return tidy_frame([row])


def cohen_kappa(
    x: Any,
    y: Any,
    *,
    data: pd.DataFrame | None = None,
    value: str = "score",
    weights: KappaWeights = None,
    labels: Sequence[Any] | None = None,
    cluster: Any = None,
    interval: Interval = "percentile", n_resamples: int = DEFAULT_RESAMPLES, ci_level: float = 0.95, seed: Seed = 0,
) -> pd.DataFrame:
    """Cohen's kappa of two raters (weights None, "linear" or "quadratic" over the ordered ``labels``).

    Categories are ``labels`` in the given order, else the sorted observed labels; weighted kappa
    uses their positions (as scikit-learn does). One shared category only -> NaN with a note.
    """
    res = resolve(data, {"x": x, "y": y}, cluster=cluster, numeric=False, table_value=value)
    (cx, cy), categories = label_codes([res.values["x"], res.values["y"]], labels)
    k = max(len(categories), 1)
    disagree = _disagreement_weights(k, weights)
    boot = bootstrap(kappa_statistic(cx, cy, k, weights), res.n, cluster=res.cluster, cluster_name=res.cluster_name, interval=interval,
                     n_resamples=n_resamples, ci_level=ci_level, seed=seed, return_distribution=False)
    note = ""
    p_value = np.nan
    if res.n and np.isfinite(boot.estimate):
        counts = _confusion_counts(cx, cy, np.arange(res.n)[None, :], k)[0]
        p_value = _kappa_null_p(counts, disagree, boot.estimate)
    elif res.n:
        note = "kappa undefined: expected disagreement is zero (both raters use one and the same label)"
    name = "cohen_kappa" if weights is None else f"cohen_kappa_{weights}"
    row = result_row(name, boot.estimate, n=res.n, p_value=p_value,
                     method=f"Cohen's kappa ({weights or 'unweighted'}, {k} categories); p: z-test with "
                     f"null variance (Fleiss, Cohen & Everitt 1969); CI: {boot.method}",
                     note=join_notes(note, boot.note), **boot.fields(), n_categories=k, **res.context())
    return tidy_frame([row])


def _category_counts(matrix: np.ndarray, labels: Sequence[Any] | None) -> tuple[np.ndarray, list[Any], int]:
    """(items x categories counts, categories, items dropped as incomplete) of an items x raters matrix.

    Items with fewer ratings than the most common count are dropped (Fleiss needs equal raters).
    """
    present = ~pd.isna(matrix)
    per_item = present.sum(axis=1)
    if not len(per_item) or per_item.max() < 2:
        raise ValueError("Fleiss' kappa needs at least 2 ratings per item")
    m = int(np.bincount(per_item[per_item >= 2]).argmax())
    keep = per_item == m
    values = matrix[keep][present[keep]]
    (codes,), categories = label_codes([values], labels)
    counts = np.zeros((int(keep.sum()), len(categories)))
    np.add.at(counts, (np.repeat(np.arange(counts.shape[0]), m), codes), 1)
    return counts, categories, int((~keep).sum())


def _fleiss_from_counts(counts: np.ndarray) -> np.ndarray:
    """Fleiss' kappa of each (B, items, k) count stack."""
    m = counts[0, 0].sum()
    p_item = (np.sum(counts**2, axis=2) - m) / (m * (m - 1))
    shares = counts.sum(axis=1) / counts.sum(axis=(1, 2))[:, None]
    p_e = np.sum(shares**2, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = (p_item.mean(axis=1) - p_e) / (1 - p_e)
    kappa[p_e >= 1] = np.nan
    return kappa


def fleiss_kappa(
    ratings: Any = None,
    *,
    data: pd.DataFrame | None = None, item: str = "item_id", rater: str = "judge", value: str = "score",
    labels: Sequence[Any] | None = None,
    interval: Interval = "percentile", n_resamples: int = DEFAULT_RESAMPLES, ci_level: float = 0.95, seed: Seed = 0,
) -> pd.DataFrame:
    """Fleiss' kappa for m raters per item (items x raters array, or long ``data``); CI resamples items."""
    matrix, _, n_unscored = ratings_matrix(ratings, data, item=item, rater=rater, value=value)
    counts, categories, n_dropped = _category_counts(matrix, labels)
    n_items, m = counts.shape[0], int(counts[0].sum())
    boot = bootstrap(lambda idx: _fleiss_from_counts(counts[idx]), n_items, interval=interval,
                     n_resamples=n_resamples, ci_level=ci_level, seed=seed, return_distribution=False)
    shares = counts.sum(axis=0) / counts.sum()
    pq = shares * (1 - shares)
    p_value, note = np.nan, ""
    if np.isfinite(boot.estimate) and pq.sum() > 0:
        var0 = 2 / (n_items * m * (m - 1)) * (pq.sum() ** 2 - np.sum(pq * (1 - 2 * shares))) / pq.sum() ** 2
        p_value = float(2 * special.ndtr(-abs(boot.estimate) / np.sqrt(var0))) if var0 > 0 else np.nan
    else:
        note = "kappa undefined: every rating is the same category"
    context: dict[str, Any] = {"n_raters": m, "n_categories": len(categories), "n_items_incomplete_dropped": n_dropped}
    if n_unscored is not None:
        context["n_unscored_excluded"] = n_unscored
    row = result_row("fleiss_kappa", boot.estimate, n=n_items, p_value=p_value,
                     method=f"Fleiss' kappa ({m} raters per item); p: z-test with null variance "
                     f"(Fleiss, Nee & Landis 1979); CI: {boot.method} over items",
                     note=join_notes(note, boot.note), **boot.fields(), **context)
    return tidy_frame([row])
