"""Human-review queue: export low-confidence verdicts, label them, import them back as judge "human"."""

from __future__ import annotations

import pandas as pd
import pytest

from judgelab import judgments
from judgelab.ensembles.confidence import POSITION_CONDITION, position_consistency
from judgelab.ensembles.review import ReviewFileError, export_review, import_review
from judgelab.stats.agreement import percent_agreement


def _table():
    rows = []
    # judge "j": consistent on x1, x2 (confidence 1.0), inconsistent on x3 (TIE 0.5); x4's swapped pass failed
    passes = {"x1": ("A", "A"), "x2": ("B", "B"), "x3": ("A", "B"), "x4": ("A", None)}
    for item, (w1, w2) in passes.items():
        for cond, w in (("original", w1), ("swapped", w2)):
            ok = w is not None
            rows.append({"run_id": "r", "item_id": item, "rubric": "t", "criterion": "overall", "judge": "j",
                         "condition": cond, "repeat": 0, "status": "ok" if ok else "api_error",
                         "unscored_reason": None if ok else "timed out", "winner": w,
                         "raw_output": f"raw {item} {cond}", "call_id": f"{item}-{cond}"})
    t = judgments.make_table(rows)
    return pd.concat([t, position_consistency(t)], ignore_index=True)


ITEMS = pd.DataFrame({"item_id": ["x1", "x2", "x3", "x4"], "answer_a": ["a1", "a2", "a3", "a4"],
                      "answer_b": ["b1", "b2", "b3", "b4"]})


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_export_label_import_round_trip(tmp_path, suffix):
    table = _table()
    path = tmp_path / f"queue{suffix}"
    queue = export_review(table, path, threshold=0.75, condition=POSITION_CONDITION, items=ITEMS)
    assert list(queue["item_id"]) == ["x3", "x4"]  # the TIE at 0.5 and the unscored one
    assert {"answer_a", "answer_b", "label", "annotator", "notes"} <= set(queue.columns)
    assert queue.loc[queue["item_id"] == "x3", "j|original|raw_output"].iloc[0] == "raw x3 original"
    assert queue.loc[queue["item_id"] == "x4", "j|swapped|status"].iloc[0] == "api_error: timed out"
    labelled = queue.copy()
    labelled["label"] = ["b", None]  # x4 left for later
    labelled["annotator"] = ["ann", None]
    if suffix == ".csv":
        labelled.to_csv(path, index=False)
    else:
        labelled.to_parquet(path, index=False)
    labels = import_review(path, known_items=ITEMS)
    human = labels.table
    assert len(human) == 1 and labels.n_unlabelled == 1 and list(labels.unlabelled["item_id"]) == ["x4"]
    row = human.iloc[0]
    assert row["judge"] == "human:ann" and row["winner"] == "B" and row["status"] == "ok"
    both = judgments.validate(pd.concat([table, human], ignore_index=True))
    # every statistic works on the human rows: agreement of j's original pass with the human on x3
    res = percent_agreement("j", "human:ann", data=both[both["condition"] == "original"], value="winner",
                            n_resamples=100)
    assert res["n"].iloc[0] == 1 and res["estimate"].iloc[0] == 0.0


def test_bad_labels_and_unknown_items_are_clear_errors(tmp_path):
    path = tmp_path / "q.csv"
    queue = export_review(_table(), path, threshold=0.75, condition=POSITION_CONDITION)
    bad = queue.assign(label=["maybe", "A"])
    bad.to_csv(path, index=False)
    with pytest.raises(ReviewFileError, match=r"1 label\(s\) are not A, B or TIE \(row 2: 'maybe'\)"):
        import_review(path)
    unknown = queue.assign(label=["A", "B"], item_id=["x3", "zz"])
    unknown.to_csv(path, index=False)
    with pytest.raises(ReviewFileError, match=r"unknown item id\(s\) \['zz'\]"):
        import_review(path, known_items=["x1", "x2", "x3", "x4"])
    scores = queue.assign(label=["4", "11"])
    scores.to_csv(path, index=False)
    with pytest.raises(ReviewFileError, match="outside"):
        import_review(path, kind="score", scale=(1, 10))
    with pytest.raises(ReviewFileError, match="missing column"):
        queue.drop(columns=["label"]).to_csv(path, index=False)
        import_review(path)
    with pytest.raises(ValueError, match=r"\.csv or \.parquet"):
        export_review(_table(), tmp_path / "q.xlsx", threshold=0.5)
