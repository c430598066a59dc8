"""One annotator labelling a list of items into a :class:`~judgelab.labels.store.LabelStore`.

:class:`LabelSession` is everything the labelling widget does except drawing (``judgelab.viz.Labeler`` adds
the view and the keys, and every key calls the same methods): ``label(item_id, **answers)`` checks every answer
against its question and stores them as one action; ``undo()`` appends a retraction of the annotator's latest
live action; ``skip()`` passes the current item by; ``reveal_verdict()`` records that the judge's verdict was
shown. ``current`` is the next item to label, worked out from the store alone, so a new session on the same
file (after a kernel restart) resumes where the annotator stopped: the first item in ``order`` with an
unanswered question and no live skip, then the skipped ones. ``table()`` returns the live answers as judgments
rows, judge ``"human:<annotator>"``, with their provenance.

Pairs are shown in a per-item order ("AB" or "BA") drawn from a hash of ``seed``, the annotator and the item, so
it is the same after a restart, differs between annotators, and is stored with every answer.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgelab.judgments import make_table
from judgelab.labels.questions import LabelError, Question, read_questions
from judgelab.labels.store import LabelStore

__all__ = ["PROVENANCE_COLUMNS", "LabelSession", "human_judge", "is_judgments_table", "shown_order"]

# extra columns of LabelSession.table(), after the judgments schema
PROVENANCE_COLUMNS: tuple[str, ...] = ("annotator", "label_event", "label_seconds", "order_shown", "verdict_shown")


def human_judge(annotator: str) -> str:
    """The judge name of an annotator's labels in a judgments table."""
    return f"human:{annotator}"


def is_judgments_table(frame: pd.DataFrame) -> bool:
    """Whether ``frame`` is a judgments table (rows of judges) rather than a frame of items."""
    return {"item_id", "judge", "status"} <= set(frame.columns)


def shown_order(seed: int, annotator: str, item_id: str) -> str:
    """"AB" or "BA": the order a pair is shown in, fixed by the seed, the annotator and the item."""
    digest = hashlib.sha256(f"{seed}\x1f{annotator}\x1f{item_id}".encode()).digest()
    return "AB" if digest[0] % 2 == 0 else "BA"


def _order(order: Any, ids: list[str]) -> list[str]:
    if order is None:
        return ids
    if isinstance(order, pd.DataFrame):
        if "item_id" not in order.columns:
            raise LabelError("order= as a frame needs an 'item_id' column (e.g. stats.select_for_labelling's result)")
        frame = order.sort_values("position", kind="stable") if "position" in order.columns else order
        order = frame["item_id"].tolist()
    if isinstance(order, str) or not isinstance(order, Sequence | pd.Series | np.ndarray):
        raise LabelError(f"order= is a list of item ids or a selection frame, not {type(order).__name__}")
    listed = [str(i) for i in order]
    known = set(ids)
    unknown = [i for i in listed if i not in known]
    if unknown:
        raise LabelError(f"order= names {len(unknown)} item(s) that are not among the items (first {unknown[0]!r})")
    if len(set(listed)) != len(listed):
        raise LabelError("order= lists an item twice; list each item once")
    if not listed:
        raise LabelError("order= is empty; list the items to label")
    return listed


