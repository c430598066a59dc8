"""read_delimited (CSV/TSV into text cells and source lines) against the version before its faster loop and
vectorized missing values (issue 28), kept here as the reference, on generated files."""

from __future__ import annotations

import csv
import io
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgelab.datasets.frame import FrameImportError
from judgelab.datasets.text_tables import ErrorClass, _checked_header, _malformed, arrow_text, read_delimited

_CELLS = st.one_of(st.sampled_from(["", "NA", "nan", " ", "x", "1", "2.5", "ü", "a,b", "say \"hi\"", "two\nlines",
                                    "\t", "  padded "]), st.text(max_size=6))


@st.composite
def delimited_files(draw: st.DrawFn) -> tuple[str, str]:
    """CSV or TSV text: a header (sometimes one column, sometimes a repeated name), rows of text cells written by
    the csv module (quoting what needs it: delimiters, quotes, line breaks), blank and whitespace-only lines,
    sometimes a ragged row, a BOM, CRLF line ends, a final line without its line break; sometimes a stray
    quote that makes the file malformed."""
    sep = draw(st.sampled_from([",", "\t"]))
    width = draw(st.integers(1, 4))
    header = [draw(st.sampled_from(["id", "judge", "score", "c", "é"])) + str(i) for i in range(width)]
    if width > 1 and draw(st.integers(0, 9)) == 0:
        header[-1] = header[0]
    out = io.StringIO()
    writer = csv.writer(out, delimiter=sep, lineterminator=draw(st.sampled_from(["\n", "\r\n"])))
    for _ in range(draw(st.integers(0, 2))):
        out.write("\n")
    writer.writerow(header)
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.integers(0, 14))
        if kind == 0:
            out.write("\n")
        elif kind == 1:
            out.write("   \n")
        elif kind == 2:
            writer.writerow([draw(_CELLS) for _ in range(width + draw(st.sampled_from([-1, 1])))])
        else:
            writer.writerow([draw(_CELLS) for _ in range(width)])
    text = out.getvalue()
    if draw(st.booleans()):
        text = text.rstrip("\r\n")
    if draw(st.integers(0, 14)) == 0:
        text += 'x"y' + sep + '"unclosed'
    if draw(st.booleans()):
        text = "\ufeff" + text
    return text, sep


@settings(max_examples=300, deadline=None)
@given(case=delimited_files(), missing=st.sampled_from([("", "NA", "nan"), (), ("x",)]))
def test_read_delimited_equals_the_previous_reader(case: tuple[str, str], missing: tuple[str, ...],
                                                  tmp_path_factory: pytest.TempPathFactory) -> None:
    """Invariant (generated CSV/TSV files): the same frame (cells, NaN for missing values, object dtype, column
    order) and the same source line per row as the previous reader, or the same error message."""
    text, sep = case
    path = tmp_path_factory.mktemp("csv") / ("f.tsv" if sep == "\t" else "f.csv")
    path.write_bytes(text.encode("utf-8"))
    try:
        expected = _previous_read_delimited(path, sep=sep, missing_values=missing, error=FrameImportError)
    except FrameImportError as exc:
        with pytest.raises(FrameImportError) as got:
            read_delimited(path, sep=sep, missing_values=missing, error=FrameImportError)
        assert str(got.value) == str(exc)
        return
    frame, lines = read_delimited(path, sep=sep, missing_values=missing, error=FrameImportError)
    pd.testing.assert_frame_equal(frame, expected[0])
    assert lines == expected[1]


@settings(max_examples=150, deadline=None)
@given(case=delimited_files(), missing=st.sampled_from([("", "NA", "nan"), ()]))
def test_arrow_text_keeps_every_cell(case: tuple[str, str], missing: tuple[str, ...],
                                     tmp_path_factory: pytest.TempPathFactory) -> None:
    """Invariant (generated CSV/TSV files): in Arrow every cell is the same text (padding, quotes, line breaks,
    unicode kept) or NaN where the file had a missing value; same columns, order, index and row count."""
    text, sep = case
    path = tmp_path_factory.mktemp("csv") / ("f.tsv" if sep == "\t" else "f.csv")
    path.write_bytes(text.encode("utf-8"))
    try:
        frame, _ = read_delimited(path, sep=sep, missing_values=missing, error=FrameImportError)
    except FrameImportError:
        return
    arrow = arrow_text(frame)
    assert list(arrow.columns) == list(frame.columns) and arrow.index.equals(frame.index)
    for col in frame.columns:
        assert arrow[col].dtype == "str"
        before, after = frame[col].tolist(), arrow[col].tolist()
        assert [v if isinstance(v, str) else None for v in after] == [v if isinstance(v, str) else None
                                                                      for v in before]
        assert all(isinstance(v, str) or (isinstance(v, float) and np.isnan(v)) for v in after)


def _previous_read_delimited(path: Path, *, sep: str, missing_values: Sequence[str], error: ErrorClass,
                   format_name: str | None = None) -> tuple[pd.DataFrame, list[int]]:
    """read_delimited before its faster loop (the reference): the previous loop over the records; what is
    refused once they are read, and how it is said, is the reader's own (text_tables._checked_header)."""
    name = format_name or ("TSV" if sep == "\t" else "CSV")
    text = path.read_bytes().decode("utf-8-sig")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep, quotechar='"', doublequote=True, strict=True)
    header: list[str] | None = None
    header_line = 0
    rows: list[list[str]] = []
    lines: list[int] = []
    ragged: list[tuple[int, int]] = []  # (line, fields) of records whose length differs from the header's
    last = 0
    limit = csv.field_size_limit(sys.maxsize)  # a cell may be any size (the default stops at 128 KiB)
    try:
        for record in reader:
            first_line, last = last + 1, reader.line_num
            if not record or (header is not None and len(header) > 1 and len(record) == 1 and not record[0].strip()):
                continue  # a blank line
            if header is None:
                header, header_line = record, first_line
                continue
            if len(record) != len(header):
                ragged.append((first_line, len(record)))
            rows.append(record)
            lines.append(first_line)
    except csv.Error as exc:
        raise error(_malformed(path, name, last + 1, exc)) from None
    finally:
        csv.field_size_limit(limit)
    header = _checked_header(path, header, header_line, len(rows), ragged, sep=sep, error=error)
    missing = set(missing_values)
    cells = [[np.nan if cell in missing else cell for cell in record] for record in rows]
    frame = pd.DataFrame(cells, columns=header, dtype=object) if cells else pd.DataFrame(columns=header, dtype=object)
    return frame, lines
