"""Categorical agreement: percent agreement, Cohen's kappa (unweighted / linear / quadratic), Fleiss' kappa.

Krippendorff's alpha lives in :mod:`judgelab.stats.krippendorff`, the ICC in :mod:`judgelab.stats.icc`.
All CIs are bootstrap intervals (clustered when ``cluster=`` is given); kappa p-values are
z-tests with the large-sample null variance (Fleiss, Cohen & Everitt 1969 for Cohen's kappa;
Fleiss, Nee & Landis 1979 for Fleiss' kappa).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import special

from judgelab.stats._inputs import (
    Aggregate,
    By,
    Layout,
    StatsInputError,
    choose_raters,
    judge_names,
    merge_note,
    per_group,
    ratings_matrix,
    resolve,
)
from judgelab.stats.bootstrap import (
    DEFAULT_RESAMPLES,
    IndexStatistic,
    Interval,
    Seed,
    bootstrap,
    table_statistic,
)
from judgelab.stats.contingency import agreement_from_table, kappa_from_table
from judgelab.stats.tidy import join_notes, result_row, tidy_frame

__all__ = ["KappaWeights", "agreement_statistic", "check_categorical", "check_long", "cohen_kappa", "fleiss_kappa",
           "kappa_statistic", "label_codes", "percent_agreement", "with_note"]

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
            raise StatsInputError(f"labels {unknown[:5]} are not in the given labels {categories}")
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
    raise StatsInputError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")


def _confusion_counts(cx: np.ndarray, cy: np.ndarray, idx: np.ndarray, k: int) -> np.ndarray:
    """(B, k, k) confusion counts of each resample."""
    cells = cx[idx] * k + cy[idx] + (np.arange(idx.shape[0]) * k * k)[:, None]
    return np.bincount(cells.ravel(), minlength=idx.shape[0] * k * k).reshape(-1, k, k).astype(float)


def check_categorical(values: dict[str, np.ndarray], statistic: str) -> None:
    """Refuse non-integer numbers as categories: each distinct float would be its own category.

    Called when no ``labels=`` declares the categories; a half-point scale passes its labels.
    """
    for name, arr in values.items():
        numbers = [v for v in arr if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)]
        fractional = sorted({float(v) for v in numbers if np.isfinite(v) and float(v) != round(float(v))})
        if fractional:
            raise StatsInputError(
                f"{statistic} treats every distinct value as a category, and {name} holds "
                f"{len(fractional)} distinct non-integer value(s) (e.g. {fractional[0]:g}): declare the categories "
                "with labels=[...] (e.g. a half-point scale), round the scores, or use a correlation, the ICC or "
                "krippendorff_alpha(level='interval') for continuous scores")


def agreement_statistic(x: np.ndarray, y: np.ndarray) -> IndexStatistic:
    """Index statistic: the share of rows where the two label arrays are equal -- a table statistic
    over the two cells "same" and "different" (a binomial count per resample)."""
    same = (np.asarray(x) == np.asarray(y)).astype(np.int64)
    table = table_statistic(np.zeros(len(same), dtype=np.int64), same, codes=True, shape=(1, 2),
                            from_counts=lambda counts: agreement_from_table(counts, np.array([[False, True]])))
    return table if table is not None else (lambda idx: same[idx].mean(axis=1))


def kappa_statistic(cx: np.ndarray, cy: np.ndarray, k: int, weights: KappaWeights = None) -> IndexStatistic:
    """Index statistic: Cohen's kappa of two integer-coded label arrays over ``k`` categories."""
    disagree = _disagreement_weights(k, weights)
    table = table_statistic(cx, cy, lambda counts: kappa_from_table(counts, disagree), codes=True, shape=(k, k))
    if table is not None:
        return table
    return lambda idx: kappa_from_table(_confusion_counts(cx, cy, idx, k), disagree)


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
    by: By = None,
    aggregate: Aggregate = None,
    interval: Interval = "percentile", n_resamples: int = DEFAULT_RESAMPLES, ci_level: float = 0.95, seed: Seed = 0,
) -> pd.DataFrame:
    """Share of rows where the two raters give the same label; bootstrap CI, no test.

    ``value``: the judgments-table column compared (labels: "verdict" or "winner"). ``by``: one row per
    group (``by="criterion"``); a judgments table with several criteria, conditions or repeats needs it (or
    a filter). ``aggregate`` ("mean", "median", "first"): how to merge a judge's several scored rows of one
    key on a judgments table (else they are an error).
    """
    if by is not None:
        return per_group(lambda part: percent_agreement(
            x, y, data=part, value=value, cluster=cluster, aggregate=aggregate, interval=interval,
            n_resamples=n_resamples, ci_level=ci_level, seed=seed), data, by,
            rows_of=judge_names(data, {"x": x, "y": y}))
    res = resolve(data, {"x": x, "y": y}, cluster=cluster, numeric=False, table_value=value, aggregate=aggregate,
                  statistic="percent agreement")
    (cx, cy), _ = label_codes([res.values["x"], res.values["y"]])
    boot = bootstrap(agreement_statistic(cx, cy), res.n, cluster=res.cluster, cluster_name=res.cluster_name,
                     interval=interval, n_resamples=n_resamples, ci_level=ci_level, seed=seed,
                     return_distribution=False)
    row = result_row("percent_agreement", boot.estimate, n=res.n, method=f"share of identical labels; CI: {boot.method}",
                     note=join_notes(res.note, boot.note), **boot.fields(), **res.context())
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
    by: By = None,
    aggregate: Aggregate = None,
    interval: Interval = "percentile", n_resamples: int = DEFAULT_RESAMPLES, ci_level: float = 0.95, seed: Seed = 0,
) -> pd.DataFrame:
    """Cohen's kappa of two raters (weights None, "linear" or "quadratic" over the ordered ``labels``).

    Categories are ``labels`` in the given order, else the sorted observed labels of the two raters;
    weighted kappa uses their positions (as scikit-learn does). Non-integer numbers are refused
    unless ``labels`` declares them (each distinct float would be a category of its own).
    Both raters with one and the same category -> NaN with a note. One rater with a single
    category -> kappa is exactly 0 (observed agreement equals chance agreement whatever the
    other rater does) and has no test: p-value NaN, said in the note.
    ``value``, ``by`` and ``aggregate``: as in :func:`percent_agreement`.
    """
    if by is not None:
        return per_group(lambda part: cohen_kappa(
            x, y, data=part, value=value, weights=weights, labels=labels, cluster=cluster, aggregate=aggregate,
            interval=interval, n_resamples=n_resamples, ci_level=ci_level, seed=seed), data, by,
            rows_of=judge_names(data, {"x": x, "y": y}))
    res = resolve(data, {"x": x, "y": y}, cluster=cluster, numeric=False, table_value=value, aggregate=aggregate,
                  statistic="Cohen's kappa")
    if labels is None:
        check_categorical(res.values, "Cohen's kappa")
    (cx, cy), categories = label_codes([res.values["x"], res.values["y"]], labels)
    k = max(len(categories), 1)
    disagree = _disagreement_weights(k, weights)
    boot = bootstrap(kappa_statistic(cx, cy, k, weights), res.n, cluster=res.cluster, cluster_name=res.cluster_name, interval=interval,
                     n_resamples=n_resamples, ci_level=ci_level, seed=seed, return_distribution=False)
    note = ""
    p_value = np.nan
    single = [name for name, codes in (("x", cx), ("y", cy)) if len(np.unique(codes)) == 1]
    if not np.isfinite(boot.estimate):
        note = "kappa undefined: expected disagreement is zero (both raters use one and the same label)"
    elif single:
        note = (f"{' and '.join(single)} use(s) a single category: kappa is 0 by construction (observed agreement "
                "equals chance agreement) and has no sampling variation to test; p-value undefined")
    else:
        counts = _confusion_counts(cx, cy, np.arange(res.n)[None, :], k)[0]
        p_value = _kappa_null_p(counts, disagree, boot.estimate)
    name = "cohen_kappa" if weights is None else f"cohen_kappa_{weights}"
    row = result_row(name, boot.estimate, n=res.n, p_value=p_value,
                     method=f"Cohen's kappa ({weights or 'unweighted'}, {k} categories); p: z-test with "
                     f"null variance (Fleiss, Cohen & Everitt 1969); CI: {boot.method}",
                     note=join_notes(note, res.note, boot.note), **boot.fields(), n_categories=k, **res.context())
    return tidy_frame([row])


