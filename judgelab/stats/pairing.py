"""Turn the long judgments table into side-by-side columns (one per judge, or per condition) on shared rows.

Statistics compare judges item by item, so they need the scores of two (or more) judges on
the same key (item x criterion x pairwise side). Only rows with status "ok" are compared; the
paired frame says, in its ``n_unscored`` column, how many unscored rows each key had, so every
statistic computed on it can report how many rows it excluded (the column's sum).

One value per key: two scored rows of one judge for one key (both orders, several repeats) are a
:class:`DuplicateRatingsError` naming the keys, unless ``aggregate=`` ("mean", "median", "first")
says how to merge them; the merged rows are counted per key in the ``n_rows_merged`` column.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import pandas as pd

from judgelab.errors import JudgelabError
from judgelab.judgments import distinct_text, is_scored

__all__ = ["AGGREGATES", "DEFAULT_KEYS", "JUDGMENTS_MARKER_COLUMNS", "MERGED_COLUMN", "UNSCORED_COLUMN", "Aggregate",
           "DuplicateRatingsError", "EmptyInputError", "StatsInputError", "aggregate_duplicates", "check_aggregate",
           "describe_duplicates", "duplicate_fix", "is_judgments_table", "pair_conditions", "pair_judges"]

Aggregate = Literal["mean", "median", "first"] | None
AGGREGATES: tuple[str, ...] = ("mean", "median", "first")
UNSCORED_COLUMN = "n_unscored"  # per key: the unscored rows of the paired judges (or conditions)
MERGED_COLUMN = "n_rows_merged"  # per key: scored rows merged away by ``aggregate`` (present only when asked)
# columns that tell duplicate ratings apart in a judgments table, named in the error message
_DISTINGUISHING = ("criterion", "condition", "repeat", "run_id", "side", "rubric")


class StatsInputError(JudgelabError, ValueError):
    """Input a statistic cannot use as given (unknown column or judge, no scored rows ...); says what to change."""


class EmptyInputError(StatsInputError):
    """Nothing left to compute on: no rows, only unscored rows, or no complete pair."""


class DuplicateRatingsError(StatsInputError):
    """Several scored ratings for one key (one rater's rating of one item), with no ``aggregate`` asked for."""


class AmbiguousQuestionError(StatsInputError):
    """The arguments leave the question open (several criteria, conditions, raters ...); the message names the fix
    (the rule: :mod:`judgelab.stats.question`)."""


def check_aggregate(aggregate: Aggregate) -> None:
    """Raise for an unknown ``aggregate``."""
    if aggregate is not None and aggregate not in AGGREGATES:
        raise StatsInputError(f"aggregate must be None, 'mean', 'median' or 'first', got {aggregate!r}")


def describe_duplicates(rows: pd.DataFrame, keys: Sequence[str]) -> str:
    """'3 keys have several scored rows (7 rows), e.g. (i1, gpt) x 2, ...; they differ in condition (...)'.

    ``rows``: only the duplicated rows.
    """
    keys = list(keys)
    counts = rows.groupby(keys, dropna=False, sort=False).size()
    shown = [f"({', '.join(map(str, k if isinstance(k, tuple) else (k,)))}) x {int(c)}"
             for k, c in counts.iloc[:3].items()]
    text = (f"{len(counts)} ({', '.join(keys)}) key(s) have several scored rows ({len(rows)} rows), e.g. "
            + "; ".join(shown))
    varying = []
    for col in _DISTINGUISHING:
        if col in rows.columns and col not in keys:
            per_key = rows.groupby(keys, dropna=False, sort=False)[col].nunique(dropna=False)
            if (per_key > 1).any():
                values = list(pd.unique(rows[col].astype(object)))[:4]
                varying.append(f"{col} ({', '.join(map(str, values))})")
    if varying:
        text += f"; they differ in {' and '.join(varying)}"
    return text


def duplicate_fix(rows: pd.DataFrame, keys: Sequence[str]) -> str:
    """The fix for duplicated rows, by what tells them apart: copies from separate loads or runs (only ``run_id``
    differs) are combined with :func:`judgelab.judgments.combine`; otherwise filter or merge.

    ``rows``: only the duplicated rows.
    """
    grouped = rows.groupby(list(keys), dropna=False, sort=False)
    others = [c for c in _DISTINGUISHING if c in rows.columns and c not in keys and c not in ("run_id", "rubric")]
    only_runs = "run_id" in rows.columns and bool((grouped["run_id"].nunique(dropna=False) > 1).all()) and \
        not any(bool((grouped[c].nunique(dropna=False) > 1).any()) for c in others)
    values = [c for c in ("status", "score", "winner", "verdict") if c in rows.columns]
    same_values = bool((grouped[values].nunique(dropna=False) <= 1).all().all())
    if only_runs and not same_values:
        return ("the runs rate differently under one judge name: give each run's rater a distinct judge name "
                "(table.assign(judge=...)), or merge them with aggregate='mean' | 'median' | 'first'")
    if only_runs:
        return ("they are copies from separate loads or runs (only run_id differs): put the tables together with "
                "judgelab.judgments.combine([...]), which keeps one copy of identical rows, or give different "
                "raters distinct judge names")
    orders = "condition" in rows.columns and set(rows["condition"].dropna()) >= {"original", "swapped"}
    both = " (two pairwise judges over both orders: stats.compare_pairwise_judges)" if orders else ""
    return ("filter the table to one condition and repeat" + both +
            ", or merge them with aggregate='mean' | 'median' | 'first'")


def aggregate_duplicates(rows: pd.DataFrame, keys: Sequence[str], value: str,
                         aggregate: Aggregate) -> tuple[pd.DataFrame, int]:
    """One row per key: ``value`` merged by ``aggregate`` over the key's rows; and how many rows were merged away.

    "mean" and "median" need numeric values; "first" keeps the first row in table order. The
    result has the key columns, ``value`` and ``n_rows_merged`` (rows per key - 1).
    """
    check_aggregate(aggregate)
    keys = list(keys)
    values = rows[value]
    if aggregate in ("mean", "median"):
        numeric = pd.to_numeric(values, errors="coerce")
        if (numeric.isna() & values.notna()).any():
            example = values[numeric.isna() & values.notna()].iloc[0]
            raise StatsInputError(f"aggregate={aggregate!r} needs numeric {value!r} values (found {example!r}); "
                                  "use aggregate='first' or filter the rows")
        values = numeric.astype(float)
    frame = rows[keys].assign(**{value: values.to_numpy()})
    grouped = frame.groupby(keys, dropna=False, sort=False)
    merged = grouped[value].agg(aggregate).rename(value).to_frame()
    merged[MERGED_COLUMN] = grouped.size() - 1
    return merged.reset_index(), int(merged[MERGED_COLUMN].sum())
JUDGMENTS_MARKER_COLUMNS: frozenset[str] = frozenset({"item_id", "judge", "criterion", "status"})
DEFAULT_KEYS: tuple[str, ...] = ("item_id", "criterion", "side")


def is_judgments_table(data: pd.DataFrame) -> bool:
    """Whether ``data`` has the identifying columns of a judgments table."""
    return JUDGMENTS_MARKER_COLUMNS.issubset(data.columns)


def pair_judges(
    table: pd.DataFrame,
    judges: Sequence[str],
    *,
    value: str = "score",
    criterion: str | Sequence[str] | None = None,
    condition: str | Sequence[str] | None = None,
    on: Sequence[str] = DEFAULT_KEYS,
    keep: Sequence[str] = (),
    aggregate: Aggregate = None,
) -> pd.DataFrame:
    """One row per key in ``on``, one column per judge holding ``value`` (NaN where absent or unscored).

    A key's unscored rows are counted in the ``n_unscored`` column. ``criterion`` / ``condition``
    filter the table first. A missing key value (e.g. ``side`` of a whole-answer row) matches a
    missing one. ``keep`` carries extra columns (e.g. a
    document id to cluster on) from the table, taking the first value per key. Raises
    :class:`StatsInputError` when a judge is absent, and :class:`DuplicateRatingsError` when a judge
    has several scored rows for one key, unless ``aggregate`` ("mean", "median", "first") merges
    them (the ``n_rows_merged`` column counts the rows merged away per key).
    """
    filters = {"criterion": criterion, "condition": condition}
    return _side_by_side(table, "judge", judges, value=value, filters=filters, on=on, keep=keep,
                         aggregate=aggregate)


def pair_conditions(
    table: pd.DataFrame,
    conditions: Sequence[str],
    *,
    judge: str,
    value: str = "winner",
    criterion: str | Sequence[str] | None = None,
    on: Sequence[str] = DEFAULT_KEYS,
    keep: Sequence[str] = (),
    aggregate: Aggregate = None,
) -> pd.DataFrame:
    """One judge's ``value`` under several conditions side by side (e.g. "original" vs "swapped").

    The columns are named after the conditions, ready for :func:`judgelab.stats.flip_rate`.
    """
    filters = {"criterion": criterion, "judge": judge}
    return _side_by_side(table, "condition", conditions, value=value, filters=filters, on=on, keep=keep,
                         aggregate=aggregate)


def _side_by_side(
    table: pd.DataFrame,
    across: str,
    names: Sequence[str],
    *,
    value: str,
    filters: dict[str, str | Sequence[str] | None],
    on: Sequence[str],
    keep: Sequence[str],
    aggregate: Aggregate = None,
) -> pd.DataFrame:
    check_aggregate(aggregate)
    if not is_judgments_table(table):
        lacking = sorted(JUDGMENTS_MARKER_COLUMNS - set(table.columns))
        raise StatsInputError(f"pairing needs a judgments table; this frame has no {', '.join(lacking)} column(s)")
    for col in [value, *on, *keep]:
        if col not in table.columns:
            raise StatsInputError(f"judgments table has no column {col!r}")
    rows = table
    for col, wanted in filters.items():
        if wanted is not None:
            rows = rows[rows[col].isin([wanted] if isinstance(wanted, str) else list(wanted))]
    present = distinct_text(rows[across])
    missing = [n for n in names if n not in present]
    if missing:
        known = sorted(present)
        shown = ", ".join(map(repr, known[:12])) + (f" ... ({len(known)} in all)" if len(known) > 12 else "")
        raise StatsInputError(f"{across}(s) {missing} have no rows in the judgments table (after filters); "
                              f"its {across}s: {shown or 'none'}")
    rows = rows[rows[across].isin(list(names))]
    ok = is_scored(rows)
    keys = list(on)
    merged = rows[keys + list(keep)].drop_duplicates(subset=keys, keep="first")
    unscored = rows.loc[~ok, keys].value_counts(dropna=False).rename(UNSCORED_COLUMN).reset_index()
    scored = rows[ok]
    merged_counts = []
    for name in names:
        part = scored[scored[across] == name]
        if value == "score":
            part = part.assign(score=pd.to_numeric(part["score"], errors="coerce"))
        if aggregate is None:
            dup = part.duplicated(subset=keys, keep=False)
            if dup.any():
                raise DuplicateRatingsError(
                    f"{across} {name!r} needs one scored row per key: {describe_duplicates(part[dup], keys)}; "
                    f"{duplicate_fix(part[dup], keys)}")
            values = part[keys].assign(**{name: part[value].to_numpy()})
        else:
            values, _ = aggregate_duplicates(part, keys, value, aggregate)
            merged_counts.append(values[[*keys, MERGED_COLUMN]])
            values = values.drop(columns=MERGED_COLUMN).rename(columns={value: name})
        merged = merged.merge(values, on=keys, how="left")
    merged = merged.merge(unscored, on=keys, how="left")
    merged[UNSCORED_COLUMN] = merged[UNSCORED_COLUMN].fillna(0).astype("int64")
    if aggregate is not None:
        per_key = pd.concat(merged_counts).groupby(keys, dropna=False, sort=False)[MERGED_COLUMN].sum()
        merged = merged.merge(per_key.reset_index(), on=keys, how="left")
        merged[MERGED_COLUMN] = merged[MERGED_COLUMN].fillna(0).astype("int64")
    for key in keys:  # missing key values as None, whatever the table's dtype
        merged[key] = merged[key].astype(object).where(merged[key].notna(), None)
    return merged.reset_index(drop=True)
