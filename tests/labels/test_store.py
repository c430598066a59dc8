"""The label store keeps every event: append-only, one format version, refusals in one sentence with nothing lost."""

from __future__ import annotations

import os
import re
import sqlite3
import threading
from pathlib import Path

import pandas as pd
import pytest

from judgelab.errors import JudgelabError
from judgelab.labels import LabelError, LabelSession, LabelStore, LabelStoreError, Question

ITEMS = pd.DataFrame({"item_id": [f"i{k}" for k in range(6)], "response": [f"text {k}" for k in range(6)]})
QUESTIONS = [Question("quality", "score", scale=(1, 5), anchors={1: "bad", 5: "good"}),
             Question("safe", "label", labels=("yes", "no")), Question("note", "note")]


def _session(path: Path, annotator: str = "ann") -> LabelSession:
    return LabelSession(ITEMS, QUESTIONS, annotator, path)


def test_events_cannot_be_updated_or_deleted(tmp_path: Path) -> None:
    s = _session(tmp_path / "l.sqlite")
    s.label("i0", quality=3, safe="yes")
    db = sqlite3.connect(tmp_path / "l.sqlite")
    for statement in ("UPDATE events SET value_num = 5", "DELETE FROM events"):
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            db.execute(statement)
    db.close()
    assert len(s.store.events()) == 2


def test_undo_is_an_appended_retraction(tmp_path: Path) -> None:
    s = _session(tmp_path / "l.sqlite")
    s.label("i0", quality=3, safe="yes")
    s.label("i0", quality=5)  # a second answer supersedes the first
    assert s.table().set_index("criterion").loc["quality", "score"] == 5
    assert s.undo() == "i0"
    events = s.store.events()
    assert list(events["kind"]) == ["answer", "answer", "answer", "retract"]
    assert s.table().set_index("criterion").loc["quality", "score"] == 3  # the earlier answer is live again


@pytest.mark.parametrize(("answers", "needle"), [
    ({"quality": 6}, "integer from 1 to 5"), ({"quality": 2.5}, "integer from 1 to 5"),
    ({"quality": float("nan")}, "integer from 1 to 5"), ({"safe": "maybe"}, "one of yes, no"),
    ({"colour": "red"}, "unknown question"), ({}, "no answer given"), ({"note": 3}, "is text")])
def test_bad_answers_are_refused_and_nothing_is_lost(tmp_path: Path, answers: dict, needle: str) -> None:
    s = _session(tmp_path / "l.sqlite")
    s.label("i0", quality=4, safe="no")
    with pytest.raises(LabelError, match=needle) as info:
        s.label("i1", **answers)
    assert not re.search(r"[.!?]\s+[A-Z]", str(info.value)) and "\n" not in str(info.value)  # one sentence
    assert len(s.store.events()) == 2 and len(s.table()) == 2  # the refused action stored nothing


def test_unknown_item_is_refused(tmp_path: Path) -> None:
    s = _session(tmp_path / "l.sqlite")
    with pytest.raises(LabelError, match="unknown item id 'nope'"):
        s.label("nope", quality=3)
    assert s.store.events().empty


def test_a_store_another_version_wrote_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    _session(path).label("i0", quality=1, safe="yes")
    db = sqlite3.connect(path)
    db.execute("INSERT INTO store_info VALUES (2, 'later')")
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(LabelStoreError, match=r"format version\(s\) \[1, 2\].*reads version 1"):
        _session(path)
    assert path.read_bytes() == before


def test_other_files_are_refused(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("not a database, " * 100)
    with pytest.raises(LabelStoreError, match="not a label store"):
        LabelStore(text)
    assert text.read_text() == "not a database, " * 100
    other = tmp_path / "other.sqlite"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    with pytest.raises(LabelStoreError, match="not a judgelab label store"):
        LabelStore(other)
    with pytest.raises(LabelStoreError, match="is a folder"):
        LabelStore(tmp_path)


def test_read_only_stores_are_read_and_refuse_writes(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    _session(path).label("i0", quality=2, safe="yes")
    reader = LabelSession(ITEMS, QUESTIONS, "ann", LabelStore(path, read_only=True))
    assert reader.current == "i1" and len(reader.table()) == 2
    with pytest.raises(LabelStoreError, match="opened read-only"):
        reader.label("i1", quality=3)
    # a file the database refuses to write (query_only stands for a read-only mount): one sentence, nothing stored
    writer = _session(path)
    writer.store._db.execute("PRAGMA query_only = 1")
    with pytest.raises(LabelStoreError, match="could not be written"):
        writer.label("i1", quality=3, safe="no")
    assert len(LabelStore(path).events()) == 2


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes any file: a read-only file cannot be made here")
def test_a_read_only_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    _session(path).label("i0", quality=2, safe="yes")
    path.chmod(0o444)
    with pytest.raises(LabelStoreError, match="read-only"):
        _session(path)


def test_two_annotators_write_one_file_at_once(tmp_path: Path) -> None:
    """Invariant: two writers on one file (two connections, as two kernels) lose no answer."""
    path = tmp_path / "l.sqlite"
    errors: list[BaseException] = []

    def work(name: str) -> None:
        try:
            s = LabelSession(ITEMS, QUESTIONS, name, path)
            for _ in range(len(ITEMS)):
                s.label(s.current, quality=2, safe="yes")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in ("ann", "bob")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    table = _session(path).table(everyone=True)
    assert table.groupby("judge").size().to_dict() == {"human:ann": 12, "human:bob": 12}


def test_every_refusal_is_a_judgelab_error(tmp_path: Path) -> None:
    for bad in (lambda: LabelStore(""), lambda: LabelStore(42),  # type: ignore[arg-type]
                lambda: Question("q", "score", scale=(5, 1)), lambda: Question("q", "label", labels=("x",)),
                lambda: Question("q", "colour"),  # type: ignore[arg-type]
                lambda: LabelSession(ITEMS, "junk", "ann", tmp_path / "a"),
                lambda: LabelSession(ITEMS, QUESTIONS, "a:b", tmp_path / "a"),
                lambda: LabelSession(ITEMS, QUESTIONS, "ann", tmp_path / "a", order=["i0", "zz"]),
                lambda: LabelSession(pd.DataFrame({"x": [1]}), QUESTIONS, "ann", tmp_path / "a")):
        with pytest.raises(JudgelabError):
            bad()
