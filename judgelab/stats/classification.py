"""A judge as a classifier against gold labels: accuracy, precision, recall and F1, and the confusion matrix.

The judge's labels ``x`` are the predictions and ``gold`` the true classes (a pairwise judge's
winners "A"/"B"/"TIE" against the majority of annotators, a yes/no verdict against gold ...). Every
number is a function of the K x K confusion table (rows: gold class, columns: the judge's label), so
the bootstrap resamples tables, not rows: multinomial counts over the table's cells, or per-cluster
tables for whole-cluster resampling (:class:`judgelab.stats.bootstrap.TableStatistic`). All metrics
of one call share one seed, so their intervals come from the same resamples.

Definitions (those of scikit-learn's ``precision_recall_fscore_support`` and ``accuracy_score``,
to which the tests compare every estimate to 1e-12):

- per class k: precision = tp / (tp + fp), recall = tp / (tp + fn), F1 = 2 tp / (2 tp + fp + fn);
- ``average="macro"``: the unweighted mean over the classes; ``"weighted"``: weighted by each
  class's gold count (support); ``"micro"``: from the summed counts (with every observed class
  included this equals the accuracy); ``None``: one row per class (``label`` column).

**Zero division.** A ratio with a zero denominator (precision of a class the judge never
predicted, recall of a class gold never uses, F1 of a class neither uses) is undefined. With the
default ``zero_division=nan`` it is NaN, and a macro or weighted average leaves it out (scikit-learn's
``zero_division=np.nan``); the ``note`` names the classes left out. ``zero_division=0`` (scikit-learn's
default, with its warning silenced) or ``1`` count it as that value instead, which some published
numbers need.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from judgelab.stats._inputs import Aggregate, StatsInputError, per_group, resolve
from judgelab.stats.agreement import check_categorical, label_codes
from judgelab.stats.bootstrap import DEFAULT_RESAMPLES, Interval, Seed, TableStatistic, bootstrap
from judgelab.stats.tidy import join_notes, result_row, tidy_frame

__all__ = ["AVERAGES", "CLASSIFICATION_METRICS", "Average", "classification_from_table", "classification_report",
           "classification_statistic", "confusion_matrix"]

Average = Literal["macro", "micro", "weighted"] | None
AVERAGES: tuple[Average, ...] = ("macro", "micro", "weighted", None)
CLASSIFICATION_METRICS: tuple[str, ...] = ("precision", "recall", "f1")


def _check_zero_division(zero_division: float) -> float:
    if isinstance(zero_division, bool) or not isinstance(zero_division, int | float | np.number) or not (
            np.isnan(zero_division) or zero_division in (0, 1)):
        raise StatsInputError(f"zero_division must be nan (undefined ratios left out), 0 or 1, got {zero_division!r}")
    return float(zero_division)


def _divide(numerator: np.ndarray, denominator: np.ndarray, zero_division: float) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        out = numerator / np.where(denominator == 0, 1.0, denominator)
    return np.where(denominator == 0, zero_division, out)


def classification_from_table(counts: np.ndarray, metric: str, average: Average, zero_division: float = np.nan,
                              label: int | None = None) -> np.ndarray:
    """``metric`` ("accuracy", "precision", "recall", "f1") of each (B, K, K) confusion table (rows: gold, columns:
    prediction); one value per table (``label``: the class index when ``average`` is None)."""
    counts = np.asarray(counts, dtype=float)
    tp = np.diagonal(counts, axis1=1, axis2=2)
    true_sum, pred_sum = counts.sum(axis=2), counts.sum(axis=1)
    total = true_sum.sum(axis=1)
    if metric == "accuracy":
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total > 0, tp.sum(axis=1) / np.where(total > 0, total, 1.0), np.nan)
    if average == "micro":
        tp, true_sum, pred_sum = (a.sum(axis=1, keepdims=True) for a in (tp, true_sum, pred_sum))
    if metric == "precision":
        values = _divide(tp, pred_sum, zero_division)
    elif metric == "recall":
        values = _divide(tp, true_sum, zero_division)
    elif metric == "f1":
        values = _divide(2 * tp, true_sum + pred_sum, zero_division)
    else:
        raise StatsInputError(f"unknown metric {metric!r}; use 'accuracy' or one of {CLASSIFICATION_METRICS}")
    if average is None:
        if label is None:
            raise StatsInputError("average=None needs the class index (label=)")
        return values[:, label]
    if average == "micro":
        return values[:, 0]
    return _nan_average(values, true_sum if average == "weighted" else None)


def _nan_average(values: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """Row means leaving NaN entries out (NaN when every entry is NaN); ``weights``: the weighted mean,
    unweighted where the weights of the defined entries sum to zero (as scikit-learn)."""
    defined = ~np.isnan(values)
    filled = np.where(defined, values, 0.0)
    n_defined = defined.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        plain = np.where(n_defined > 0, filled.sum(axis=1) / np.maximum(n_defined, 1), np.nan)
        if weights is None:
            return plain
        w = np.where(defined, weights, 0.0)
        w_total = w.sum(axis=1)
        weighted = (filled * w).sum(axis=1) / np.where(w_total > 0, w_total, 1.0)
    return np.where(w_total > 0, weighted, plain)


def classification_statistic(gold_codes: np.ndarray, pred_codes: np.ndarray, k: int, metric: str,
                             average: Average, zero_division: float = np.nan,
                             label: int | None = None) -> TableStatistic:
    """A table statistic of one metric over the K x K confusion table of two integer-coded label arrays."""
    cells = np.asarray(gold_codes, dtype=np.int64) * k + np.asarray(pred_codes, dtype=np.int64)
    return TableStatistic(cells, k * k, lambda counts: classification_from_table(
        counts.reshape(-1, k, k), metric, average, zero_division, label))


def _coded(x: Any, gold: Any, data: pd.DataFrame | None, value: str, labels: Sequence[Any] | None,
           cluster: Any, aggregate: Aggregate) -> tuple[Any, np.ndarray, np.ndarray, list[Any]]:
    res = resolve(data, {"x": x, "gold": gold}, cluster=cluster, numeric=False, table_value=value,
                  aggregate=aggregate)
    if labels is None:
        check_categorical(res.values, "a classification metric")
    elif len(set(map(_hashable, labels))) != len(list(labels)):
        raise StatsInputError(f"labels must be distinct, got {list(labels)}")
    try:
        (cg, cx), categories = label_codes([res.values["gold"], res.values["x"]], labels)
    except StatsInputError as exc:
        raise StatsInputError(f"{exc}: labels= must list every class the judge or gold uses (it may add classes "
                              "neither uses)") from None
    return res, cg, cx, categories


def _hashable(value: Any) -> Any:
    return value if isinstance(value, str | int | float | bool | np.generic | type(None)) else repr(value)


def confusion_matrix(
    x: Any,
    gold: Any,
    *,
    data: pd.DataFrame | None = None,
    value: str = "score",
    labels: Sequence[Any] | None = None,
    by: str | Sequence[str] | None = None,
    aggregate: Aggregate = None,
) -> pd.DataFrame:
    """The confusion table of the judge's labels ``x`` against ``gold``, tidy: one row per (gold, predicted) cell.

    Columns: ``gold`` (the true class), ``predicted`` (the judge's label), ``count``, ``gold_total`` (the gold
    class's rows), ``row_share`` (count / gold_total: each gold row sums to 1, the diagonal is the class's
    recall; NaN for a class gold never uses), ``n`` (all compared rows), and the input accounting columns of
    every statistic (``n_missing_dropped``, ``n_unscored_excluded`` on a judgments table). Every cell of the
    K x K grid is listed, zeros included, classes in the order of ``labels`` (else sorted). Equal to
    ``sklearn.metrics.confusion_matrix(gold, x, labels=...)`` read row by row.
    ``x``/``gold``: arrays, columns of ``data``, or judges of a judgments table (``value``: the compared column,
    e.g. "winner" or "verdict"). ``by``: one block per group (e.g. ``by="criterion"``).
    """
    if by is not None:
        return per_group(lambda part: confusion_matrix(x, gold, data=part, value=value, labels=labels,
                                                       aggregate=aggregate), data, by)
    res, cg, cx, categories = _coded(x, gold, data, value, labels, None, aggregate)
    k = len(categories)
    counts = np.bincount(cg * k + cx, minlength=k * k).reshape(k, k)
    gold_total = counts.sum(axis=1)
    rows = []
    for i, g in enumerate(categories):
        for j, p in enumerate(categories):
            share = counts[i, j] / gold_total[i] if gold_total[i] else np.nan
            rows.append({"gold": g, "predicted": p, "count": int(counts[i, j]), "gold_total": int(gold_total[i]),
                         "row_share": float(share), "n": res.n, **res.context()})
    return pd.DataFrame(rows)


def classification_report(
    x: Any,
    gold: Any,
    *,
    data: pd.DataFrame | None = None,
    value: str = "score",
    labels: Sequence[Any] | None = None,
    average: Average = "macro",
    zero_division: float = np.nan,
    cluster: Any = None,
    by: str | Sequence[str] | None = None,
    aggregate: Aggregate = None,
    interval: Interval = "percentile", n_resamples: int = DEFAULT_RESAMPLES, ci_level: float = 0.95, seed: Seed = 0,
) -> pd.DataFrame:
    """Accuracy, precision, recall and F1 of the judge's labels ``x`` against ``gold``, with bootstrap CIs.

    ``x``/``gold``: arrays, columns of ``data``, or judges of a judgments table (``value``: the compared
    column, e.g. "winner" or "verdict"). ``labels``: the classes in order; it must include every class either
    side uses and may add classes neither uses (they count in a macro average as any other class: NaN, left
    out, under the default ``zero_division``). ``average``: "macro", "micro", "weighted", or None for one row
    per class (``label`` and ``support`` columns). ``zero_division``: nan (default), 0 or 1 -- see the module
    docstring. ``cluster``: resample clusters (documents, items with several rows) instead of rows.
    ``by``: one block of rows per group (e.g. ``by="criterion"``).

    Rows: ``accuracy`` then ``precision_<average>``, ``recall_<average>``, ``f1_<average>`` (with average
    None: ``precision``, ``recall``, ``f1`` per class). ``p_value`` is NaN (these have no natural null);
    ``n`` counts the compared rows. Each interval is a table bootstrap, the same resamples for every row;
    resamples where a metric is undefined are left out and counted in the note.
    """
    if by is not None:
        return per_group(lambda part: classification_report(
            x, gold, data=part, value=value, labels=labels, average=average, zero_division=zero_division,
            cluster=cluster, aggregate=aggregate, interval=interval, n_resamples=n_resamples, ci_level=ci_level,
            seed=seed), data, by)
    if average not in AVERAGES:
        raise StatsInputError(f"average must be 'macro', 'micro', 'weighted' or None, got {average!r}")
    zero_division = _check_zero_division(zero_division)
    res, cg, cx, categories = _coded(x, gold, data, value, labels, cluster, aggregate)
    k = len(categories)
    shared_seed = seed if isinstance(seed, int) else _integer_seed(seed)
    table = np.bincount(cg * k + cx, minlength=k * k).reshape(1, k, k).astype(float)
    support = table[0].sum(axis=1)
    if np.isnan(zero_division):
        zd_text = "undefined: NaN" if average is None else "undefined ratios left out of the average"
    else:
        zd_text = f"undefined ratios counted as {zero_division:g}"
    averaged = {} if average is None else {"average": average}

    def row(metric: str, name: str, method: str, note: str = "", index: int | None = None,
            **context: Any) -> dict[str, Any]:
        def func(counts: np.ndarray) -> np.ndarray:
            return classification_from_table(counts, metric, average, zero_division, index)

        boot = bootstrap(TableStatistic(cg * k + cx, k * k, lambda c: func(c.reshape(-1, k, k))), res.n,
                         cluster=res.cluster, cluster_name=res.cluster_name, interval=interval,
                         n_resamples=n_resamples, ci_level=ci_level, seed=shared_seed, return_distribution=False)
        return result_row(name, boot.estimate, n=res.n, method=f"{method}; CI: {boot.method}",
                          note=join_notes(note, res.note, boot.note), **boot.fields(), **averaged, **context,
                          n_classes=k, **res.context())

    rows = [row("accuracy", "accuracy", "share of rows where the judge's label is the gold label",
                **({"label": None, "support": res.n} if average is None else {}))]
    for metric in CLASSIFICATION_METRICS:
        if average is None:
            for i, cls in enumerate(categories):
                note = _undefined_note(metric, [cls], zero_division) if _undefined(table, metric, i) else ""
                rows.append(row(metric, metric, f"{_describe(metric)} of class {cls!r} ({zd_text})", note=note,
                                index=i, **{"label": cls, "support": int(support[i])}))
            continue
        undefined = [] if average == "micro" else [c for i, c in enumerate(categories) if _undefined(table, metric, i)]
        note = _undefined_note(metric, undefined, zero_division, averaged=True) if undefined else ""
        how = {"macro": f"unweighted mean over {k} classes",
               "weighted": f"mean over {k} classes weighted by gold support",
               "micro": f"from counts summed over {k} classes"}[average]
        rows.append(row(metric, f"{metric}_{average}", f"{_describe(metric)}, {how} ({zd_text})", note=note))
    return tidy_frame(rows)


def _integer_seed(seed: Seed) -> int:
    """One integer seed for every metric's bootstrap (so all rows come from the same resamples)."""
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(2**63 - 1))
    return int(np.random.default_rng().integers(2**63 - 1))


def _undefined(table: np.ndarray, metric: str, label: int) -> bool:
    """Whether ``metric`` of class ``label`` has a zero denominator in the (1, K, K) table."""
    tp = table[0, label, label]
    true_sum, pred_sum = table[0, label, :].sum(), table[0, :, label].sum()
    denominator = {"precision": pred_sum, "recall": true_sum, "f1": true_sum + pred_sum}[metric]
    return bool(denominator == 0 and tp == 0)


def _describe(metric: str) -> str:
    return {"precision": "precision tp / (tp + fp)", "recall": "recall tp / (tp + fn)",
            "f1": "F1 2 tp / (2 tp + fp + fn)"}[metric]


def _undefined_note(metric: str, classes: Sequence[Any], zero_division: float, averaged: bool = False) -> str:
    why = {"precision": "the judge never predicts", "recall": "gold never uses",
           "f1": "neither the judge nor gold uses"}[metric]
    shown = ", ".join(map(repr, classes))
    if np.isnan(zero_division):
        effect = "left out of the average" if averaged else "NaN"
    else:
        effect = f"counted as {zero_division:g}"
    return f"{metric} undefined for {shown} ({why} it): {effect}"

