"""Model-to-model agreement: Spearman rho with p-value (and CI) between every pair of judges on shared items.

Labels follow Donati, Savino & Torroni ("Do Large Language Models understand
how to be judges?"). The paper does not print its cut-offs, but every rho it labels is
consistent with the bands below (the Hinkle, Wiersma & Jurs rule of thumb): it calls 0.218
"negligible", 0.422 and 0.490 "Low", 0.583-0.671 "Medium" and 0.708-0.810 "High". The
three-level alternative (< 0.4 Low, 0.4-0.7 Medium, >= 0.7 High) would call 0.422 and 0.490
"Medium", contradicting the paper, so it is offered as ``THREE_LEVEL_THRESHOLDS`` only.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pandas as pd

from judgelab.judgments import distinct_text
from judgelab.stats._inputs import (
    Aggregate,
    By,
    DuplicateRatingsError,
    EmptyInputError,
    StatsInputError,
    check_aggregate,
    check_scored_judges,
    choose_raters,
    drop_unscored,
    per_group,
    resolve,
)
from judgelab.stats.agreement import with_note
from judgelab.stats.bootstrap import DEFAULT_RESAMPLES, Seed
from judgelab.stats.correlation import CorrelationMethod, correlation_row, metric_name
from judgelab.stats.pairing import (
    MERGED_COLUMN,
    aggregate_duplicates,
    describe_duplicates,
    is_judgments_table,
)
from judgelab.stats.question import check_design, rows_read
from judgelab.stats.tidy import result_row, tidy_frame

__all__ = ["AGREEMENT_THRESHOLDS", "THREE_LEVEL_THRESHOLDS", "agreement_label", "agreement_matrix",
           "agreement_matrix_wide", "describe_thresholds"]

# (lower bound, label), highest first: a rho gets the first label whose bound it reaches.
AGREEMENT_THRESHOLDS: tuple[tuple[float, str], ...] = ((0.7, "High"), (0.5, "Medium"), (0.3, "Low"),
                                                       (-np.inf, "Negligible"))
THREE_LEVEL_THRESHOLDS: tuple[tuple[float, str], ...] = ((0.7, "High"), (0.4, "Medium"), (-np.inf, "Low"))


def _checked(thresholds: Sequence[tuple[float, str]]) -> list[tuple[float, str]]:
    """The bands as (lower bound, label) pairs, or one StatsInputError saying what they must be."""
    pairs = list(thresholds) if not isinstance(thresholds, str) else []
    if not pairs or not all(isinstance(t, tuple | list) and len(t) == 2 and isinstance(t[0], int | float)
                            and not isinstance(t[0], bool) and isinstance(t[1], str) for t in pairs):
        raise StatsInputError(f"thresholds must be (lower bound, label) pairs such as {AGREEMENT_THRESHOLDS[:2]}, got "
                              f"{thresholds!r}")
    return [(float(b), str(label)) for b, label in pairs]


def describe_thresholds(thresholds: Sequence[tuple[float, str]] = AGREEMENT_THRESHOLDS) -> str:
    """Human-readable bands, e.g. 'Negligible < 0.3 <= Low < 0.5 <= Medium < 0.7 <= High'."""
    ordered = sorted(_checked(thresholds), key=lambda t: t[0])
    parts = [ordered[0][1]]
    for bound, label in ordered[1:]:
        parts.append(f"< {bound:g} <= {label}")
    return " ".join(parts) + " (signed rho; negative rho falls in the lowest band)"


def agreement_label(rho: float, thresholds: Sequence[tuple[float, str]] = AGREEMENT_THRESHOLDS) -> str:
    """The band label of a correlation ('' for NaN)."""
    thresholds = _checked(thresholds)
    if not np.isfinite(rho):
        return ""
    for bound, label in sorted(thresholds, key=lambda t: -t[0]):
        if rho >= bound:
            return label
    return sorted(thresholds, key=lambda t: t[0])[0][1]


def agreement_matrix(
    data: pd.DataFrame,
    *,
    raters: Sequence[str] | None = None,
    item: str | Sequence[str] = "item_id",
    judge: str = "judge",
    value: str = "score",
    method: CorrelationMethod = "spearman",
    thresholds: Sequence[tuple[float, str]] = AGREEMENT_THRESHOLDS,
    by: By = None,
    aggregate: Aggregate = None,
    n_resamples: int = DEFAULT_RESAMPLES, ci_level: float = 0.95, seed: Seed = 0,
) -> pd.DataFrame:
    """One row per pair of raters: rho on the items both scored, p-value, bootstrap CI, n and band label.

    ``data`` is long (item, judge, value); a judgments table is paired on item x criterion x side
    with only status "ok" rows. ``raters``: the judges to pair (default: every judge but reference labels
    -- "gold", "human" -- and aggregates, when those are all model judges or all human annotators; pass
    them to include a reference). Use :func:`agreement_matrix_wide` for the square matrix. ``by``: one
    block of rows per group (``by="criterion"``); a table with several criteria, conditions or repeats
    needs it (or a filter). A judge with several scored rows for one key is an error unless ``aggregate``
    ("mean", "median", "first") merges them.
    """
    check_aggregate(aggregate)
    if not isinstance(data, pd.DataFrame):
        raise StatsInputError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    if by is not None:
        chosen, left_out = choose_raters(data, judge, raters, "agreement_matrix")
        frame = per_group(lambda part: agreement_matrix(
            part, raters=chosen, item=item, judge=judge, value=value, method=method, thresholds=thresholds,
            aggregate=aggregate, n_resamples=n_resamples, ci_level=ci_level, seed=seed), data, by, rows_of=chosen,
            rater=judge)
        return with_note(frame, left_out)
    # a judgments table is paired on item x criterion x side; another item key (e.g. item_id and criterion:
    # several criteria pooled on purpose) reads the table as a long frame
    table = is_judgments_table(data) and judge == "judge" and item == "item_id"
    if not table:
        keys = [item] if isinstance(item, str) else list(item)
        for col in [*keys, judge, value]:
            if col not in data.columns:
                raise StatsInputError(f"column {col!r} is not in the data frame (its columns: {list(data.columns)})")
    if judge not in data.columns:
        raise StatsInputError(f"column {judge!r} is not in the data frame (its columns: {list(data.columns)})")
    if raters is None:
        names, left_out = choose_raters(data, judge, None, "agreement_matrix")
        names = sorted(map(str, names))
    else:
        names, left_out = list(raters), ""
        if len(names) < 2:
            raise StatsInputError(f"agreement_matrix needs at least 2 judges, got {names}")
        known = distinct_text(data[judge])
        unknown = [name for name in names if name not in known]
        if unknown:
            raise StatsInputError(f"judge(s) {unknown} have no rows in the data; its judges: {sorted(known)}")
    check_scored_judges(data, names, judge)
    if not table:  # a long frame: one design cell over all the named raters' rows (rule 1)
        check_design(rows_read(data[data[judge].isin(names)], value), rater=judge, aggregate=aggregate,
                     ignore=(*keys, judge), statistic="agreement_matrix")
    bands = describe_thresholds(thresholds)
    out = []
    for a, b in combinations(names, 2):
        try:
            if table:  # resolve pairs the two judges on item x criterion x side, "ok" rows only
                res = resolve(data, {"x": a, "y": b}, table_value=value, aggregate=aggregate)
            else:
                wide, n_unscored, n_merged = _pair_long(data, keys, judge, value, a, b, aggregate)
                res = resolve(wide, {"x": a, "y": b}, n_unscored_excluded=n_unscored)
                res.aggregate, res.n_rows_merged = aggregate, n_merged
        except EmptyInputError as exc:  # one pair without shared scored items must not sink the matrix
            out.append(result_row(metric_name(method), np.nan, n=0, method=f"{method} on shared scored items",
                                  note=f"no estimate: {exc}", judge_a=a, judge_b=b, label="",
                                  label_thresholds=bands))
            continue
        row = correlation_row(res, method, n_resamples=n_resamples, ci_level=ci_level, seed=seed,
                              judge_a=a, judge_b=b)
        row["label"] = agreement_label(row["estimate"], thresholds)
        row["label_thresholds"] = bands
        out.append(row)
    return with_note(tidy_frame(out), left_out)


def agreement_matrix_wide(result: pd.DataFrame, column: str = "estimate") -> pd.DataFrame:
    """Square judge x judge matrix of one column of :func:`agreement_matrix` (diagonal 1 for estimates)."""
    names = list(dict.fromkeys([*result["judge_a"], *result["judge_b"]]))
    matrix = pd.DataFrame(np.nan if column != "label" else "", index=names, columns=names, dtype=object)
    for _, row in result.iterrows():
        matrix.loc[row["judge_a"], row["judge_b"]] = row[column]
        matrix.loc[row["judge_b"], row["judge_a"]] = row[column]
    if column == "estimate":
        for name in names:
            matrix.loc[name, name] = 1.0
        return matrix.astype(float)
    return matrix


def _pair_long(data: pd.DataFrame, keys: list[str], judge: str, value: str, a: str, b: str,
               aggregate: Aggregate) -> tuple[pd.DataFrame, int | None, int]:
    """Two judges side by side on shared keys, how many unscored rows were left out and how many merged.

    Only "ok" rows are used when a status column exists (else the count is None).
    """
    rows, n_unscored = drop_unscored(data[data[judge].isin([a, b])])
    n_merged = 0
    if aggregate is None:
        dup = rows.duplicated(subset=[*keys, judge], keep=False)
        if dup.any():
            raise DuplicateRatingsError(
                f"agreement_matrix needs one {value!r} per judge and {keys}: "
                f"{describe_duplicates(rows[dup], [*keys, judge])}; filter the rows or merge them with "
                "aggregate='mean' | 'median' | 'first'")
    else:
        rows, n_merged = aggregate_duplicates(rows, [*keys, judge], value, aggregate)
        rows = rows.drop(columns=MERGED_COLUMN)
    wide = rows.pivot(index=keys, columns=judge, values=value).reindex(columns=[a, b]).reset_index()
    return wide, n_unscored, n_merged
