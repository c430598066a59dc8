"""Adjudication: the items annotators disagree on are queued; the adjudicated labels are one rater of their own."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgelab.labels import ADJUDICATED, LabelError, LabelSession, adjudicated_labels, adjudication_queue
from judgelab.viz import Labeler

ITEMS = pd.DataFrame({"item_id": [f"i{k}" for k in range(5)], "response": list("abcde")})
QUESTIONS = [{"name": "quality", "kind": "score", "scale": 5}, {"name": "safe", "kind": "label", "labels": ["y", "n"]}]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(["ann", "bob", "cy"]), st.integers(0, 4), st.integers(1, 5)),
                max_size=20), st.data())
def test_queue_and_adjudicated_rater_partition_the_items(tmp_path_factory: pytest.TempPathFactory,
                                                         answers: list[tuple[str, int, int]],
                                                         data: st.DataObject) -> None:
    """Invariant: an item labelled by two or more annotators is queued exactly when their live answers differ;
    the adjudicated rater has a row for every agreed item and every adjudicated one, and none for an item still in
    dispute, with the adjudicator's value where there is one."""
    path = tmp_path_factory.mktemp("adj") / "l.sqlite"
    sessions = {a: LabelSession(ITEMS, QUESTIONS[:1], a, path) for a in ("ann", "bob", "cy")}
    for who, item, score in answers:
        sessions[who].label(f"i{item}", quality=score)
    latest: dict[str, dict[str, float]] = {}
    for who, item, score in answers:
        latest.setdefault(f"i{item}", {})[who] = float(score)
    disputed = {i for i, v in latest.items() if len(v) >= 2 and len(set(v.values())) > 1}
    queue = adjudication_queue(sessions["ann"])
    assert set(queue["item_id"]) == disputed and not queue["adjudicated"].any()
    decide = data.draw(st.sets(st.sampled_from(sorted(disputed)))) if disputed else set()
    judge = LabelSession(ITEMS, QUESTIONS[:1], "adjudicator", path, order=queue if len(queue) else None)
    for item in sorted(decide):
        judge.label(item, quality=3)
    resolved = adjudicated_labels(judge).set_index("item_id")
    agreed = {i for i, v in latest.items() if len(set(v.values())) == 1}
    assert set(resolved.index) == agreed | decide and set(resolved["judge"]) <= {ADJUDICATED}
    for item in decide:
        assert resolved.loc[item, "score"] == 3
    assert set(adjudication_queue(judge)["adjudicated"]) <= {True, False}
    assert adjudication_queue(judge).set_index("item_id")["adjudicated"].to_dict() == {
        i: i in decide for i in disputed}


def test_label_questions_and_the_widget_take_the_queue(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    LabelSession(ITEMS, QUESTIONS, "ann", path).label("i2", quality=4, safe="y")
    LabelSession(ITEMS, QUESTIONS, "bob", path).label("i2", quality=4, safe="n")
    LabelSession(ITEMS, QUESTIONS, "bob", path).label("i3", quality=2, safe="n")
    queue = adjudication_queue(LabelSession(ITEMS, QUESTIONS, "ann", path))
    assert queue[["item_id", "question", "answers"]].values.tolist() == [["i2", "safe", "ann: y; bob: n"]]
    lab = Labeler(ITEMS, QUESTIONS, "adjudicator", path, order=queue)
    assert lab.current == "i2" and lab.bar.max == 1
    lab.keys.value = "41"
    resolved = adjudicated_labels(lab).set_index(["item_id", "criterion"])
    assert resolved["score"].dropna().to_dict() == {("i2", "quality"): 4.0, ("i3", "quality"): 2.0}
    assert resolved["verdict"].dropna().to_dict() == {("i2", "safe"): "y", ("i3", "safe"): "n"}
    assert "adjudicated by adjudicator" in resolved.loc[("i2", "safe"), "detail"]
    with pytest.raises(LabelError, match="adjudicator must be"):
        adjudication_queue(lab, adjudicator="a:b")
    with pytest.raises(LabelError, match="reads a Labeler"):
        adjudicated_labels(ITEMS)  # type: ignore[arg-type]
