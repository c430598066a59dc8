"""A second pass over the items annotators disagree on; the adjudicated labels become their own rater.

:func:`adjudication_queue` lists the items two or more annotators of a store labelled differently (scores apart by
at least ``min_difference``; labels or winners that differ), with every annotator's answer, in a frame a
:class:`~judgelab.labels.LabelSession` or ``judgelab.viz.Labeler`` takes as ``order=``: the adjudicator labels
them as any annotator does, into the same store, and their answers are rows of ``human:<adjudicator>``.

:func:`adjudicated_labels` is then one rater, ``human:adjudicated``: on every item the annotators labelled, the
adjudicator's answer where there was one, else the annotators' answer when they all agree. An item still in
dispute (nobody adjudicated it yet) has no row, and is counted in the ``note`` of
:func:`adjudication_queue` -- never settled by a vote.
"""

from __future__ import annotations

import pandas as pd

from judgelab.judgments import make_table
from judgelab.labels.questions import LabelError, Question
from judgelab.labels.session import LabelSession, human_judge

__all__ = ["ADJUDICATED", "adjudicated_labels", "adjudication_queue"]

ADJUDICATED = "human:adjudicated"


def _check(session: LabelSession, adjudicator: str) -> None:
    if not isinstance(session, LabelSession):
        raise LabelError(f"adjudication reads a Labeler or LabelSession, not {type(session).__name__}")
    if not isinstance(adjudicator, str) or not adjudicator.strip() or ":" in adjudicator:
        raise LabelError(f"adjudicator must be a non-empty name without ':', not {adjudicator!r}")


def _value_column(q: Question) -> str:
    return {"score": "score", "label": "verdict", "pairwise": "winner"}[q.kind]


def _disputed(values: pd.Series, q: Question, min_difference: float) -> bool:
    if q.kind == "score":
        return float(values.max() - values.min()) >= min_difference
    return values.nunique() > 1


def adjudication_queue(session: LabelSession, *, adjudicator: str = "adjudicator",
                       min_difference: float = 1.0) -> pd.DataFrame:
    """The items the annotators (every one of the store but ``adjudicator``) disagree on, one row per item and
    question: ``position``, ``item_id``, ``question``, ``n_annotators``, ``answers`` ("ann: 3; bob: 5"), and
    ``adjudicated`` (whether ``adjudicator`` has answered it since)."""
    _check(session, adjudicator)
    if not min_difference > 0:
        raise LabelError(f"min_difference must be positive, not {min_difference!r}")
    table = session.table(everyone=True)
    mine = human_judge(adjudicator)
    done = set(zip(table.loc[table["judge"] == mine, "item_id"], table.loc[table["judge"] == mine, "criterion"],
                   strict=True))
    rows = []
    for q in session.questions:
        if q.kind == "note":
            continue
        col = _value_column(q)
        rated = table[(table["criterion"] == q.name) & (table["judge"] != mine)]
        for item, group in rated.groupby("item_id", sort=False):
            if len(group) < 2 or not _disputed(group[col], q, min_difference):
                continue
            answers = "; ".join(f"{a}: {v:g}" if q.kind == "score" else f"{a}: {v}"
                                for a, v in zip(group["annotator"], group[col], strict=True))
            rows.append({"item_id": item, "question": q.name, "n_annotators": len(group), "answers": answers,
                         "adjudicated": (item, q.name) in done})
    queue = pd.DataFrame(rows, columns=["item_id", "question", "n_annotators", "answers", "adjudicated"])
    order = [i for i in session.order if i in set(queue["item_id"])]
    queue = queue.assign(_rank=queue["item_id"].map({i: k for k, i in enumerate(order)}))
    queue = queue.sort_values(["_rank", "question"], kind="stable").drop(columns="_rank").reset_index(drop=True)
    first = ~queue["item_id"].duplicated()
    positions = first.cumsum() - 1
    queue.insert(0, "position", positions.astype(int))
    return queue


def adjudicated_labels(session: LabelSession, *, adjudicator: str = "adjudicator") -> pd.DataFrame:
    """One rater, ``human:adjudicated``: the adjudicator's answer on disputed items, the agreed answer elsewhere.

    Items whose annotators gave different answers and nobody adjudicated have no row (with the default
    ``min_difference`` they are in :func:`adjudication_queue` with ``adjudicated=False``); ``detail`` says where
    each value came from.
    """
    _check(session, adjudicator)
    table = session.table(everyone=True)
    mine = human_judge(adjudicator)
    out = []
    for q in session.questions:
        if q.kind == "note":
            continue
        col = _value_column(q)
        rows = table[table["criterion"] == q.name]
        for _, group in rows.groupby("item_id", sort=False):
            decided = group[group["judge"] == mine]
            others = group[group["judge"] != mine]
            if len(decided):
                row, source = decided.iloc[0], f"adjudicated by {adjudicator}"
            elif len(others) and others[col].nunique() == 1:
                row, source = others.iloc[0], f"agreed by {len(others)} annotator(s)"
            else:
                continue
            out.append({"run_id": row["run_id"], "item_id": row["item_id"], "rubric": row["rubric"],
                        "criterion": q.name, "judge": ADJUDICATED, "condition": "original", "status": "ok",
                        col: row[col], "created_at": row["created_at"], "detail": {"source": source}})
    if not out:
        return make_table(pd.DataFrame(columns=["item_id"]))
    return make_table(out)
