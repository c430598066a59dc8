"""Generated interleavings of label / undo / skip / restart by two annotators on one store, against a model."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgelab.labels import LabelSession, Question

ITEMS = pd.DataFrame({"item_id": [f"i{k}" for k in range(4)], "response": list("abcd")})
QUESTIONS = [Question("quality", "score", scale=(1, 5)), Question("winner", "pairwise"), Question("note", "note")]
REQUIRED = ("quality", "winner")
ANSWER = {"quality": st.integers(1, 5), "winner": st.sampled_from(["A", "B", "TIE", "a", "tie"]),
          "note": st.text(max_size=5)}

answers = st.fixed_dictionaries({}, optional=ANSWER).filter(bool)
steps = st.lists(st.one_of(
    st.tuples(st.just("label"), st.sampled_from(["ann", "bob"]), st.sampled_from(list(ITEMS["item_id"])), answers),
    st.tuples(st.just("undo"), st.sampled_from(["ann", "bob"])),
    st.tuples(st.just("skip"), st.sampled_from(["ann", "bob"]), st.sampled_from(list(ITEMS["item_id"]))),
    st.tuples(st.just("restart"))), max_size=25)


def _stored(question: str, value: Any) -> Any:
    if question == "quality":
        return float(value)
    return value.upper() if question == "winner" else value


def _model_next(actions: list[tuple[str, str, dict[str, Any]]]) -> str | None:
    answered: dict[str, set[str]] = {}
    skipped = set()
    for kind, item, given_answers in actions:
        if kind == "label":
            answered.setdefault(item, set()).update(given_answers)
        else:
            skipped.add(item)
    todo = [i for i in ITEMS["item_id"] if not set(REQUIRED) <= answered.get(i, set())]
    fresh = [i for i in todo if i not in skipped]
    return fresh[0] if fresh else (todo[0] if todo else None)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps)
def test_every_live_answer_is_in_the_table_exactly_once(plan: list[tuple]) -> None:
    """Invariant: after any interleaving of label / undo / skip / kernel restart by two annotators on one store,
    ``table(everyone=True)`` holds exactly one row per (annotator, item, question) answered and not undone, with
    the value of the latest such answer; undo takes back an annotator's latest live action (answers or a skip);
    and a new session resumes on the model's next item (the first unanswered, unskipped one, then skipped ones)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "labels.sqlite"
        sessions = {a: LabelSession(ITEMS, QUESTIONS, a, path) for a in ("ann", "bob")}
        actions: dict[str, list[tuple[str, str, dict[str, Any]]]] = {"ann": [], "bob": []}
        for step in plan:
            if step[0] == "label":
                _, who, item, given_answers = step
                sessions[who].label(item, **given_answers)
                actions[who].append(("label", item, {q: _stored(q, v) for q, v in given_answers.items()}))
            elif step[0] == "undo":
                undone = sessions[step[1]].undo()
                assert undone == (actions[step[1]].pop()[1] if actions[step[1]] else None)
            elif step[0] == "skip":
                sessions[step[1]].skip(step[2])
                actions[step[1]].append(("skip", step[2], {}))
            else:
                for s in sessions.values():
                    s.store.close()
                sessions = {a: LabelSession(ITEMS, QUESTIONS, a, path) for a in ("ann", "bob")}
                for who, session in sessions.items():
                    assert session.current == _model_next(actions[who])
        expected: dict[tuple[str, str, str], Any] = {}
        for who, done in actions.items():
            for kind, item, given_answers in done:
                if kind == "label":
                    expected.update({(f"human:{who}", item, q): v for q, v in given_answers.items()})
        table = sessions["ann"].table(everyone=True)
        keys = list(zip(table["judge"], table["item_id"], table["criterion"], strict=True))
        assert len(keys) == len(set(keys)) == len(expected)
        for row in table.itertuples():
            value = {"quality": row.score, "winner": row.winner, "note": row.verdict}[row.criterion]
            assert value == expected[(row.judge, row.item_id, row.criterion)]
        for s in sessions.values():
            s.store.close()
