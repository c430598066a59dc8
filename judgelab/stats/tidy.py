"""The one builder of the tidy result frames every public statistic and every probe returns.

Every row carries ``metric, estimate, ci_low, ci_high, p_value, n, method``; context columns
(``ci_level``, ``n_resamples``, counts of excluded rows, a probe's ``condition`` and ``policy`` ...)
follow in the order they first appear, and ``note`` always comes last so a reader sees why a value
is NaN.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

__all__ = ["BASE_COLUMNS", "join_notes", "result_row", "tidy_frame"]

BASE_COLUMNS: tuple[str, ...] = ("metric", "estimate", "ci_low", "ci_high", "p_value", "n", "method")
_FLOAT_COLUMNS = ("estimate", "ci_low", "ci_high", "p_value")
NAN = math.nan


def result_row(
    metric: str,
    estimate: float,
    *,
    n: int,
    method: str,
    ci_low: float = NAN,
    ci_high: float = NAN,
    p_value: float = NAN,
    note: str = "",
    **context: Any,
) -> dict[str, Any]:
    """One result row; ``context`` holds any extra columns (ci_level, n_resamples, group keys ...)."""
    row: dict[str, Any] = {
        "metric": metric,
        "estimate": _as_float(estimate),
        "ci_low": _as_float(ci_low),
        "ci_high": _as_float(ci_high),
        "p_value": _as_float(p_value),
        "n": int(n),
        "method": method,
    }
    row.update(context)
    row["note"] = note
    return row


def _as_float(value: Any) -> float:
    if value is None or value is pd.NA:
        return NAN
    return float(value)


def tidy_frame(rows: Iterable[Mapping[str, Any]], *, defaults: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Assemble rows into a frame: base columns first, context columns next, ``note`` last.

    ``defaults``: context columns every frame has (first among the context columns, in this order),
    with the value a row that lacks one gets (e.g. a probe's ``condition`` and ``policy``, "" when
    a row has none).
    """
    rows = list(rows)
    defaults = dict(defaults or {})
    extra: list[str] = list(defaults)
    for row in rows:
        for key in row:
            if key not in BASE_COLUMNS and key != "note" and key not in extra:
                extra.append(key)
    columns = list(BASE_COLUMNS) + extra + ["note"]
    fill = {**{c: NAN for c in columns}, **defaults, "note": ""}
    frame = pd.DataFrame([{c: row.get(c, fill[c]) for c in columns} for row in rows], columns=columns)
    for col in _FLOAT_COLUMNS:
        frame[col] = frame[col].astype("float64")
    frame["n"] = frame["n"].astype("int64")
    frame["note"] = frame["note"].fillna("").astype(object)
    return frame


def join_notes(*notes: str) -> str:
    """Join non-empty notes with '; '."""
    return "; ".join(n for n in notes if n)
