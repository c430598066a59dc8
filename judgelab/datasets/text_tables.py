"""Judge data files read as written: every cell of a CSV/TSV is the text in the file, and a JSON number in an
id column keeps the digits it was written with.

The one reader behind items for runs (:func:`judgelab.engine.items.read_items`) and :func:`judgelab.from_frame`:

- **CSV / TSV** are read by the standard ``csv`` module, never by a type-guessing parser: every cell is the
  text between the delimiters ("007" stays "007", "1.0" stays "1.0"); only the ``missing_values`` strings
  become missing. Quoted cells may hold delimiters, quotes ("" inside quotes) and line breaks; a byte-order
  mark and CRLF line ends are accepted; blank lines are skipped. There is no index inference: a record
  with more or fewer fields than the header is refused with one sentence naming its line (when EVERY
  record has one field more than the header, the sentence says the first column has no header name --
  the shape pandas would silently turn into an index), and so are a malformed quote and a repeated or
  blank-only header.
- **JSON Lines / JSON** (a list of objects) are parsed with Python's ``json``: integers keep every digit
  (two ids above 2**53 never collide), and in the columns named as text columns a number becomes the
  text it was written with (``1`` -> "1", ``2.5`` -> "2.5", ``1e3`` -> "1e3", ``1.0`` -> "1.0"). Other
  numbers become Python ints and floats. A text-column value that is a JSON list or object is refused
  naming its line.

:func:`id_text` is the rule for ids held by typed sources (a DataFrame, Parquet): text as it is,
integers as their digits, whole floats without ".0" (a float column of ids is almost always integers
upcast by a missing value), other floats in their shortest form; a float id at or above 2**53 is
refused (its digits may already be lost).
"""

from __future__ import annotations

import csv
import json
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgelab.errors import JudgelabError

__all__ = ["EXACT_FLOAT_LIMIT", "arrow_text", "id_text", "read_delimited", "read_json_records"]

EXACT_FLOAT_LIMIT = 2**53  # a float at or above this may not hold the integer it was meant to

ErrorClass = Callable[[str], JudgelabError]


class _JsonInt(int):
    """An int parsed from JSON that remembers how it was written (only read in text columns)."""

    text: str


class _JsonFloat(float):
    """A float parsed from JSON (or NaN/Infinity) that remembers how it was written."""

    text: str


def _int(token: str) -> int:
    value = _JsonInt(token)
    value.text = token
    return value


def _float(token: str) -> float:
    value = _JsonFloat(token)
    value.text = token
    return value


