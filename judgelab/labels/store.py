"""An append-only SQLite file of labelling events: every answer is kept, in order, with who gave it and how.

One row per event in ``events``; nothing is ever updated or deleted (two triggers refuse it). The kinds:

==============  ===========================================================================================
``answer``      one question answered for one item: ``value_num`` (a score) or ``value_text`` (a label, a
                winner in the original candidate labels, a note); ``seconds`` since the item was shown,
                ``order_shown`` ("AB" / "BA" for a pair, else NULL), ``verdict_shown`` (1 when the judge's
                verdict had been revealed before answering)
``skip``        the annotator passed the item by (it comes back after the unlabelled items)
``show_verdict`` the annotator revealed the judge's verdict for the item
``retract``     an undo: ``retracts`` names the action (the events written by one call) it takes back
==============  ===========================================================================================

Events written by one call share an ``action`` number (the first event's id); an undo retracts a whole action.
The live answer of an annotator to a question about an item is the latest answer whose action was not retracted.

Several annotators (or kernels) may write one file at once: WAL journal, a 30 s busy timeout, one transaction per
call. The ``store_info`` table records the format version; a file written by another version, a file that is not
a label store, and a store that cannot be written are refused in one sentence, before anything is changed.
"""

from __future__ import annotations

import datetime
import os
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from judgelab.errors import JudgelabError

__all__ = ["EVENT_KINDS", "STORE_VERSION", "LabelStore", "LabelStoreError"]

STORE_VERSION = 1
EVENT_KINDS: tuple[str, ...] = ("answer", "skip", "show_verdict", "retract")
_FIELDS: tuple[str, ...] = ("kind", "item_id", "question", "value_num", "value_text", "seconds", "order_shown",
                            "verdict_shown", "retracts")

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS store_info (version INTEGER NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (
    event_id INTEGER PRIMARY KEY AUTOINCREMENT,
    action INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ({", ".join(repr(k) for k in EVENT_KINDS)})),
    annotator TEXT NOT NULL,
    item_id TEXT,
    question TEXT,
    value_num REAL,
    value_text TEXT,
    time TEXT NOT NULL,
    seconds REAL,
    order_shown TEXT,
    verdict_shown INTEGER,
    retracts INTEGER
);
CREATE INDEX IF NOT EXISTS events_by_annotator ON events (annotator, event_id);
CREATE TRIGGER IF NOT EXISTS events_append_only_update BEFORE UPDATE ON events
    BEGIN SELECT RAISE(ABORT, 'the label store is append-only'); END;
CREATE TRIGGER IF NOT EXISTS events_append_only_delete BEFORE DELETE ON events
    BEGIN SELECT RAISE(ABORT, 'the label store is append-only'); END;
