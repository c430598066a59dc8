"""from_frame reads files as written and names rows by their place: ids are the file's text in every format,
a ragged CSV/TSV is one sentence naming the line, messages name positions (not index labels) and the
user's columns, and a pairwise import with unnamed orders says which values it needs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings

from judgelab.datasets import FrameImportError, from_frame
from tests.datasets.written_files import WrittenFile, any_delimited_files, json_lines_files

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(file=any_delimited_files())
def test_delimited_files_come_back_as_written_or_name_the_line(tmp_path: Path, file: WrittenFile) -> None:
    """Invariant: every item_id and verdict is the cell's text (no dtype inference, no index column); a
    ragged record or the index-like header is ONE FrameImportError naming the line."""
    path = tmp_path / f"v.{file.suffix}"
    path.write_bytes(file.data)
    if file.bad_line is not None:
        with pytest.raises(FrameImportError) as refused:
            from_frame(path, item_id="item_id", judges=["prompt"], kind="label")
        assert re.search(rf"\(line {file.bad_line}\)|line {file.bad_line} has", str(refused.value))
        return
    t = from_frame(path, item_id="item_id", judges=["prompt"], kind="label")
    assert list(t["item_id"]) == file.ids
    assert list(t["verdict"]) == file.texts


@SETTINGS
@given(file=json_lines_files())
def test_json_ids_keep_their_digits_in_jsonl_json_and_parquet(tmp_path: Path, file: WrittenFile) -> None:
    """Invariant: a JSON number id is the text it was written with, in JSON Lines and in a JSON list; the
    prompt column (a label here) is the string written."""
    jsonl = tmp_path / "v.jsonl"
    jsonl.write_bytes(file.data)
    t = from_frame(jsonl, item_id="item_id", judges=["prompt"], kind="label", missing_values=())
    assert list(t["item_id"]) == file.ids
    assert list(t["verdict"]) == file.texts
    as_list = tmp_path / "v.json"
    lines = [ln for ln in file.data.decode("utf-8-sig").split("\n") if ln.strip()]
    as_list.write_text("[" + ",\n".join(lines) + "]", encoding="utf-8")
    listed = from_frame(as_list, item_id="item_id", judges=["prompt"], kind="label", missing_values=())
    assert list(listed["item_id"]) == file.ids


def test_the_jsonl_mixed_ids_of_the_report(tmp_path: Path) -> None:
    path = tmp_path / "v.jsonl"
    rows = ['{"id": 1, "j": "yes"}', '{"id": 2.5, "j": "no"}', '{"id": 9007199254740993, "j": "yes"}',
            '{"id": 9007199254740992, "j": "no"}']
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    t = from_frame(path, item_id="id", judges=["j"], kind="label")
    assert list(t["item_id"]) == ["1", "2.5", "9007199254740993", "9007199254740992"]
    assert "line 2" in from_frame(path, item_id="id", judges=["j"], kind="label", labels=["yes"],
                                  on_bad="unscored")["unscored_reason"].iloc[1]


def test_a_csv_whose_rows_have_a_field_more_is_refused_not_shifted(tmp_path: Path) -> None:
    path = tmp_path / "v.csv"
    path.write_text("q,judge,score\n0,a,m,4\n1,b,m,5\n", encoding="utf-8")
    with pytest.raises(FrameImportError, match=r"^v.csv: every row has 4 fields but the header \(line 1\) names 3"):
        from_frame(path, item_id="q", judge="judge", score="score")
    path.write_text('q,judge,score\na,m,4\nb,m,"5\n6"\nc,m\n', encoding="utf-8")
    with pytest.raises(FrameImportError, match=r"^v.csv: line 5 has 2 fields but the header \(line 1\) has 3"):
        from_frame(path, item_id="q", judge="judge", score="score")


def test_file_rows_are_named_by_data_row_and_line(tmp_path: Path) -> None:
    path = tmp_path / "v.csv"
    path.write_text('q,j\na,"two\nlines"\nb,x\n', encoding="utf-8")
    t = from_frame(path, item_id="q", judges=["j"], kind="label", labels=["two\nlines"], on_bad="unscored")
    assert "(data row 2, line 4)" in t["unscored_reason"].iloc[1]


def test_duplicates_name_positions_not_index_labels() -> None:
    # a frame built by concatenation repeats its index labels: "rows 0 and 0" told the user nothing
    df = pd.concat([pd.DataFrame({"q": ["a"], "j": ["m"], "s": [1]}), pd.DataFrame({"q": ["a"], "j": ["m"], "s": [2]})])
    assert list(df.index) == [0, 0]
    with pytest.raises(FrameImportError, match=r"in row 0 \(index 0\) and row 1 \(index 0\) \(rows are 0-based positions\)"):
        from_frame(df, item_id="q", judge="j", score="s")


def test_a_two_order_condition_needs_its_orders_named() -> None:
    df = pd.DataFrame({"pair": ["p1", "p1"], "judge": ["m", "m"], "order": [0, 1], "winner": ["A", "A"]})
    with pytest.raises(FrameImportError, match=r"column 'order' \(condition\) holds \['0', '1'\].*pass "
                                               r"condition_values=\{'0': 'original', '1': 'swapped'\}"):
        from_frame(df, item_id="pair", judge="judge", winner="winner", condition="order")
    t = from_frame(df, item_id="pair", judge="judge", winner="winner", condition="order",
                   condition_values={0: "original", 1: "swapped"})
    assert list(t["winner"]) == ["A", "B"]  # the second order's "A" is the original B


def test_errors_list_the_users_columns() -> None:
    df = pd.DataFrame({"question": ["a"], "model": ["m"], "rating": [3]})
    with pytest.raises(FrameImportError) as wrong:
        from_frame(df, item_id="question", judge="model", score="ratting")
    message = str(wrong.value)
    assert "(columns: 'question', 'model', 'rating')" in message and "did you mean 'rating'" in message
    for internal in ("status", "run_id", "unscored_reason", "verdict"):
        assert internal not in message


def test_json_list_rows_are_named_by_object(tmp_path: Path) -> None:
    path = tmp_path / "v.json"
    path.write_text(json.dumps([{"q": "a", "s": 1}, {"q": "b", "s": "x"}]), encoding="utf-8")
    t = from_frame(path, item_id="q", judges=["s"], kind="score", on_bad="unscored")
    assert "(data row 2, object 2)" in t["unscored_reason"].iloc[1]


def test_a_judge_named_like_the_gold_rows_is_one_sentence() -> None:
    df = pd.DataFrame({"q": ["a"], "gold": ["yes"], "human": ["no"]})
    with pytest.raises(FrameImportError, match="a judge is named 'gold', the name the gold column's rows take"):
        from_frame(df, item_id="q", judges=["gold"], gold="human", kind="label")
    t = from_frame(df, item_id="q", judges=["gold"], gold="human", kind="label", gold_judge="human")
    assert sorted(t["judge"]) == ["gold", "human"]


def test_a_float_id_beyond_2_53_is_refused_as_in_items() -> None:
    df = pd.DataFrame({"q": [float(2**53), 1.0], "j": ["yes", "no"]})
    with pytest.raises(FrameImportError, match=r"column 'q' \(item_id\) in row 0 is the float 9007199254740992.0"):
        from_frame(df, item_id="q", judges=["j"], kind="label")
    assert list(from_frame(df.iloc[1:], item_id="q", judges=["j"], kind="label")["item_id"]) == ["1"]
