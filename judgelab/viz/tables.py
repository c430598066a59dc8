"""Result tables as a paper prints them, in a notebook: ``judgelab.show(frame)``.

:func:`show` wraps a DataFrame in a :class:`Table` whose notebook view (``_repr_html_``) and plain-text view read
like a paper's table: three significant digits, p-values as ``<0.001`` / ``0.032``, ``ci_low``/``ci_high`` as one
``[lo, hi]`` cell, a long ``method`` or ``note`` cut at a word with the whole text in a tooltip. Only the view is
formatted: ``Table.frame`` is the caller's frame, unchanged, for further computation.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgelab.errors import JudgelabError
from judgelab.viz.style import (
    format_interval,
    format_number,
    format_p_value,
    frame_html,
    is_p_column,
    shorten,
)

__all__ = ["TEXT_WIDTH", "Table", "show"]

TEXT_WIDTH = 90  # characters of a text cell shown before the rest moves to its tooltip (about two lines)


class TableInputError(JudgelabError, TypeError):
    """:func:`show` was given something that is not a DataFrame, or columns it does not have."""


@dataclass(frozen=True)
class Table:
    """A DataFrame with a paper-like view; ``frame`` is the data, never rounded."""

    frame: pd.DataFrame
    max_rows: int | None = 60
    text_width: int | None = TEXT_WIDTH

    def _view_frame(self) -> pd.DataFrame:
        frame = self.frame
        if any(name is not None for name in frame.index.names):  # a labelled index (a pivot's keys) is data to show
            return frame.reset_index()
        return frame  # row positions left over from filtering are not: not shown

    def _repr_html_(self) -> str:
        return frame_html(self._view_frame(), max_rows=self.max_rows, text_width=self.text_width)

    def __repr__(self) -> str:
        frame = self._view_frame()
        shown = frame if self.max_rows is None else frame.head(self.max_rows)
        text = pd.DataFrame(index=shown.index)
        for column in shown.columns:
            name = str(column)
            if name == "ci_high" and "ci_low" in shown.columns:
                continue
            if name == "ci_low" and "ci_high" in shown.columns:
                text["CI"] = [format_interval(lo, hi) for lo, hi in zip(shown["ci_low"], shown["ci_high"], strict=True)]
            elif is_p_column(name):
                text[name] = [format_p_value(v) for v in shown[column]]
            else:
                text[name] = [format_number(v) if not isinstance(v, str) else
                              (shorten(v, self.text_width) if self.text_width else v) for v in shown[column]]
        out = text.to_string(index=False)
        if len(shown) < len(frame):
            out += f"\n(first {len(shown):,} of {len(frame):,} rows)"
        return out


def show(frame: pd.DataFrame, columns: Sequence[str] | None = None, *, max_rows: int | None = 60,
         text_width: int | None = TEXT_WIDTH) -> Table:
    """``frame`` (or its ``columns``) shown as a paper's table: 3 significant digits, p-values as ``<0.001``,
    intervals as ``[lo, hi]``, long text cut at a word with a tooltip; ``max_rows`` first rows (None: all).

    The values are not changed: the returned :class:`Table` keeps ``frame`` as it is (``.frame``)."""
    if not isinstance(frame, pd.DataFrame):
        raise TableInputError(f"show() displays a pandas DataFrame, not {type(frame).__name__}; for a probe or "
                              "run result pass its .summary or .table")
    for name, value, least in (("max_rows", max_rows, 0), ("text_width", text_width, 1)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | np.integer) or value < least):
            raise TableInputError(f"show() takes {name} as a whole number >= {least} or None, not {value!r}")
    if isinstance(columns, str):
        columns = [columns]
    if columns is not None and (not isinstance(columns, Iterable) or isinstance(columns, bytes | Mapping)):
        raise TableInputError(f"show() takes columns as a list of column names, not {type(columns).__name__}")
    if columns is not None:
        columns = list(columns)
        odd = [c for c in columns if not isinstance(c, Hashable)]
        if odd:
            raise TableInputError(f"show() takes columns as a list of column names, and {odd[0]!r} is not a name")
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise TableInputError(f"show() was asked for columns {missing}, which the frame does not have "
                                  f"(it has: {', '.join(map(str, frame.columns))})")
        frame = frame[list(columns)]
    return Table(frame, max_rows, text_width)
