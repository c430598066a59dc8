"""Shared input handling: arrays or ``data=`` + column names (or judge names), NaN dropped pairwise.

The question a statistic answers must be fully determined by its arguments, or the call raises one
sentence naming the ambiguity and the fix (:mod:`judgelab.stats.question`, enforced here):

- on a judgments table, the rows read hold one criterion, side, condition, repeat, rubric and rubric
  version (per rater for the last four), unless ``by=`` splits on the column (one result row per group,
  the group columns first) or ``aggregate=`` merges a rater's rows of one key; variables that are columns
  of a judgments table need one judge too;
- a statistic of several raters takes ``raters=``; by default it uses every rater but reference labels
  ("gold", "human") and aggregates ("panel:...", "majority"), only when those are all human annotators or
  all model judges, and names the raters it used (``raters`` column);
- a metric whose inputs are absent is NaN with a note saying what is missing, never a number;
- when the compared raters have no value in the column read (``value="score"`` by default), the error
  names the column that holds them (``value='verdict'``); an unknown column is named with the user's columns.

Rules every public statistic follows besides:
- ``data`` given and a variable is a string: it names a column of ``data``; on a judgments table
  a string that is not a column names a judge, and the table is paired with :func:`pair_judges`.
- A frame with a ``status`` column contributes only rows with status "ok"; the count of
  excluded rows is reported (``n_unscored_excluded``). A frame paired by :func:`pair_judges`
  carries that count in its ``n_unscored`` column.
- Rows where any variable (or the cluster) is missing are dropped together and counted
  (``n_missing_dropped``); the statistic reports the ``n`` it actually used.
- Nothing is computed on nothing: an empty frame, a frame whose rows are all unscored, a table
  without a ``status`` column, an unknown column or judge, or inputs that leave no complete row
  raise :class:`StatsInputError` with one sentence naming the cause.
- Two scored ratings for one key (one rater's rating of one item) raise
  :class:`DuplicateRatingsError` naming the keys, unless ``aggregate=`` says how to merge them
  ("mean", "median" or "first"); the merged rows are counted (``n_rows_merged``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from judgelab.judgments import VALUE_COLUMNS, distinct_text, is_scored
from judgelab.stats.pairing import (
    MERGED_COLUMN,
    UNSCORED_COLUMN,
    Aggregate,
    DuplicateRatingsError,
    EmptyInputError,
    StatsInputError,
    aggregate_duplicates,
    check_aggregate,
    describe_duplicates,
    is_judgments_table,
    pair_judges,
)
from judgelab.stats.question import (
    DESIGN_COLUMNS,
    AmbiguousQuestionError,
    check_design,
    check_value_column,
    default_raters,
    rows_read,
)

__all__ = ["Aggregate", "AmbiguousQuestionError", "By", "DuplicateRatingsError", "EmptyInputError", "Layout",
           "RatingsMatrix", "Resolved", "StatsInputError", "check_aggregate", "check_scored_judges", "drop_unscored",
           "by_columns", "choose_raters", "judge_names", "long_ratings", "merge_note", "names_judges", "per_group", "ratings_matrix", "resolve",
           "status_summary"]

By = str | Sequence[str] | None

Layout = Literal["items x raters", "raters x items"]


@dataclass
class Resolved:
    """Variables after resolution: equal-length arrays with missing rows removed."""

    values: dict[str, np.ndarray]
    cluster: np.ndarray | None
    cluster_name: str | None
    n_missing_dropped: int
    n_unscored_excluded: int | None
    labels: dict[str, np.ndarray]
    aggregate: str | None = None
    n_rows_merged: int = 0

    @property
    def n(self) -> int:
        return len(next(iter(self.values.values())))

    def context(self) -> dict[str, Any]:
        """The input-accounting columns every result row carries."""
        ctx: dict[str, Any] = {"n_missing_dropped": self.n_missing_dropped}
        if self.n_unscored_excluded is not None:
            ctx["n_unscored_excluded"] = self.n_unscored_excluded
        if self.aggregate is not None:
            ctx["n_rows_merged"] = self.n_rows_merged
        return ctx

    @property
    def note(self) -> str:
        """Says how duplicate ratings were merged ('' when no ``aggregate`` was asked for)."""
        return merge_note(self.aggregate, self.n_rows_merged)


def merge_note(aggregate: str | None, n_rows_merged: int) -> str:
    """The note of a statistic computed on aggregated ratings."""
    if aggregate is None:
        return ""
    return f"aggregate={aggregate!r}: {n_rows_merged} duplicate scored row(s) merged into their key's rating"


def status_summary(data: pd.DataFrame) -> str:
    """'3 parse_error, 2 with no status' -- the statuses of rows that are not "ok"."""
    status = data["status"].astype(object)
    counts = status[~is_scored(data)].fillna("<no status>").value_counts()
    return ", ".join(f"{int(c)} {s}" for s, c in counts.items())


def drop_unscored(data: pd.DataFrame) -> tuple[pd.DataFrame, int | None]:
    """Only the rows with status "ok" and how many others were excluded (None: the frame has no status).

    Raises :class:`EmptyInputError` when the frame has rows but none of them is scored.
    """
    if "status" not in data.columns:
        return data, None
    ok = is_scored(data)
    if len(data) and not ok.any():
        raise EmptyInputError(f"none of the {len(data)} rows is scored (status 'ok'): {status_summary(data)}; "
                              "a table built without statuses needs status='ok' on its scored rows")
    return data[ok], int((~ok).sum())


def _check_frame(data: Any) -> pd.DataFrame:
    if not isinstance(data, pd.DataFrame):
        raise StatsInputError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    if data.empty:
        raise EmptyInputError("the data frame has no rows")
    return data


def _unknown_column(col: str, data: pd.DataFrame, given_as: str = "") -> StatsInputError:
    cols = [str(c) for c in data.columns]
    shown = ", ".join(cols[:12]) + (f" ... ({len(cols)} columns)" if len(cols) > 12 else "")
    role = f" (given as {given_as})" if given_as else ""
    hint = ""
    if "judge" in data.columns and col in distinct_text(data["judge"]):
        hint = f"; {col!r} is a judge of this frame, which needs the judgments-table columns item_id, judge, " \
               "criterion and status to be paired by judge"
    return StatsInputError(f"column {col!r}{role} is not in the data frame (its columns: {shown}){hint}")


def long_ratings(data: pd.DataFrame, columns: tuple[str, ...]) -> tuple[pd.DataFrame, int | None]:
    """A long ratings frame reduced to its scored rows, after checking it has the named columns."""
    data = _check_frame(data)
    for col in columns:
        if col not in data.columns:
            raise _unknown_column(col, data)
    return drop_unscored(data)


@dataclass
class RatingsMatrix:
    """Several raters' ratings as an items x raters matrix (NaN = missing), and what reading them left out."""

    matrix: np.ndarray
    ids: list[Any]  # the row (item) ids
    raters: list[Any]  # the column (rater) names; positions for an array
    n_unscored: int | None  # unscored rows excluded (None: the frame has no status)
    n_merged: int  # duplicate rows merged by ``aggregate``
    note: str = ""  # raters left out by default

    def context(self, aggregate: Aggregate, *, named: bool) -> dict[str, Any]:
        """The accounting columns of a multi-rater result row (``raters`` when they have names)."""
        ctx: dict[str, Any] = {"n_raters": self.matrix.shape[1]}
        if named:
            ctx["raters"] = ", ".join(map(str, self.raters))
        if self.n_unscored is not None:
            ctx["n_unscored_excluded"] = self.n_unscored
        if aggregate is not None:
            ctx["n_rows_merged"] = self.n_merged
        return ctx