class LabelSession:
    """``annotator`` labelling ``items_or_table`` with ``questions`` into ``store`` (a path or a LabelStore).

    ``items_or_table``: a frame of items (an ``item_id`` column and their fields) or a judgments table (its
    items, and the verdicts of ``judge``, shown on request); ``items=`` adds the item texts to a table.
    ``order``: the items to label and in which order (ids, or ``stats.select_for_labelling``'s frame); default
    every item in the order given. ``seed``: the pairs' shown orders.
    """

    def __init__(self, items_or_table: pd.DataFrame, questions: Any, annotator: str, store: Any, *,
                 items: pd.DataFrame | None = None, judge: str | None = None, order: Any = None,
                 seed: int = 0) -> None:
        if not isinstance(items_or_table, pd.DataFrame) or "item_id" not in items_or_table.columns:
            raise LabelError("items_or_table must be a frame of items or a judgments table, with an 'item_id' column")
        if not isinstance(annotator, str) or not annotator.strip() or ":" in annotator:
            raise LabelError(f"annotator must be a non-empty name without ':', not {annotator!r}")
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
            raise LabelError(f"seed must be a non-negative integer, not {seed!r}")
        self.questions: tuple[Question, ...] = read_questions(questions)
        self.rubric = str(getattr(getattr(questions, "spec", None), "name", "labels"))
        self.annotator = annotator
        self.seed = int(seed)
        self.store = store if isinstance(store, LabelStore) else LabelStore(store)
        self.judge, self.verdicts = None, pd.DataFrame()
        if is_judgments_table(items_or_table):
            self.judge = judge if judge is not None else self._only_judge(items_or_table)
            rows = items_or_table[items_or_table["judge"] == self.judge]
            if rows.empty:
                raise LabelError(f"judge {self.judge!r} has no rows in the table; name one of its judges with judge=")
            self.verdicts = rows.assign(item_id=rows["item_id"].astype(str))
            ids = list(dict.fromkeys(self.verdicts["item_id"]))
            self.items = None if items is None else self._items(items)
        else:
            if judge is not None:
                raise LabelError("judge= names a judge of a judgments table; these are items: pass the table instead")
            self.items = self._items(items_or_table)
            ids = list(self.items.index)
        self.order: list[str] = _order(order, ids)
        self._known = set(ids)  # every item may be labelled (and is in table()); order is the sequence offered
        self._shown_at: dict[str, float] = {}
        self.current: str | None = self.next_item()
        self._mark_shown()

    @staticmethod
    def _items(frame: pd.DataFrame) -> pd.DataFrame:
        if not isinstance(frame, pd.DataFrame) or "item_id" not in frame.columns:
            raise LabelError("items= must be a frame with an 'item_id' column")
        ids = frame["item_id"].astype(str)
        if ids.duplicated().any():
            raise LabelError(f"item {ids[ids.duplicated()].iloc[0]!r} is listed twice among the items; one row per item")
        if ids.empty:
            raise LabelError("there are no items to label")
        return frame.assign(item_id=ids).set_index("item_id", drop=False)

    @staticmethod
    def _only_judge(table: pd.DataFrame) -> str:
        judges = sorted({str(j) for j in table["judge"].dropna()
                         if not str(j).startswith(("human", "gold", "panel:"))})
        if len(judges) != 1:
            raise LabelError(f"the table has {len(judges)} model judges ({', '.join(judges[:8])}); name the one whose "
                             "verdict may be shown with judge=")
        return judges[0]

    # ------------------------------------------------------------------------------------------ state

    @property
    def pairwise(self) -> bool:
        return any(q.kind == "pairwise" for q in self.questions)

    def _required(self) -> list[str]:
        return [q.name for q in self.questions if q.kind != "note"]

    def progress(self) -> tuple[int, int]:
        """(items with every question answered by this annotator, items to label)."""
        answers = self.store.answers(self.annotator)
        done = answers[answers["item_id"].isin(set(self.order))].groupby("item_id")["question"].agg(set)
        need = set(self._required())
        return int(sum(1 for qs in done if need <= qs)), len(self.order)

    def next_item(self) -> str | None:
        """The first item with an unanswered question and no live skip, then the first skipped one; None: done."""
        live = self.store.live(self.annotator)
        answers = live[live["kind"] == "answer"]
        answered = answers.groupby("item_id")["question"].agg(set).to_dict()
        skipped = set(live.loc[live["kind"] == "skip", "item_id"])
        need = set(self._required())
        todo = [i for i in self.order if not need <= answered.get(i, set())]
        fresh = [i for i in todo if i not in skipped]
        return fresh[0] if fresh else (todo[0] if todo else None)

    def order_shown(self, item_id: str) -> str | None:
        """"AB" / "BA" for a pair (the candidates' order on screen), None when no question is pairwise."""
        return shown_order(self.seed, self.annotator, str(item_id)) if self.pairwise else None

    def verdict_was_shown(self, item_id: str) -> bool:
        """Whether this annotator revealed the judge's verdict on the item (a reveal is never undone)."""
        return self.store.has_event(self.annotator, "show_verdict", str(item_id))

    def verdict(self, item_id: str) -> pd.DataFrame:
        """The judge's rows for the item (empty without a judgments table)."""
        if self.verdicts.empty:
            return self.verdicts
        return self.verdicts[self.verdicts["item_id"] == str(item_id)]

    def _item(self, item_id: Any) -> str:
        key = str(item_id) if item_id is not None else self.current
        if key is None:
            raise LabelError("every item is labelled; pass an item_id to change an answer")
        if key not in self._known:
            raise LabelError(f"unknown item id {key!r}: it is not among the {len(self._known)} items of this labeller")
        return key

    def _mark_shown(self) -> None:
        if self.current is not None:
            self._shown_at.setdefault(self.current, time.monotonic())

    def _advance(self, item_id: str) -> None:
        if item_id == self.current or self.current is None:
            self.current = self.next_item()
            self._mark_shown()

    # ------------------------------------------------------------------------------------------ actions

    def label(self, item_id: Any, **answers: Any) -> int:
        """Answer questions about an item (``label("i3", coherence=4, note="...")``); all are stored or none.

        Returns the action number in the store. A pair's winner is in the ORIGINAL labels ("A" is the first
        candidate of the data), whatever order was shown.
        """
        key = self._item(item_id)
        if not answers:
            raise LabelError(f"no answer given for item {key!r}; answer e.g. "
                             f"{self.questions[0].name}=... (questions: {', '.join(q.name for q in self.questions)})")
        by_name = {q.name: q for q in self.questions}
        unknown = [n for n in answers if n not in by_name]
        if unknown:
            raise LabelError(f"unknown question(s) {unknown}; questions: {', '.join(by_name)}")
        checked = {n: by_name[n].check(v) for n, v in answers.items()}
        started = self._shown_at.get(key)
        seconds = None if started is None else round(time.monotonic() - started, 3)
        shown = int(self.verdict_was_shown(key))
        events = [{"kind": "answer", "item_id": key, "question": n,
                   "value_num": v if isinstance(v, float) else None, "value_text": v if isinstance(v, str) else None,
                   "seconds": seconds, "order_shown": self.order_shown(key), "verdict_shown": shown}
                  for n, v in checked.items()]
        action = self.store.append(self.annotator, events)
        self._advance(key)
        return action

    def skip(self, item_id: Any = None) -> int:
        """Pass the item (default: the current one) by; it comes back after the unlabelled items."""
        key = self._item(item_id)
        action = self.store.append(self.annotator, [{"kind": "skip", "item_id": key}])
        if key == self.current:  # the next fresh item; the skipped one itself when nothing else is left
            self.current = self.next_item()
            self._mark_shown()
        return action

    def undo(self) -> str | None:
        """Take back this annotator's latest live action (answers or a skip); the item it was about, or None."""
        action = self.store.undo(self.annotator)
        if action is None:
            return None
        events = self.store.events(self.annotator)
        item = str(events.loc[events["action"] == action, "item_id"].iloc[0])
        if item in set(self.order):  # back on the item whose answer was taken back
            self.current = item
            self._shown_at[item] = time.monotonic()
        else:
            self.current = self.next_item()
            self._mark_shown()
        return item

    def reveal_verdict(self, item_id: Any = None) -> pd.DataFrame:
        """Record that the judge's verdict was shown for the item, and return the judge's rows for it."""
        key = self._item(item_id)
        self.store.append(self.annotator, [{"kind": "show_verdict", "item_id": key}])
        return self.verdict(key)

    # ------------------------------------------------------------------------------------------ output

    def table(self, *, everyone: bool = False) -> pd.DataFrame:
        """The live answers as a judgments table: one row per item and question of ``human:<annotator>``.

        ``everyone=True``: every annotator of the store, each as their own rater. Provenance: ``created_at``
        (when the answer was stored), and the columns ``annotator``, ``label_event``, ``label_seconds``,
        ``order_shown``, ``verdict_shown``; ``detail`` repeats them as JSON.
        """
        answers = self.store.answers(None if everyone else self.annotator)
        by_name = {q.name: q for q in self.questions}
        answers = answers[answers["item_id"].isin(self._known) & answers["question"].isin(by_name)]
        rows = []
        for r in answers.itertuples(index=False):
            kind = by_name[r.question].kind
            value = r.value_num if kind == "score" else r.value_text
            provenance = {"annotator": r.annotator, "label_event": int(r.event_id),
                          "label_seconds": None if pd.isna(r.seconds) else float(r.seconds),
                          "order_shown": None if r.order_shown is None or pd.isna(r.order_shown) else r.order_shown,
                          "verdict_shown": bool(r.verdict_shown)}
            rows.append({"run_id": f"labels:{self.store.path.name}", "item_id": r.item_id, "rubric": self.rubric,
                         "criterion": r.question, "judge": human_judge(r.annotator), "condition": "original",
                         "status": "ok", "score": value if kind == "score" else None,
                         "winner": value if kind == "pairwise" else None,
                         "verdict": value if kind in ("label", "note") else None,
                         "created_at": pd.Timestamp(r.time), "detail": json.dumps(provenance), **provenance})
        if not rows:
            return make_table(pd.DataFrame(columns=["item_id", *PROVENANCE_COLUMNS]))
        return make_table(rows)
