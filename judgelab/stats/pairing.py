"""Turn the long judgments table into side-by-side columns (one per judge, or per condition) on shared rows.

Statistics compare judges item by item, so they need the scores of two (or more) judges on
the same key (item x criterion x pairwise side). Only rows with status "ok" are used; how
many unscored rows were excluded is kept in ``frame.attrs["n_unscored_excluded"]`` so every
statistic can report it.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

UNSCORED_ATTR = "n_unscored_excluded"
JUDGMENTS_MARKER_COLUMNS: frozenset[str] = frozenset({"item_id", "judge", "criterion", "status"})
DEFAULT_KEYS: tuple[str, ...] = ("item_id", "criterion", "side")
_NA_KEY = "\x00NA"  # stands in for a missing key value so that merges match NA with NA


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

    ``criterion`` / ``condition`` filter the table first. ``keep`` carries extra columns (e.g. a
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
    ok = rows["status"] == "ok"
    n_unscored = int((~ok).sum())
    keys = list(on)
    scored = _fill_keys(rows[ok], keys)
    merged = _fill_keys(rows, keys)[keys + list(keep)].drop_duplicates(subset=keys, keep="first")
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
    for key in keys:
        merged[key] = merged[key].where(merged[key] != _NA_KEY, None)
    merged = merged.reset_index(drop=True)
    merged.attrs[UNSCORED_ATTR] = n_unscored
    return merged


def _fill_keys(rows: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    rows = rows.copy()
    for key in keys:
        rows[key] = rows[key].astype(object).where(rows[key].notna(), _NA_KEY)
    return rows