def choose_raters(data: pd.DataFrame, rater: str, raters: Sequence[Any] | None,
                  statistic: str = "this statistic") -> tuple[list[Any], str]:
    """The raters a multi-rater statistic uses (``raters``, else the default of rule 2) and the note on those
    left out; raises when a named rater has no rows."""
    if rater not in data.columns:
        raise _unknown_column(rater, data, "rater")
    present = list(pd.unique(data[rater].dropna()))
    if raters is None:
        return default_raters(present, statistic=statistic)
    if isinstance(raters, str):
        raise StatsInputError(f"raters must be a list of {rater} names, e.g. raters=[{raters!r}, ...], not one string")
    chosen = list(dict.fromkeys(raters))
    unknown = [r for r in chosen if r not in set(present)]
    if unknown:
        shown = ", ".join(map(repr, present[:12])) + (f" ... ({len(present)} in all)" if len(present) > 12 else "")
        raise StatsInputError(f"rater(s) {unknown} have no rows in column {rater!r} (its raters: {shown})")
    if len(chosen) < 2:
        raise StatsInputError(f"{statistic} needs at least two raters; raters={chosen!r}")
    return chosen, ""


def ratings_matrix(
    ratings: Any, data: pd.DataFrame | None, *, item: str, rater: str, value: str, layout: Layout | None = None,
    numeric: bool = False, aggregate: Aggregate = None, statistic: str = "this statistic",
    raters: Sequence[Any] | None = None, split: Sequence[str] = (),
) -> RatingsMatrix:
    """The ratings of several raters as an items x raters matrix (NaN = missing) with its row ids and raters.

    ``ratings``: a 2-D array, items x raters (``layout="raters x items"`` transposes it, the krippendorff
    package's layout). With ``layout=None`` an array with more columns than rows is refused, because
    it most likely holds raters x items and would silently give another number. Else ``data``, long with
    item/rater/value columns, pivoted (row ids: the items; unscored rows excluded and counted, None
    when the frame has no status). ``raters``: which raters to use (default: rule 2 of
    :mod:`judgelab.stats.question`); the rows read must hold one design cell (rule 1; ``split``: the
    columns a ``by=`` already split on). Two scored ratings of one item by one rater raise
    :class:`DuplicateRatingsError` unless ``aggregate`` merges them. ``numeric``: every rating must be
    a number (a non-numeric one is an error, never turned into a missing rating).
    """
    if layout not in (None, "items x raters", "raters x items"):
        raise StatsInputError(f"layout must be 'items x raters' or 'raters x items', got {layout!r}")
    if ratings is not None:
        if data is not None:
            raise StatsInputError("give either a ratings array or data=, not both")
        if raters is not None:
            raise StatsInputError("raters= names raters of data=; with a ratings array select its columns instead")
        matrix = _array_matrix(ratings, layout, numeric)
        return RatingsMatrix(matrix, list(range(matrix.shape[0])), list(range(matrix.shape[1])), None, 0)
    if data is None:
        raise StatsInputError("give a ratings array (items x raters) or data= with item/rater/value columns")
    if layout is not None:
        raise StatsInputError("layout= describes a ratings array; long data= is always pivoted to items x raters")
    data = _check_frame(data)
    table = is_judgments_table(data)
    for col in (item, rater):
        if col not in data.columns:
            raise _unknown_column(col, data, "item" if col == item else "rater")
    if data[rater].isna().any():
        raise StatsInputError(f"column {rater!r} has {int(data[rater].isna().sum())} missing values; every rating "
                              "needs a rater")
    chosen, note = choose_raters(data, rater, raters, statistic)
    data = data[data[rater].isin(chosen)]
    if table:
        check_value_column(data, value, who=_who(rater, chosen), numeric=numeric)
    elif value not in data.columns:
        raise _unknown_column(value, data, "value")
    check_design(rows_read(data, value), rater=rater, split=split, aggregate=aggregate, ignore=(item, rater),
                 statistic=statistic)
    data, n_unscored = drop_unscored(data)
    if numeric:
        data = data.assign(**{value: _numeric_series(data[value], value)})
    if aggregate is None:
        dup = data.duplicated(subset=[item, rater], keep=False)
        if dup.any():
            raise DuplicateRatingsError(
                f"{statistic} needs one rating per {item} and {rater}: "
                f"{describe_duplicates(data[dup], [item, rater])}; compute one statistic per group (by=...), "
                "filter the rows, or merge them with aggregate='mean' | 'median' | 'first'")
        n_merged = 0
    else:
        data, n_merged = aggregate_duplicates(data, [item, rater], value, aggregate)
    codes, items = _factorize(data[item])
    rater_codes, found = _factorize(data[rater])
    if (codes < 0).any():
        raise StatsInputError(f"column {item!r} has {int((codes < 0).sum())} missing values; every rating needs an "
                              "item")
    matrix = np.full((len(items), len(found)), np.nan, dtype=float if numeric else object)
    matrix[codes, rater_codes] = data[value].to_numpy(dtype=float if numeric else object)
    if not numeric:
        matrix[pd.isna(matrix)] = np.nan
    return RatingsMatrix(matrix, list(items), list(found), n_unscored, n_merged, note)


