"""Items load as written: every item id comes back exactly as its text in the file, or the load is refused
with one sentence naming the line -- never a silent coercion or a shift of columns."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings

from judgelab.engine.items import ItemsError, read_items
from tests.datasets.written_files import WrittenFile, any_delimited_files, json_lines_files

SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _write(tmp_path: Path, name: str, file: WrittenFile) -> Path:
    path = tmp_path / name
    path.write_bytes(file.data)
    return path


@SETTINGS
@given(file=json_lines_files())
def test_json_lines_ids_keep_their_written_digits(tmp_path: Path, file: WrittenFile) -> None:
    """Invariant: a JSON number id is the text it was written with (1 -> "1", 2.5 -> "2.5", 1e3 -> "1e3",
    integers beyond 2**53 exact, so two never collide); a JSON string id is the string; every other field
    of the row is the value written."""
    items = read_items(_write(tmp_path, "items.jsonl", file))
    assert list(items["item_id"]) == file.ids
    assert list(items["prompt"]) == file.texts


@SETTINGS
@given(file=any_delimited_files())
def test_delimited_ids_are_the_cells_text_or_the_line_is_named(tmp_path: Path, file: WrittenFile) -> None:
    """Invariant: in a CSV/TSV (any quoting, BOM, CRLF, cells with delimiters, quotes and line breaks) each
    id and field is the cell's text; a record with more or fewer fields than the header is ONE ItemsError
    naming the record's first line, and every row one field more than the header (pandas' index shape)
    is refused saying a column has no name -- a column is never shifted."""
    path = _write(tmp_path, f"items.{file.suffix}", file)
    if file.bad_line is None:
        items = read_items(path)
        assert list(items["item_id"]) == file.ids
        assert list(items["prompt"]) == file.texts
        return
    with pytest.raises(ItemsError) as refused:
        read_items(path)
    message = str(refused.value)
    assert "\n" not in message and message.startswith(path.name)
    if file.index_like:
        assert "every row has 4 fields but the header (line 1) names 3 columns" in message
    else:
        assert re.search(rf"line {file.bad_line} has [24] fields but the header \(line 1\) has 3", message), message


def test_the_reported_cases(tmp_path: Path) -> None:
    # JSONL ids 1 and 2.5 were "1.0" and "2.5"; two ids above 2**53 were one ("duplicate item_id")
    path = tmp_path / "a.jsonl"
    path.write_text('{"item_id": 1, "p": "x"}\n{"item_id": 2.5, "p": "y"}\n{"item_id": 9007199254740993, "p": "z"}\n'
                    '{"item_id": 9007199254740992, "p": "w"}\n{"item_id": 1e3, "p": "v"}\n', encoding="utf-8")
    assert list(read_items(path)["item_id"]) == ["1", "2.5", "9007199254740993", "9007199254740992", "1e3"]
    # every row one field more than the header: was read with the question text as item_id
    path = tmp_path / "b.csv"
    path.write_text("item_id,prompt,response\n0,q1,What is 2+2?,4\n1,q2,Capital of France?,Paris\n", encoding="utf-8")
    with pytest.raises(ItemsError, match=r"^b.csv: every row has 4 fields but the header \(line 1\) names 3 columns"):
        read_items(path)
    # a repeated header name, a malformed quote: one sentence naming the line
    (tmp_path / "c.csv").write_text("item_id,prompt,prompt\n1,a,b\n", encoding="utf-8")
    with pytest.raises(ItemsError, match=r"names column 'prompt' twice \(columns 2 and 3\)"):
        read_items(tmp_path / "c.csv")
    (tmp_path / "d.csv").write_text('item_id,prompt\n1,"a"b\n', encoding="utf-8")
    with pytest.raises(ItemsError, match=r"cannot read d.csv as CSV: the record from line 2: "):
        read_items(tmp_path / "d.csv")
    (tmp_path / "f.csv").write_text('item_id,prompt\n1,a\n2,"never closed\n3,c\n', encoding="utf-8")
    with pytest.raises(ItemsError, match=r"the record from line 3: unexpected end of data \(an unclosed quote"):
        read_items(tmp_path / "f.csv")
    # a cell beyond the csv module's default 128 KiB limit is read whole
    (tmp_path / "g.csv").write_text("item_id,prompt\n1," + "x" * 300_000 + "\n", encoding="utf-8")
    assert len(read_items(tmp_path / "g.csv")["prompt"].iloc[0]) == 300_000
    # an id that is a JSON list or object is not text
    (tmp_path / "e.jsonl").write_text('{"item_id": "a"}\n{"item_id": [1, 2]}\n', encoding="utf-8")
    with pytest.raises(ItemsError, match=r"line 2: 'item_id' is a JSON list, not text or a number"):
        read_items(tmp_path / "e.jsonl")


def test_typed_sources_use_one_id_rule(tmp_path: Path) -> None:
    """DataFrame and Parquet ids: integers as their digits, whole floats (ints upcast by a missing value)
    without ".0", other floats in their shortest form; a float id beyond 2**53 is refused."""
    frame = pd.DataFrame({"item_id": [1.0, 2.5, 3.0], "prompt": ["a", "b", "c"]})
    assert list(read_items(frame)["item_id"]) == ["1", "2.5", "3"]
    big = pd.DataFrame({"item_id": np.array([2**62, 2**62 + 1], dtype=np.int64), "prompt": ["a", "b"]})
    big.to_parquet(tmp_path / "big.parquet")
    assert list(read_items(tmp_path / "big.parquet")["item_id"]) == [str(2**62), str(2**62 + 1)]
    lossy = pd.DataFrame({"item_id": [float(2**53), 1.0], "prompt": ["a", "b"]})
    with pytest.raises(ItemsError, match=r"the item_id of row 0 is the float 9007199254740992.0, at or above 2\*\*53"):
        read_items(lossy)
