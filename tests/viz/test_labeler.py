"""The Labeler widget, driven headless through its keys box and buttons (the same code the browser's keys reach)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import judgelab
from judgelab.judgments import make_table
from judgelab.labels import LabelSession
from judgelab.viz import Labeler

ITEMS = pd.DataFrame({"item_id": [f"p{k}" for k in range(6)], "prompt": [f"question {k}" for k in range(6)],
                      "output_1": [f"first answer {k}" for k in range(6)],
                      "output_2": [f"second answer {k}" for k in range(6)], "label": ["A"] * 6})
JUDGE = make_table([{"item_id": f"p{k}", "judge": "gpt", "rubric": "pairwise", "criterion": "overall",
                     "condition": "original", "winner": "AB"[k % 2]} for k in range(6)])
PAIR = [{"name": "overall", "kind": "pairwise"}, {"name": "note", "kind": "note"}]


def test_keys_label_pairs_in_original_labels_and_record_the_shown_order(tmp_path: Path) -> None:
    """Invariant: 'a' answers the candidate shown on the left, stored in the data's original label."""
    lab = Labeler(JUDGE, PAIR, "ann", tmp_path / "l.sqlite", items=ITEMS, seed=3)
    shown = {}
    for _ in range(6):
        item = lab.current
        shown[item] = lab.order_shown(item)
        left_text = lab.view.value.split("<b>A</b>")[1]
        original = "A" if "first answer" in left_text.split("<b>B</b>")[0] else "B"
        assert original == shown[item][0]
        lab.keys.value = "a"
    assert lab.current is None and lab.bar.value == 6 and "all 6 items labelled" in lab.header.value
    table = lab.table().set_index("item_id")
    assert set(shown.values()) == {"AB", "BA"}  # both orders occur over six items (seed 3)
    for item, order in shown.items():
        assert table.loc[item, "winner"] == order[0] and table.loc[item, "order_shown"] == order


def test_verdict_hidden_until_toggled_and_the_toggle_is_recorded(tmp_path: Path) -> None:
    lab = Labeler(JUDGE, PAIR, "ann", tmp_path / "l.sqlite", items=ITEMS)
    assert lab.verdict_view.value == "" and not lab.verdict_toggle.value
    first = lab.current
    lab.verdict_toggle.value = True
    assert "judge gpt" in lab.verdict_view.value
    lab.keys.value = "t"
    assert lab.verdict_view.value == "" and not lab.verdict_toggle.value  # hidden again on the next item
    lab.keys.value = "b"
    table = lab.table().set_index("item_id")
    assert table.loc[first, "verdict_shown"] and not table.loc[lab.order[1], "verdict_shown"]
    assert list(lab.store.events()["kind"]) == ["show_verdict", "answer", "answer"]


def test_scores_by_digits_with_undo_skip_next_and_resume(tmp_path: Path) -> None:
    """Invariant: what the keys stored is what a new Labeler on the store (a restarted kernel) resumes from."""
    questions = [{"name": "coherence", "kind": "score", "scale": 5, "anchors": {1: "incoherent", 5: "coherent"}},
                 {"name": "fluent", "kind": "label", "labels": ["yes", "no"]}]
    lab = Labeler(ITEMS, questions, "ann", tmp_path / "l.sqlite")
    lab.keys.value = "4"
    assert lab.current == "p0" and lab.controls["coherence"].value == "4"  # pending until every question answers
    lab.keys.value = "1"  # fluent = yes: both answered, stored, next item
    assert lab.current == "p1" and lab.bar.value == 1
    lab.keys.value = "s"  # skip p1
    lab.keys.value = "52"  # p2: coherence 5, fluent no
    lab.keys.value = "3n"  # p3: only coherence, then next: stored and passed by
    assert lab.current == "p4"
    lab.keys.value = "u"  # undo the skip n made
    assert lab.current == "p3"
    lab.keys.value = "9"
    assert "not a shortcut" in lab.message.value
    restarted = Labeler(ITEMS, questions, "ann", tmp_path / "l.sqlite")
    assert restarted.current == "p3" and restarted.bar.value == 2
    got = restarted.table().pivot(index="item_id", columns="criterion", values=["score", "verdict"])
    assert got[("score", "coherence")].to_dict() == {"p0": 4.0, "p2": 5.0, "p3": 3.0}
    assert got[("verdict", "fluent")].dropna().to_dict() == {"p0": "yes", "p2": "no"}
    restarted.keys.value = "2"
    restarted.keys.value = "1"
    assert restarted.current == "p4"  # the skipped p1 comes back after the fresh items


def test_clicks_and_label_share_the_path_and_refusals_show_in_the_widget(tmp_path: Path) -> None:
    rubric = judgelab.load_rubric("direct_score")
    items = ITEMS.rename(columns={"output_1": "response"}).drop(columns=["output_2"])
    lab = Labeler(items, rubric, "ann", tmp_path / "l.sqlite", show_gold=True)
    assert [q.name for q in lab.questions] == ["factual_accuracy", "instruction_following"]
    assert "(gold / reference)" in lab.view.value
    lab.controls["factual_accuracy"].value = "5"
    lab.controls["instruction_following"].value = "2"
    lab.label("p3", factual_accuracy=1, instruction_following=1)
    lab.press("u")
    assert lab.current == "p3"
    script = LabelSession(items, rubric, "ann", tmp_path / "l.sqlite")
    assert script.table()[["item_id", "criterion", "score"]].values.tolist() == [
        ["p0", "factual_accuracy", 5.0], ["p0", "instruction_following", 2.0]]
    assert script.table()["judge"].unique().tolist() == ["human:ann"]


def test_pending_answers_are_dropped_when_the_item_changes(tmp_path: Path) -> None:
    questions = [{"name": "q1", "kind": "score", "scale": 3}, {"name": "q2", "kind": "score", "scale": 3}]
    lab = Labeler(ITEMS, questions, "ann", tmp_path / "l.sqlite")
    lab.keys.value = "2s"
    assert lab.pending == {} and lab.current == "p1"
    with pytest.raises(judgelab.JudgelabError):
        lab.label("p1", q1=4)