def _who(rater: str, names: Sequence[Any]) -> str:
    shown = ", ".join(repr(n) if isinstance(n, str) else str(n) for n in list(names)[:4])
    word = {"judge": "judges"}.get(rater, f"{rater}s") if len(names) > 1 else rater
    return f"{word} {shown}" + (", ..." if len(names) > 4 else "")


def _factorize(values: pd.Series) -> tuple[np.ndarray, Any]:
    """Integer codes (-1 = missing) over the sorted distinct values (first-seen order if unorderable)."""
    try:
        return pd.factorize(values, sort=True)
    except TypeError:
        return pd.factorize(values)


def _rows(ratings: Any, layout: Layout | None) -> int:
    shape = np.shape(ratings)
    return shape[1] if layout == "raters x items" and len(shape) == 2 else shape[0] if shape else 0


def _array_matrix(ratings: Any, layout: Layout | None, numeric: bool) -> np.ndarray:
    matrix = np.asarray(ratings, dtype=object)
    if matrix.ndim != 2:
        raise StatsInputError(f"ratings must be a 2-D array (items x raters), got {matrix.ndim} dimension(s)")
    if layout == "raters x items":
        matrix = matrix.T
    elif layout is None and matrix.shape[1] > matrix.shape[0]:
        raise StatsInputError(
            f"ratings has {matrix.shape[0]} rows and {matrix.shape[1]} columns: read as items x raters that is "
            f"{matrix.shape[1]} raters of {matrix.shape[0]} items, which looks like a raters x items array "
            "(the krippendorff package's layout); pass layout='raters x items', or layout='items x raters' if "
            "there really are more raters than items")
    if matrix.size == 0:
        raise EmptyInputError("the ratings array is empty")
    if numeric:
        flat = pd.Series(matrix.ravel())
        return _numeric_series(flat, "ratings").to_numpy(dtype=float).reshape(matrix.shape)
    out = matrix.copy()
    out[pd.isna(out)] = np.nan
    return out