def _plain(value: Any) -> Any:
    """JSON values with the written-number subclasses replaced by plain int/float, recursively."""
    if isinstance(value, _JsonInt):
        return int(value)
    if isinstance(value, _JsonFloat):
        return float(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _loads(text: str) -> Any:
    return json.loads(text, parse_int=_int, parse_float=_float, parse_constant=_float)


def _record(obj: Any, text_columns: Sequence[str], where: str, error: ErrorClass) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise error(f"{where} is not a JSON object")
    out = {}
    for key, value in obj.items():
        if key in text_columns:
            if isinstance(value, dict | list):
                raise error(f"{where}: {key!r} is a JSON {'object' if isinstance(value, dict) else 'list'}, "
                            "not text or a number; write it as text")
            if isinstance(value, _JsonInt | _JsonFloat):
                value = value.text
        out[key] = _plain(value)
    return out


def read_json_records(path: Path, *, text_columns: Sequence[str], error: ErrorClass,
                      lines: bool) -> tuple[pd.DataFrame, list[int]]:
    """A JSON Lines file (``lines=True``) or a JSON list of objects as a frame, and each row's source line
    (JSON Lines) or 1-based position in the list (JSON). Numbers in ``text_columns`` keep their written text."""
    text = path.read_text(encoding="utf-8-sig")
    records: list[dict[str, Any]] = []
    where: list[int] = []
    if lines:
        # split on "\n" only: str.splitlines would also break inside a JSON string at U+2028, \x1c ...
        for lineno, line in enumerate(text.split("\n"), 1):
            if not line.strip():
                continue
            try:
                obj = _loads(line)
            except json.JSONDecodeError as exc:
                raise error(f"{path}: line {lineno} is not valid JSON ({exc.msg})") from None
            records.append(_record(obj, text_columns, f"{path}: line {lineno}", error))
            where.append(lineno)
    else:
        try:
            data = _loads(text)
        except json.JSONDecodeError as exc:
            raise error(f"{path}: line {exc.lineno} is not valid JSON ({exc.msg})") from None
        if not isinstance(data, list):
            raise error(f"{path}: a .json data file must hold a list of objects")
        for number, obj in enumerate(data, 1):
            records.append(_record(obj, text_columns, f"{path}: object {number} of the list", error))
            where.append(number)
    frame = pd.DataFrame(records)
    for column in text_columns:  # ids as written: never re-inferred as numbers
        if column in frame.columns:
            frame[column] = frame[column].astype(object)
    return frame, where


def read_delimited(path: Path, *, sep: str, missing_values: Sequence[str], error: ErrorClass,
                   format_name: str | None = None) -> tuple[pd.DataFrame, list[int]]:
    """A CSV/TSV file as a frame of text cells (missing values as NaN) and each row's first source line.

    Raises ``error`` with one sentence naming the line for a ragged record, a malformed quote or a bad
    header; ``UnicodeDecodeError`` propagates (callers name the encoding).
    """
    name = format_name or ("TSV" if sep == "\t" else "CSV")
    # decoded whole once, so that a UnicodeDecodeError names its byte in the file, then read as a stream: a
    # StringIO of a large file holds four bytes per character (450 MB more for a 114 MB file)
    path.read_bytes().decode("utf-8-sig")
    with open(path, encoding="utf-8-sig", newline="") as handle:
        return _read_records(handle, path, sep=sep, name=name, error=error, missing_values=missing_values)


def _read_records(handle: Any, path: Path, *, sep: str, name: str, error: ErrorClass,
                  missing_values: Sequence[str]) -> tuple[pd.DataFrame, list[int]]:
    reader = csv.reader(handle, delimiter=sep, quotechar='"', doublequote=True, strict=True)
    header: list[str] | None = None
    header_line = 0
    rows: list[list[str]] = []
    lines: list[int] = []
    ragged: list[tuple[int, int]] = []  # (line, fields) of records whose length differs from the header's
    last = 0
    limit = csv.field_size_limit(sys.maxsize)  # a cell may be any size (the default stops at 128 KiB)
    try:
        for record in reader:  # the header: the first record that is not a blank line
            first_line, last = last + 1, reader.line_num
            if record:
                header, header_line = record, first_line
                break
        width = len(header) if header is not None else 0
        add_row, add_line = rows.append, lines.append
        for record in reader:  # one pass per record, most of them of the header's width (ten million here)
            first_line, last = last + 1, reader.line_num
            fields = len(record)
            if fields != width:
                if not record or (width > 1 and fields == 1 and not record[0].strip()):
                    continue  # a blank line
                ragged.append((first_line, fields))
            add_row(record)
            add_line(first_line)
    except csv.Error as exc:
        raise error(_malformed(path, name, last + 1, exc)) from None
    finally:
        csv.field_size_limit(limit)
    header = _checked_header(path, header, header_line, len(rows), ragged, sep=sep, error=error)
    if not rows:
        return pd.DataFrame(columns=header, dtype=object), lines
    frame = pd.DataFrame(rows, columns=header, dtype=object)
    # a missing-value cell becomes NaN: one vectorized lookup per column instead of a Python test per cell
    return frame.where(~frame.isin(list(set(missing_values))), np.nan), lines


def arrow_text(frame: pd.DataFrame) -> pd.DataFrame:
    """:func:`read_delimited`'s frame with every column in pandas' Arrow-backed ``str`` dtype: the same cells
    (the text, or NaN where a missing value was), as a Parquet file's text columns come.

    A CSV's cells are one Python string each (~60 bytes: 1.1 GB for the 17.5 million cells of a 10^7-row
    wide file) and they stay alive as long as the frame; in Arrow they are their bytes plus an offset.
    Converted one column at a time, then the object frame goes (the caller drops its reference).
    """
    if not frame.columns.is_unique:  # read_delimited refuses a repeated header name; a frame built otherwise stays
        return frame
    return pd.DataFrame({c: frame[c].astype("str") for c in frame.columns}, index=frame.index, copy=False)


def _malformed(path: Path, name: str, line: int, exc: csv.Error) -> str:
    """The sentence for a record the csv module cannot read (from ``line`` on)."""
    return (f"cannot read {path.name} as {name}: the record from line {line}: {exc} (an unclosed quote makes "
            "the rest of a file one cell; a cell with a line break, a delimiter or a quote must be quoted, "
            'with a quote inside written as "")')


def _checked_header(path: Path, header: list[str] | None, header_line: int, n_rows: int,
                    ragged: Sequence[tuple[int, int]], *, sep: str, error: ErrorClass) -> list[str]:
    """The header once every record is read; refused when the file has none, names a column twice or blank, or
    has ``ragged`` records ((line, fields) of the ``n_rows`` data rows whose width differs from the header's)."""
    if header is None:
        raise error(f"data file is empty: {path}")
    _check_header(path, header, header_line, error)
    if ragged:
        width = len(header)
        if len(ragged) == n_rows and all(n == width + 1 for _, n in ragged):
            raise error(f"{path.name}: every row has {width + 1} fields but the header (line {header_line}) names "
                        f"{width} columns: one column has no name (pandas would take the first as an index and "
                        "shift every column); name every column in the header")
        line, n = ragged[0]
        raise error(f"{path.name}: line {line} has {n} fields but the header (line {header_line}) has {width}"
                    f"{f' ({len(ragged)} such rows)' if len(ragged) > 1 else ''}; quote cells that hold "
                    f"{'a tab' if sep == chr(9) else 'a comma'} and give every row one cell per column")
    return header


def _check_header(path: Path, header: list[str], line: int, error: ErrorClass) -> None:
    seen: dict[str, int] = {}
    for position, name in enumerate(header, 1):
        if name in seen:
            raise error(f"{path.name}: the header (line {line}) names column {name!r} twice (columns "
                        f"{seen[name]} and {position}); give every column its own name")
        seen[name] = position


def id_text(value: Any, *, where: str, error: ErrorClass) -> str:
    """An id held by a typed source as text (see the module docstring); ``where`` names it in an error."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        number = float(value)
        if math.isfinite(number) and abs(number) >= EXACT_FLOAT_LIMIT:
            raise error(f"{where} is the float {number!r}, at or above 2**53, where floats no longer hold every "
                        "integer (two ids may have become one); keep ids as text or integers")
        if math.isfinite(number) and number.is_integer():
            return str(int(number))
        return repr(number)
    return str(value)
