"""Turn the long judgments table into side-by-side columns (one per judge, or per condition) on shared rows.

Statistics compare judges item by item, so they need the scores of two (or more) judges on
the same key (item x criterion x pairwise side). Only rows with status "ok" are compared; the
paired frame says, in its ``n_unscored`` column, how many unscored rows each key had, so every
statistic computed on it can report how many rows it excluded (the column's sum).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from judgelab.judgments import is_scored

__all__ = ["DEFAULT_KEYS", "JUDGMENTS_MARKER_COLUMNS", "UNSCORED_COLUMN", "is_judgments_table", "pair_conditions",
           "pair_judges"]

UNSCORED_COLUMN = "n_unscored"  # per key: the unscored rows of the paired judges (or conditions)
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
) -> pd.DataFrame:
    """One row per key in ``on``, one column per judge holding ``value`` (NaN where absent or unscored).

    A key's unscored rows are counted in the ``n_unscored`` column. ``criterion`` / ``condition``
    filter the table first. A missing key value (e.g. ``side`` of a whole-answer row) matches a
    missing one. ``keep`` carries extra columns (e.g. a
    document id to cluster on) from the table, taking the first value per key. Raises ValueError
    when a judge is absent or has several scored rows for one key (filter by condition/repeat first).
    """
    filters = {"criterion": criterion, "condition": condition}
    return _side_by_side(table, "judge", judges, value=value, filters=filters, on=on, keep=keep)


def pair_conditions(
    table: pd.DataFrame,
    conditions: Sequence[str],
    *,
    judge: str,
    value: str = "winner",
    criterion: str | Sequence[str] | None = None,
    on: Sequence[str] = DEFAULT_KEYS,
    keep: Sequence[str] = (),
) -> pd.DataFrame:
    """One judge's ``value`` under several conditions side by side (e.g. "original" vs "swapped").

    The columns are named after the conditions, ready for :func:`judgelab.stats.flip_rate`.
    """
    filters = {"criterion": criterion, "judge": judge}
    return _side_by_side(table, "condition", conditions, value=value, filters=filters, on=on, keep=keep)


def _side_by_side(
    table: pd.DataFrame,
    across: str,
    names: Sequence[str],
    *,
    value: str,
    filters: dict[str, str | Sequence[str] | None],
    on: Sequence[str],
    keep: Sequence[str],
) -> pd.DataFrame:
    if not is_judgments_table(table):
        raise ValueError(f"pairing needs a judgments table with columns {sorted(JUDGMENTS_MARKER_COLUMNS)}")
    for col in [value, *on, *keep]:
        if col not in table.columns:
            raise ValueError(f"judgments table has no column {col!r}")
    rows = table
    for col, wanted in filters.items():
        if wanted is not None:
            rows = rows[rows[col].isin([wanted] if isinstance(wanted, str) else list(wanted))]
    rows = rows[rows[across].isin(list(names))]
    present = set(rows[across].dropna().astype(str))
    missing = [n for n in names if n not in present]
    if missing:
        raise ValueError(f"{across}(s) {missing} have no rows in the judgments table (after filters)")
    ok = is_scored(rows)
    keys = list(on)
    merged = rows[keys + list(keep)].drop_duplicates(subset=keys, keep="first")
    unscored = rows.loc[~ok, keys].value_counts(dropna=False).rename(UNSCORED_COLUMN).reset_index()
    scored = rows[ok]
    for name in names:
        part = scored[scored[across] == name]
        dup = part.duplicated(subset=keys, keep=False)
        if dup.any():
            first = part.loc[dup, keys].iloc[0].to_dict()
            raise ValueError(
                f"{across} {name!r} has {int(dup.sum())} scored rows sharing a key {keys} (first {first}); "
                "filter the table to one judge, condition and repeat first"
            )
        values = pd.to_numeric(part[value], errors="coerce") if value == "score" else part[value]
        merged = merged.merge(part[keys].assign(**{name: values.to_numpy()}), on=keys, how="left")
    merged = merged.merge(unscored, on=keys, how="left")
    merged[UNSCORED_COLUMN] = merged[UNSCORED_COLUMN].fillna(0).astype("int64")
    for key in keys:  # missing key values as None, whatever the table's dtype
        merged[key] = merged[key].astype(object).where(merged[key].notna(), None)
    return merged.reset_index(drop=True)