def _numeric_series(series: pd.Series, name: str) -> pd.Series:
    """``series`` as floats; a value that is present but not a number is an error, never a missing value."""
    if pd.api.types.is_bool_dtype(series.dtype):
        series = series.astype(float)
    converted = pd.to_numeric(series, errors="coerce")
    bad = converted.isna() & series.notna()
    if bad.any():
        example = series[bad].iloc[0]
        raise StatsInputError(f"{name} holds {int(bad.sum())} non-numeric value(s) (e.g. {example!r}); "
                              "this statistic needs numbers")
    return converted.astype(float)


def resolve(
    data: pd.DataFrame | None,
    variables: Mapping[str, Any],
    *,
    cluster: Any = None,
    labels: Mapping[str, Any] | None = None,
    numeric: bool = True,
    table_value: str = "score",
    n_unscored_excluded: int | None = None,
    aggregate: Aggregate = None,
    split: Sequence[str] = (),
    statistic: str = "this statistic",
) -> Resolved:
    """Resolve named variables (arrays or column/judge names) into aligned, missing-free arrays.

    ``labels`` are extra grouping columns (system, item ...), kept as objects and aligned too; a label
    naming a design column (``criterion="criterion"``) splits on it. ``table_value`` is the judgments-table
    column compared when variables name judges. ``n_unscored_excluded``: unscored rows the caller already
    left out of ``data`` (reported). ``aggregate``: how to merge a judge's several scored rows of one key when
    variables name judges. ``split``: design columns a ``by=`` already split on. On a judgments table the
    question must be determined (module docstring). Raises :class:`StatsInputError` (or
    :class:`EmptyInputError`, :class:`AmbiguousQuestionError`) instead of returning nothing.
    """
    labels = dict(labels or {})
    n_unscored = n_unscored_excluded
    n_merged = 0
    cluster_name = cluster if isinstance(cluster, str) else None
    paired = False
    if data is not None:
        data = _check_frame(data)
        names = [v for v in variables.values() if v is not None]
        judge_names = names_judges(data, variables)
        if judge_names and not is_judgments_table(data):
            _explain_not_a_table(data, names)
        for role, column in [("cluster", cluster), *labels.items()]:  # named in the user's columns, before pairing
            if isinstance(column, str) and column not in data.columns:
                raise _unknown_column(column, data, role)
        split = [*split, *(v for v in labels.values() if isinstance(v, str) and v in DESIGN_COLUMNS)]
        if judge_names:
            _check_known_judges(data, names)
            wanted = [cluster, *labels.values()]
            keep = [k for k in wanted if isinstance(k, str) and k in data.columns]
            keep = list(dict.fromkeys(k for k in keep if k not in ("item_id", "criterion", "side")))
            # only the named judges' rows and the columns read: a judgments table has ~35 columns
            columns = [c for c in dict.fromkeys(("item_id", "criterion", "side", "judge", "status", "run_id", *VALUE_COLUMNS,
                                                 table_value, *DESIGN_COLUMNS, *keep)) if c in data.columns]
            rows = data.loc[data["judge"].isin(names).to_numpy(dtype=bool), columns]
            check_scored_judges(rows, names)
            check_value_column(rows, table_value, who=_who("judge", names), numeric=numeric)
            check_design(rows_read(rows, table_value), rater="judge", split=split, aggregate=aggregate,
                         statistic=statistic)
            data = pair_judges(rows, names, keep=keep, value=table_value, aggregate=aggregate)
            paired = True
        elif aggregate is not None:
            raise StatsInputError("aggregate= merges a judge's duplicate rows; it applies when the variables name "
                                  "judges of a judgments table, not columns")
        elif is_judgments_table(data):  # columns of a judgments table: the rows must be one judge's one design cell
            read = next((v for v in names if isinstance(v, str)), None)
            check_design(rows_read(data, read), rater=None, split=split, statistic=statistic)
        if "status" in data.columns:
            data, n_unscored = drop_unscored(data)
        elif UNSCORED_COLUMN in data.columns:  # a frame paired by pair_judges / pair_conditions
            n_unscored = int(data[UNSCORED_COLUMN].sum())
        if MERGED_COLUMN in data.columns:
            n_merged = int(data[MERGED_COLUMN].sum())
    arrays = {name: _column(value, data, name, numeric) for name, value in variables.items()}
    cluster_arr = None if cluster is None else _column(cluster, data, "cluster", numeric=False)
    label_arrs = {name: _column(value, data, name, numeric=False) for name, value in labels.items()}
    lengths = {name: len(a) for name, a in {**arrays, **label_arrs}.items()}
    if cluster_arr is not None:
        lengths["cluster"] = len(cluster_arr)
    if len(set(lengths.values())) > 1:
        raise StatsInputError(f"inputs have different lengths: {lengths}")
    missing = np.zeros(next(iter(lengths.values())), dtype=bool)
    for a in arrays.values():
        missing |= _isna(a)
    if cluster_arr is not None:
        missing |= _isna(cluster_arr)
    for a in label_arrs.values():
        missing |= _isna(a)
    keep_rows = ~missing
    if not keep_rows.any():
        raise EmptyInputError(_nothing_left(variables, len(missing), n_unscored, paired))
    return Resolved(
        values={name: a[keep_rows] for name, a in arrays.items()},
        cluster=None if cluster_arr is None else cluster_arr[keep_rows],
        cluster_name=cluster_name if cluster_arr is not None else None,
        n_missing_dropped=int(missing.sum()),
        n_unscored_excluded=n_unscored,
        labels={name: a[keep_rows] for name, a in label_arrs.items()},
        aggregate=aggregate,
        n_rows_merged=n_merged,
    )


