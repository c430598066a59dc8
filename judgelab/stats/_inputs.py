"""Shared input handling: arrays or ``data=`` + column names (or judge names), NaN dropped pairwise.

Rules every public statistic follows:
- ``data`` given and a variable is a string: it names a column of ``data``; on a judgments table
  a string that is not a column names a judge, and the table is paired with :func:`pair_judges`.
- A frame with a ``status`` column contributes only rows with status "ok"; the count of
  excluded rows is reported (``n_unscored_excluded``). A frame paired by :func:`pair_judges`
  carries that count in its ``n_unscored`` column.
- Rows where any variable (or the cluster) is missing are dropped together and counted
  (``n_missing_dropped``); the statistic reports the ``n`` it actually used.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from judgelab.judgments import is_scored
from judgelab.stats.pairing import UNSCORED_COLUMN, is_judgments_table, pair_judges

__all__ = ["Resolved", "drop_unscored", "long_ratings", "ratings_matrix", "resolve"]


@dataclass
class Resolved:
    """Variables after resolution: equal-length arrays with missing rows removed."""

    values: dict[str, np.ndarray]
    cluster: np.ndarray | None
    cluster_name: str | None
    n_missing_dropped: int
    n_unscored_excluded: int | None
    labels: dict[str, np.ndarray]

    @property
    def n(self) -> int:
        return len(next(iter(self.values.values())))

    def context(self) -> dict[str, Any]:
        """The input-accounting columns every result row carries."""
        ctx: dict[str, Any] = {"n_missing_dropped": self.n_missing_dropped}
        if self.n_unscored_excluded is not None:
            ctx["n_unscored_excluded"] = self.n_unscored_excluded
        return ctx


def drop_unscored(data: pd.DataFrame) -> tuple[pd.DataFrame, int | None]:
    """Only the rows with status "ok" and how many others were excluded (None: the frame has no status)."""
    if "status" not in data.columns:
        return data, None
    ok = is_scored(data)
    return data[ok], int((~ok).sum())


def long_ratings(data: pd.DataFrame, columns: tuple[str, ...]) -> tuple[pd.DataFrame, int | None]:
    """A long ratings frame reduced to its scored rows, after checking it has the named columns."""
    data, n_unscored = drop_unscored(data)
    for col in columns:
        if col not in data.columns:
            raise ValueError(f"column {col!r} is not in the data frame")
    return data, n_unscored


def ratings_matrix(
    ratings: Any, data: pd.DataFrame | None, *, item: str, rater: str, value: str, layout: str = "items x raters",
    numeric: bool = False,
) -> tuple[np.ndarray, list[Any], int | None]:
    """The ratings of several raters as a matrix (NaN = missing), its row ids, and the unscored rows excluded.

    ``ratings``: a 2-D array, returned as given (``layout`` names its axes in messages; row ids are
    positions); else ``data``, long with item/rater/value columns, pivoted to items x raters (row ids:
    the items; unscored rows excluded and counted, None when the frame has no status). Two scored
    ratings of one item by one rater are an error, not silently collapsed.
    """
    dtype = float if numeric else object
    if ratings is not None:
        matrix = np.asarray(ratings, dtype=dtype)
        if matrix.ndim != 2:
            raise ValueError(f"ratings must be a 2-D {layout} array")
        return matrix, list(range(matrix.shape[0])), None
    if data is None:
        raise ValueError(f"give ratings ({layout}) or data= with item/rater/value columns")
    data, n_unscored = long_ratings(data, (item, rater, value))
    dup = data.duplicated(subset=[item, rater], keep=False)
    if dup.any():
        first = data.loc[dup, [item, rater]].iloc[0].to_dict()
        raise ValueError(f"{int(dup.sum())} scored rows share an {item}/{rater} pair (first {first}); one rating "
                         "per rater and item: filter to one condition, criterion and repeat, or aggregate first")
    if numeric:
        data = data.assign(**{value: pd.to_numeric(data[value], errors="coerce")})
    wide = data.pivot_table(index=item, columns=rater, values=value, aggfunc="first", dropna=False)
    return wide.to_numpy(dtype=dtype), list(wide.index), n_unscored


def resolve(
    data: pd.DataFrame | None,
    variables: Mapping[str, Any],
    *,
    cluster: Any = None,
    labels: Mapping[str, Any] | None = None,
    numeric: bool = True,
    table_value: str = "score",
    n_unscored_excluded: int | None = None,
) -> Resolved:
    """Resolve named variables (arrays or column/judge names) into aligned, missing-free arrays.

    ``labels`` are extra grouping columns (system, item ...), kept as objects and aligned too.
    ``table_value`` is the judgments-table column compared when variables name judges.
    ``n_unscored_excluded``: unscored rows the caller already left out of ``data`` (reported).
    """
    labels = dict(labels or {})
    n_unscored = n_unscored_excluded
    cluster_name = cluster if isinstance(cluster, str) else None
    if data is not None:
        if not isinstance(data, pd.DataFrame):
            raise TypeError(f"data must be a pandas DataFrame, got {type(data).__name__}")
        names = [v for v in variables.values() if v is not None]
        if is_judgments_table(data) and names and all(isinstance(v, str) and v not in data.columns for v in names):
            wanted = [cluster, *labels.values()]
            keep = [k for k in wanted if isinstance(k, str) and k in data.columns]
            keep = list(dict.fromkeys(k for k in keep if k not in ("item_id", "criterion", "side")))
            data = pair_judges(data, names, keep=keep, value=table_value)
        if "status" in data.columns:
            data, n_unscored = drop_unscored(data)
        elif UNSCORED_COLUMN in data.columns:  # a frame paired by pair_judges / pair_conditions
            n_unscored = int(data[UNSCORED_COLUMN].sum())
    arrays = {name: _column(value, data, name, numeric) for name, value in variables.items()}
    cluster_arr = None if cluster is None else _column(cluster, data, "cluster", numeric=False)
    label_arrs = {name: _column(value, data, name, numeric=False) for name, value in labels.items()}
    lengths = {name: len(a) for name, a in {**arrays, **label_arrs}.items()}
    if cluster_arr is not None:
        lengths["cluster"] = len(cluster_arr)
    if len(set(lengths.values())) > 1:
        raise ValueError(f"inputs have different lengths: {lengths}")
    missing = np.zeros(next(iter(lengths.values())), dtype=bool)
    for a in arrays.values():
        missing |= _isna(a)
    if cluster_arr is not None:
        missing |= _isna(cluster_arr)
    for a in label_arrs.values():
        missing |= _isna(a)
    keep_rows = ~missing
    return Resolved(
        values={name: a[keep_rows] for name, a in arrays.items()},
        cluster=None if cluster_arr is None else cluster_arr[keep_rows],
        cluster_name=cluster_name if cluster_arr is not None else None,
        n_missing_dropped=int(missing.sum()),
        n_unscored_excluded=n_unscored,
        labels={name: a[keep_rows] for name, a in label_arrs.items()},
    )


def _column(value: Any, data: pd.DataFrame | None, name: str, numeric: bool) -> np.ndarray:
    if isinstance(value, str):
        if data is None:
            raise ValueError(f"{name}={value!r} is a column name, but no data= frame was given")
        if value not in data.columns:
            raise ValueError(f"column {value!r} (given as {name}) is not in the data frame")
        series = data[value]
    elif value is None:
        raise ValueError(f"{name} is required")
    else:
        series = pd.Series(np.asarray(value, dtype=object) if not numeric else value)
    if series.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional")
    if not numeric:
        return series.astype(object).where(series.notna(), None).to_numpy(dtype=object)
    converted = pd.to_numeric(series, errors="coerce")
    bad = converted.isna() & series.notna()
    if bad.any():
        example = series[bad].iloc[0]
        raise ValueError(f"{name} holds non-numeric values (e.g. {example!r})")
    return converted.to_numpy(dtype="float64", na_value=np.nan)


def _isna(a: np.ndarray) -> np.ndarray:
    return np.asarray(pd.isna(a), dtype=bool)