@dataclass(frozen=True)
class _FleissCounts:
    counts: np.ndarray  # items kept x categories
    categories: list[Any]
    m: int  # ratings per kept item
    fewer: list[Any]  # ids of items dropped for having fewer than m ratings
    more: list[Any]  # ids of items dropped for having more than m ratings

    def note(self) -> str:
        if not (self.fewer or self.more):
            return ""
        parts = [f"{len(ids)} with {word} than {self.m} ratings (first: {ids[:3]})"
                 for ids, word in ((self.fewer, "fewer"), (self.more, "more")) if ids]
        return (f"Fleiss' kappa needs the same number of ratings per item: kept the {self.counts.shape[0]} items "
                f"with the most common count ({self.m}), dropped {' and '.join(parts)}")


def _category_counts(matrix: np.ndarray, ids: list[Any], labels: Sequence[Any] | None) -> _FleissCounts:
    """Items x categories counts of an items x raters matrix, keeping the items with the modal rating count."""
    present = ~pd.isna(matrix)
    per_item = present.sum(axis=1)
    if not len(per_item) or per_item.max() < 2:
        raise StatsInputError("Fleiss' kappa needs at least 2 ratings per item; no item has 2")
    m = int(np.bincount(per_item[per_item >= 2]).argmax())
    keep = per_item == m
    values = matrix[keep][present[keep]]
    (codes,), categories = label_codes([values], labels)
    counts = np.zeros((int(keep.sum()), len(categories)))
    np.add.at(counts, (np.repeat(np.arange(counts.shape[0]), m), codes), 1)
    ids_arr = np.asarray(ids, dtype=object)
    return _FleissCounts(counts, categories, m, list(ids_arr[per_item < m]), list(ids_arr[per_item > m]))


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
    raters: Sequence[Any] | None = None,
    labels: Sequence[Any] | None = None,
    layout: Layout | None = None,
    by: By = None,
    aggregate: Aggregate = None,
    interval: Interval = "percentile", n_resamples: int = DEFAULT_RESAMPLES, ci_level: float = 0.95, seed: Seed = 0,
) -> pd.DataFrame:
    """Fleiss' kappa for m raters per item; CI resamples items.

    ``ratings``: an items x raters array (``layout="raters x items"`` for the transposed one; an array
    with more columns than rows is refused without ``layout``), or long ``data`` with item/rater/value
    columns. ``raters``: the raters to use (default: every rater but reference labels -- "gold", "human" --
    and aggregates -- "panel:...", "majority" --, when those are all human annotators or all model judges;
    else the call asks for ``raters=``); the ``raters`` column names them. Fleiss needs the same number of
    ratings per item: the items with the most common count are kept, the others dropped, counted
    (``n_items_fewer_ratings_dropped``, ``n_items_more_ratings_dropped``) and named in the note. ``by``: one
    row per group (e.g. ``by="criterion"``; a table with several criteria, conditions or repeats needs it, or
    a filter); ``aggregate``: how to merge a rater's several scored rows of one item (else an error).
    """
    kwargs: dict[str, Any] = dict(item=item, rater=rater, value=value, labels=labels, layout=layout,
                                  aggregate=aggregate, interval=interval, n_resamples=n_resamples,
                                  ci_level=ci_level, seed=seed)
    if by is not None:
        chosen, left_out = choose_raters(check_long(data), rater, raters, "Fleiss' kappa")
        frame = per_group(lambda part: fleiss_kappa(data=part, raters=chosen, **kwargs), data, by, rows_of=chosen,
                          rater=rater)
        return with_note(frame, left_out)
    rm = ratings_matrix(ratings, data, item=item, rater=rater, value=value, layout=layout, aggregate=aggregate,
                        statistic="Fleiss' kappa", raters=raters)
    fc = _category_counts(rm.matrix, rm.ids, labels)
    counts, m = fc.counts, fc.m
    n_items = counts.shape[0]
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
    context: dict[str, Any] = {"n_raters": m, "n_categories": len(fc.categories),
                               "n_items_incomplete_dropped": len(fc.fewer) + len(fc.more),
                               "n_items_fewer_ratings_dropped": len(fc.fewer),
                               "n_items_more_ratings_dropped": len(fc.more)}
    context.update({k: v for k, v in rm.context(aggregate, named=data is not None).items() if k != "n_raters"})
    row = result_row("fleiss_kappa", boot.estimate, n=n_items, p_value=p_value,
                     method=f"Fleiss' kappa ({m} raters per item); p: z-test with null variance "
                     f"(Fleiss, Nee & Landis 1979); CI: {boot.method} over items",
                     note=join_notes(note, fc.note(), merge_note(aggregate, rm.n_merged), rm.note, boot.note),
                     **boot.fields(), **context)
    return tidy_frame([row])


def check_long(data: pd.DataFrame | None) -> pd.DataFrame:
    if data is None:
        raise StatsInputError("by= groups the rows of data=; give data= (a long frame or a judgments table)")
    if not isinstance(data, pd.DataFrame):
        raise StatsInputError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    return data


def with_note(frame: pd.DataFrame, note: str) -> pd.DataFrame:
    """``frame`` with ``note`` joined to every row's note (the raters a by= call left out, said once per row)."""
    if note:
        frame["note"] = [join_notes(n, note) for n in frame["note"]]
    return frame