def _check_known_judges(data: pd.DataFrame, names: Sequence[str]) -> None:
    present = distinct_text(data["judge"])
    missing = [n for n in names if n not in present]
    if missing:
        known = sorted(present)
        shown = ", ".join(map(repr, known[:12])) + (f" ... ({len(known)} in all)" if len(known) > 12 else "")
        raise StatsInputError(f"judge(s) {missing} have no rows in the judgments table; its judges: {shown or 'none'}")


def judge_names(data: pd.DataFrame | None, variables: Mapping[str, Any]) -> list[str]:
    """The judges the variables name on a judgments table ([] when they are columns or arrays)."""
    if data is None or not isinstance(data, pd.DataFrame) or not names_judges(data, variables):
        return []
    return [v for v in variables.values() if v is not None]


def _nothing_left(variables: Mapping[str, Any], n_rows: int, n_unscored: int | None, paired: bool) -> str:
    named = ", ".join(f"{k}={v!r}" if isinstance(v, str) else k for k, v in variables.items())
    if n_rows == 0:
        return f"no rows to compare ({named})"
    unit = "keys (item x criterion x side)" if paired else "rows"
    unscored = f"; {n_unscored} unscored row(s) were excluded" if n_unscored else ""
    return f"none of the {n_rows} {unit} has a value for every variable ({named}){unscored}"


