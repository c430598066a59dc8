"""Hypothesis strategies for data files whose cells must come back exactly as written: ids of mixed types
(text with delimiters, quotes, line breaks and unicode; integers beyond 2**53; numbers written as 2.5, 1e3,
1.0, -0.0), CSV/TSV quoting styles, an optional byte-order mark, LF or CRLF line ends, and one ragged row
(a field more or fewer than the header) or every row one field more (the index-like header).

Each strategy draws a :class:`WrittenFile`: the bytes, the ids and text fields as they are in the file,
and -- when the file is ragged -- the line the reader must name.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass

from hypothesis import strategies as st

__all__ = ["WrittenFile", "any_delimited_files", "delimited_files", "json_lines_files"]

_TEXT = st.lists(st.sampled_from(list("ab7 0,;\t\"'\n\r\\{}[]:é中\u2028#-.") + ["\r\n"]), max_size=12).map("".join)
_ID_TEXT = st.text(alphabet=st.sampled_from(list("ab07, \"'\t\né-.x")), min_size=1, max_size=8).filter(
    lambda s: s.strip() != "")
# numbers as a JSON file may write them: the id must come back as this very text
_NUMBER_TOKENS = st.one_of(
    st.integers(-10**25, 10**25).map(str),
    st.sampled_from(["2.5", "1e3", "1E3", "1.0", "-0.0", "2.50", "0.1", "3e-2", "9007199254740993",
                     "9007199254740992", "-1", "0"]),
    st.decimals(allow_nan=False, allow_infinity=False, places=3).map(str).filter(
        lambda s: s.lstrip("-").replace(".", "", 1).isdigit()),
)


@dataclass(frozen=True)
class WrittenFile:
    """A file as bytes, what its cells are as written, and the line a reader must refuse (or None)."""

    data: bytes
    ids: list[str]
    texts: list[str]
    bad_line: int | None = None
    index_like: bool = False
    sep: str = ","

    @property
    def suffix(self) -> str:
        return "tsv" if self.sep == "\t" else "csv"


@st.composite
def json_lines_files(draw: st.DrawFn) -> WrittenFile:
    """JSON Lines with item_id tokens of mixed types (numbers written raw, strings JSON-escaped), unique."""
    n = draw(st.integers(1, 8))
    tokens = draw(st.lists(st.one_of(_NUMBER_TOKENS.map(lambda t: ("number", t)), _ID_TEXT.map(lambda t: ("text", t))),
                           min_size=n, max_size=n, unique_by=lambda kv: kv[1]))
    texts = draw(st.lists(_TEXT, min_size=n, max_size=n))
    crlf = draw(st.booleans())
    bom = draw(st.booleans())
    lines = []
    for (kind, token), text in zip(tokens, texts, strict=True):
        raw_id = token if kind == "number" else json.dumps(token, ensure_ascii=draw(st.booleans()))
        lines.append('{"item_id": ' + raw_id + ', "prompt": ' + json.dumps(text, ensure_ascii=False) + "}")
    body = ("\r\n" if crlf else "\n").join(lines) + "\n"
    return WrittenFile(("\ufeff" if bom else "").encode() + body.encode("utf-8"), [t for _, t in tokens], texts)


@st.composite
def delimited_files(draw: st.DrawFn, sep: str = ",") -> WrittenFile:
    """A CSV/TSV of item_id, prompt, note; maybe one ragged record, or every record one field more."""
    n = draw(st.integers(1, 8))
    ids = draw(st.lists(st.one_of(_ID_TEXT, _NUMBER_TOKENS), min_size=n, max_size=n, unique=True))
    texts = draw(st.lists(_TEXT.filter(lambda s: s.strip() != ""), min_size=n, max_size=n))
    notes = draw(st.lists(_TEXT.filter(lambda s: s.strip() != ""), min_size=n, max_size=n))
    quoting = draw(st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL, csv.QUOTE_NONNUMERIC]))
    terminator = draw(st.sampled_from(["\n", "\r\n"]))
    shape = draw(st.sampled_from(["ok", "ok", "more", "fewer", "index_like"]))
    ragged_at = draw(st.integers(0, n - 1))
    records: list[list[str]] = [["item_id", "prompt", "note"]]
    for i in range(n):
        row = [ids[i], texts[i], notes[i]]
        if shape == "index_like" or (shape == "more" and i == ragged_at):
            row = [str(i), *row] if shape == "index_like" else [*row, "extra"]
        elif shape == "fewer" and i == ragged_at:
            row = row[:2]
        records.append(row)
    if terminator == "\n" and quoting == csv.QUOTE_MINIMAL and any("\r" in c for r in records for c in r):
        quoting = csv.QUOTE_ALL  # the csv writer leaves a lone \r unquoted when the terminator is \n
    chunks = []
    for record in records:
        out = io.StringIO()
        csv.writer(out, delimiter=sep, quoting=quoting, lineterminator=terminator).writerow(record)
        chunks.append(out.getvalue())
    bad_line = None
    if shape in ("more", "fewer"):
        before = "".join(chunks[: 1 + ragged_at])
        bad_line = len(re.findall(r"\r\n|\r|\n", before)) + 1  # line breaks as the csv module counts them
    if shape == "more" and n == 1:
        shape = "index_like"  # the one record has a field more: every record does
    if shape == "index_like":
        bad_line = 1
    bom = draw(st.booleans())
    data = ("\ufeff" if bom else "").encode() + "".join(chunks).encode("utf-8")
    return WrittenFile(data, ids, texts, bad_line, shape == "index_like", sep)


def any_delimited_files() -> st.SearchStrategy[WrittenFile]:
    """CSV or TSV files (see :func:`delimited_files`)."""
    return st.sampled_from([",", "\t"]).flatmap(lambda sep: delimited_files(sep=sep))
