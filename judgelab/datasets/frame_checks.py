"""The checks and messages of :func:`judgelab.from_frame`: how a source row is named ("data row 7, line 8" in a
file, "row 3" -- a 0-based position -- in a DataFrame), how a cell reads as text, and the one-sentence
refusals (an unknown column, labels that could never match, two verdicts for one key, unnamed orders).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgelab.datasets.frame_text import FrameImportError

__all__ = ["Where", "cell_text", "check_columns", "check_duplicates", "check_label_types", "check_orders_named",
           "is_missing", "shown_value"]


class Where:
    """Names a source row in messages: files by data row (1-based, header not counted) and line, frames by
    0-based position (and index label when the index is not 0, 1, 2, ...)."""

    def __init__(self, frame: pd.DataFrame, *, from_file: bool, lines: Sequence[str] | None = None) -> None:
        self.index = list(frame.index)
        self.from_file = from_file
        self.lines = lines
        self.positional = list(self.index) == list(range(len(self.index)))

    def __call__(self, pos: int) -> str:
        if self.from_file:
            return f"data row {self.index[pos]}" + (f", {self.lines[pos]}" if self.lines else "")
        return f"row {pos}" if self.positional else f"row {pos} (index {shown_value(self.index[pos])!r})"

    @property
    def unit(self) -> str:
        """How rows are counted, for messages naming several."""
        return "data rows count from 1 after the header" if self.from_file else "rows are 0-based positions"

    def label(self, pos: int) -> Any:
        value = self.index[pos]
        return int(value) if isinstance(value, int | np.integer) else str(value)


def check_columns(frame: pd.DataFrame, named: Sequence[tuple[str, str]]) -> None:
    present = [str(c) for c in frame.columns]
    for role, col in named:
        if col in frame.columns:
            continue
        hint = ""
        bom = [c for c in present if c.lstrip("\ufeff") == col]
        if bom:
            hint = (f"; the frame has {bom[0]!r}, which starts with a byte-order mark: pass the file path to "
                    "from_frame, or read it with encoding='utf-8-sig'")
        else:
            close = difflib.get_close_matches(str(col), present, n=3)
            if close:
                hint = f"; did you mean {', '.join(map(repr, close))}?"
        shown = ", ".join(map(repr, present[:20])) + (" ..." if len(present) > 20 else "")
        raise FrameImportError(f"{role}={col!r} is not a column of the frame (columns: {shown}){hint}")


def is_missing(value: Any, missing_values: Sequence[str]) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    if isinstance(value, float | np.floating) and math.isnan(value):
        return True
    return isinstance(value, str) and value in missing_values


def shown_value(value: Any) -> Any:
    """A cell as a plain Python value, for messages (np.float64(1.5) -> 1.5)."""
    return value.item() if isinstance(value, np.generic) else value


def cell_text(value: Any) -> str:
    """A cell as label text: integral numbers without ".0", everything else as str()."""
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    return str(value)


def _numeric_text(value: str) -> float | None:
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def check_label_types(frame: pd.DataFrame, columns: Sequence[str], missing_values: Sequence[str]) -> None:
    """Labels are compared as text ("2" and 2 are the same label, and "Tie" sits beside them): refused only
    where text and numbers could never match -- a number beside a text spelling of another form ("2.0",
    "02": the number 2 reads "2"), or a column of numbers beside a column of text with no label in common."""
    texts: dict[str, set[str]] = {}
    numbers: dict[str, set[str]] = {}
    for col in columns:
        values = [v for v in frame[col] if not is_missing(v, missing_values)]
        numbers[col] = {cell_text(v) for v in values if isinstance(v, int | float | np.number)
                        and not isinstance(v, bool | np.bool_)}
        texts[col] = {cell_text(v) for v in values} - numbers[col] if numbers[col] else {cell_text(v) for v in values}
    if any(numbers.values()):
        for col, found in texts.items():
            odd = sorted(t for t in found if (n := _numeric_text(t)) is not None and cell_text(n) != t.strip())
            if odd:
                holder = next(c for c, n in numbers.items() if n)
                raise FrameImportError(
                    f"column {holder!r} holds numbers (read as text: {sorted(numbers[holder])[:3]}) and column "
                    f"{col!r} the text {odd[0]!r}, which no number reads as; labels are compared as text: "
                    "write them in one form first")
    only_numbers = [c for c in columns if numbers[c] and not texts[c]]
    only_text = [c for c in columns if texts[c] and not numbers[c]]
    for a in only_numbers:
        for b in only_text:
            if not numbers[a] & texts[b]:
                raise FrameImportError(
                    f"judge columns hold labels of different types with none in common ({a!r}: numbers "
                    f"{sorted(numbers[a])[:4]}, {b!r}: text {sorted(texts[b])[:4]}); they would never match: "
                    "map them to one set of labels first")


def check_duplicates(rows: Sequence[Mapping[str, Any]], where: Where) -> None:
    seen: dict[tuple[Any, ...], int] = {}
    for row in rows:
        key = (row["item_id"], row["judge"], row["criterion"], row["condition"],
               None if pd.isna(row["repeat"]) else int(row["repeat"]))
        if key in seen:
            raise FrameImportError(
                f"judge {key[1]!r} has two verdicts for item {key[0]!r} (criterion {key[2]!r}, condition {key[3]!r}) "
                f"in {where(seen[key])} and {where(row['_pos'])} ({where.unit}); name the column that tells them "
                "apart (condition=, criterion= or repeat=)")
        seen[key] = row["_pos"]


def check_orders_named(conditions: pd.Series, column: str) -> None:
    """A pairwise import names its orders "original" / "swapped" (or maps them with condition_values=)."""
    values = sorted(set(conditions))
    if {"original", "swapped"} & set(values):
        return
    shown = values[:6] + (["..."] if len(values) > 6 else [])
    if len(values) == 2:
        fix = (f"pass condition_values={{{values[0]!r}: 'original', {values[1]!r}: 'swapped'}} (or the reverse: "
               "which value is the order the gold labels are written in?)")
    else:
        fix = "pass condition_values= mapping them to 'original', 'swapped' (or names of other conditions)"
    raise FrameImportError(f"column {column!r} (condition) holds {shown}, but pairwise winners are read per order "
                           f"named 'original' and 'swapped' (a swapped order's winners are flipped); {fix}")