def names_judges(data: pd.DataFrame | None, variables: Mapping[str, Any]) -> bool:
    """Whether the variables are names that are not columns of ``data``, i.e. judges of a table."""
    names = [v for v in variables.values() if v is not None]
    return data is not None and bool(names) and all(isinstance(v, str) and v not in data.columns for v in names)


def check_scored_judges(table: pd.DataFrame, names: Sequence[str], judge: str = "judge") -> None:
    """Raise :class:`EmptyInputError` when a named judge has rows but none of them is scored."""
    if "status" not in table.columns:
        return
    scored = is_scored(table).groupby(table[judge].astype(object)).any()
    for name in names:
        if name in scored.index and not scored[name]:
            rows = table[table[judge] == name]
            raise EmptyInputError(f"judge {name!r} has {len(rows)} rows and none is scored (status 'ok'): "
                                  f"{status_summary(rows)}; a table built without statuses needs status='ok' on "
                                  "its scored rows")


def _explain_not_a_table(data: pd.DataFrame, names: Sequence[str]) -> None:
    """Raise the one sentence that says why judge names cannot be used on this frame."""
    looks_like_table = "judge" in data.columns and "item_id" in data.columns
    if looks_like_table:
        lacking = [c for c in ("criterion", "status") if c not in data.columns]
        judges = distinct_text(data["judge"])
        unknown = [n for n in names if n not in judges]
        if not unknown:
            what = " and ".join(repr(c) for c in lacking) + (" columns" if len(lacking) > 1 else " column")
            raise StatsInputError(
                f"the frame names judges {list(names)} but has no {what}, so scored rows cannot be told "
                "from unscored ones; build it with judgelab.judgments.make_table (or judgelab.from_frame), or add "
                "the column (status 'ok' on scored rows)")
    raise _unknown_column(str(next(n for n in names if n not in data.columns)), data)