"""


class LabelStoreError(JudgelabError, OSError):
    """A label store that cannot be opened or written as asked; says which file and what to do."""


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="microseconds")


class LabelStore:
    """The append-only label file at ``path`` (created when absent). ``read_only=True`` opens it for reading."""

    def __init__(self, path: str | os.PathLike[str], *, read_only: bool = False) -> None:
        if not isinstance(path, str | os.PathLike) or not str(path).strip():
            raise LabelStoreError(f"a label store is a file path, not {path!r}")
        self.path = Path(path)
        self.read_only = bool(read_only)
        if self.path.is_dir():
            raise LabelStoreError(f"label store {str(self.path)!r} is a folder; name a file such as labels.sqlite")
        exists = self.path.exists()
        if read_only and not exists:
            raise LabelStoreError(f"label store {str(self.path)!r} does not exist; check the path")
        if not read_only:
            folder = self.path.parent if str(self.path.parent) else Path(".")
            if (exists and not os.access(self.path, os.W_OK)) or not folder.is_dir() or not os.access(folder, os.W_OK):
                raise LabelStoreError(f"label store {str(self.path)!r} is read-only (the file or its folder cannot be "
                                      "written); open it with read_only=True to read it, or copy it somewhere writable")
        try:
            if read_only:
                # as_uri escapes the characters a URI would read ('?', '#', '%')
                self._db = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, timeout=30,
                                           isolation_level=None, check_same_thread=False)
            else:
                self._db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
                self._db.execute("PRAGMA busy_timeout = 30000")
                self._db.execute("PRAGMA journal_mode = WAL")
                self._db.execute("PRAGMA synchronous = FULL")  # a label survives a crash the moment it is stored
            self._open(exists)
        except sqlite3.DatabaseError as exc:
            raise LabelStoreError(f"{str(self.path)!r} is not a label store this judgelab can open ({exc}); name a "
                                  "new file or the store the Labeler wrote") from exc

    def _open(self, exists: bool) -> None:
        tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if exists and tables and "store_info" not in tables:
            raise LabelStoreError(f"{str(self.path)!r} is a SQLite file but not a judgelab label store (tables: "
                                  f"{', '.join(sorted(tables))}); name a new file for the labels")
        if not self.read_only:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for statement in filter(str.strip, _SCHEMA.split(";\n")):
                    if "CREATE TRIGGER" in statement:
                        statement += ";"  # the trigger body's own END needs the terminator back
                    self._db.execute(statement)
                if not self._db.execute("SELECT COUNT(*) FROM store_info").fetchone()[0]:
                    self._db.execute("INSERT INTO store_info VALUES (?, ?)", (STORE_VERSION, _now()))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        versions = sorted({int(r[0]) for r in self._db.execute("SELECT version FROM store_info")})
        if versions != [STORE_VERSION]:
            raise LabelStoreError(f"label store {str(self.path)!r} was written in format version(s) {versions}; this "
                                  f"judgelab reads version {STORE_VERSION}: open it with the judgelab that wrote it, "
                                  "or start a new store")

    def close(self) -> None:
        """Close the file (every event is already committed)."""
        self._db.close()

    def __enter__(self) -> LabelStore:
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"LabelStore({str(self.path)!r}{', read_only=True' if self.read_only else ''})"

    # ------------------------------------------------------------------------------------------ writing

    def append(self, annotator: str, events: Sequence[Mapping[str, Any]]) -> int:
        """Write ``events`` (mappings of the event fields) as one action of ``annotator``; returns its number.

        All of them are committed together, or none.
        """
        if self.read_only:
            raise LabelStoreError(f"label store {str(self.path)!r} was opened read-only; open it without "
                                  "read_only=True to label")
        if not isinstance(annotator, str) or not annotator.strip():
            raise LabelStoreError(f"an annotator is a non-empty name, not {annotator!r}")
        if not events:
            raise LabelStoreError("nothing to store: an action needs at least one event")
        for event in events:
            unknown = sorted(set(event) - set(_FIELDS))
            if unknown or event.get("kind") not in EVENT_KINDS:
                raise LabelStoreError(f"an event has unknown field(s) {unknown} or kind {event.get('kind')!r}; "
                                      f"fields: {', '.join(_FIELDS)}; kinds: {', '.join(EVENT_KINDS)}")
        now = _now()
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                first = None
                # the action number is the first event's id, unknown before its insert (rows are never updated):
                # the first event stores -1, read back as its own id (events())
                for event in events:
                    values = [event.get(f) for f in _FIELDS]
                    cursor = self._db.execute(
                        f"INSERT INTO events (action, annotator, time, {', '.join(_FIELDS)}) "
                        f"VALUES (?, ?, ?, {', '.join('?' * len(_FIELDS))})",
                        [first if first is not None else -1, annotator, now, *values])
                    if first is None:
                        first = int(cursor.lastrowid or 0)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        except sqlite3.OperationalError as exc:
            raise LabelStoreError(f"label store {str(self.path)!r} could not be written ({exc}); nothing of this "
                                  "action was stored: check the file is writable and not locked by another program") \
                from exc
        assert first is not None
        return first

    def undo(self, annotator: str) -> int | None:
        """Retract ``annotator``'s latest action (answers or a skip) that is still live; its number, or None."""
        live = self._live_actions(annotator)
        if not live:
            return None
        action = live[-1]
        self.append(annotator, [{"kind": "retract", "retracts": action}])
        return action

    # ------------------------------------------------------------------------------------------ reading

    def events(self, annotator: str | None = None) -> pd.DataFrame:
        """Every event in the order written (one annotator's with ``annotator=``), ``action`` resolved."""
        query = "SELECT * FROM events" + (" WHERE annotator = ?" if annotator is not None else "") + " ORDER BY event_id"
        try:
            frame = pd.read_sql_query(query, self._db, params=(annotator,) if annotator is not None else None)
        except (sqlite3.DatabaseError, pd.errors.DatabaseError) as exc:
            raise LabelStoreError(f"label store {str(self.path)!r} could not be read ({exc})") from exc
        # an action's first event carries -1 (its own id was unknown when written): it is its own action
        frame["action"] = frame["action"].where(frame["action"] >= 0, frame["event_id"])
        return frame

    def has_event(self, annotator: str, kind: str, item_id: str) -> bool:
        """Whether ``annotator`` wrote an event of ``kind`` about ``item_id`` (retracted or not)."""
        row = self._db.execute("SELECT 1 FROM events WHERE annotator = ? AND kind = ? AND item_id = ? LIMIT 1",
                               (annotator, kind, item_id)).fetchone()
        return row is not None

    def _live_actions(self, annotator: str) -> list[int]:
        frame = self.events(annotator)
        retracted = set(frame.loc[frame["kind"] == "retract", "retracts"].dropna().astype(int))
        acts = frame[frame["kind"].isin(["answer", "skip"])]["action"].drop_duplicates()
        return [int(a) for a in acts if int(a) not in retracted]

    def live(self, annotator: str | None = None) -> pd.DataFrame:
        """The live events (answers, skips, verdict reveals) not taken back by an undo, in order."""
        frame = self.events(annotator)
        retracted = set(zip(frame.loc[frame["kind"] == "retract", "annotator"],
                            frame.loc[frame["kind"] == "retract", "retracts"].dropna().astype(int), strict=False))
        keep = frame["kind"].ne("retract") & ~pd.Series(
            [(a, int(x)) in retracted for a, x in zip(frame["annotator"], frame["action"], strict=True)],
            index=frame.index, dtype=bool)
        return frame[keep].reset_index(drop=True)

    def answers(self, annotator: str | None = None) -> pd.DataFrame:
        """The live answer of each annotator to each question about each item: the latest not undone."""
        live = self.live(annotator)
        answers = live[live["kind"] == "answer"]
        return answers.drop_duplicates(["annotator", "item_id", "question"], keep="last").reset_index(drop=True)