def _column(value: Any, data: pd.DataFrame | None, name: str, numeric: bool) -> np.ndarray:
    if isinstance(value, str):
        if data is None:
            raise StatsInputError(f"{name}={value!r} is a column name, but no data= frame was given")
        if value not in data.columns:
            raise _unknown_column(value, data, name)
        series = data[value]
    elif value is None:
        raise StatsInputError(f"{name} is required")
    elif np.ndim(value) == 0 or isinstance(value, pd.DataFrame):
        raise StatsInputError(f"{name} must be one value per row (an array, list or Series) or a column name, "
                              f"not {type(value).__name__}")
    else:
        try:
            series = pd.Series(np.asarray(value, dtype=object) if not numeric else value)
        except (TypeError, ValueError) as exc:
            raise StatsInputError(f"{name} must be one-dimensional ({exc})") from exc
    if series.ndim != 1:
        raise StatsInputError(f"{name} must be one-dimensional")
    if not numeric:
        return series.astype(object).where(series.notna(), None).to_numpy(dtype=object)
    return _numeric_series(series, name).to_numpy(dtype="float64", na_value=np.nan)


def _isna(a: np.ndarray) -> np.ndarray:
    return np.asarray(pd.isna(a), dtype=bool)



def per_group(compute: Callable[[pd.DataFrame], pd.DataFrame], data: pd.DataFrame | None,
              by: str | Sequence[str], *, rows_of: Sequence[Any] = (), rater: str = "judge") -> pd.DataFrame:
    """``compute`` on each group of ``data`` by the ``by`` column(s), the group keys as leading columns.

    ``rows_of``: the raters compared (judges named by the variables, or a multi-rater statistic's raters);
    only their rows are grouped, so another rater's criteria or conditions make no group of their own.
    """
    if data is None:
        raise StatsInputError("by= groups the rows of data=; give data= (a long frame or a judgments table)")
    data = _check_frame(data)
    cols = [by] if isinstance(by, str) else list(by)
    if not cols:
        raise StatsInputError("by= needs at least one column name")
    for col in cols:
        if col not in data.columns:
            raise _unknown_column(col, data, "by")
    # group the key columns alone and copy one group's rows at a time: a filtered copy of the whole table
    # first would double the memory of a ten-million-row table
    rows = np.arange(len(data))
    if rows_of and rater in data.columns:
        rows = np.flatnonzero(data[rater].isin(list(rows_of)).to_numpy(dtype=bool, na_value=False))
        if not len(rows):
            raise EmptyInputError(f"no rows of {_who(rater, list(rows_of))} to group by {cols}")
    keys = data[cols].iloc[rows].reset_index(drop=True)
    frames = []
    for key, group in keys.groupby(cols, sort=True, dropna=False):
        part = data.iloc[rows[group.index.to_numpy()]]
        values = key if isinstance(key, tuple) else (key,)
        try:
            frame = compute(part)
        except StatsInputError as exc:
            where = ", ".join(f"{c}={v!r}" for c, v in zip(cols, values, strict=True))
            raise type(exc)(f"{where}: {exc}") from exc
        for col, v in reversed(list(zip(cols, values, strict=True))):
            if col in frame.columns:  # the statistic's own column of that name (e.g. criterion "all") gives way
                frame = frame.drop(columns=col)
            frame.insert(0, col, v)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def by_columns(by: By) -> list[str]:
    """``by`` as a list of column names ([] for None)."""
    return [] if by is None else [by] if isinstance(by, str) else list(by)
