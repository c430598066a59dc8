"""The live feedback: the statistics the widget shows after each label, from judgelab's own functions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judgelab import stats
from judgelab.judgments import combine, make_table
from judgelab.labels import LabelError, LabelSession
from judgelab.labels.feedback import feedback_html, live_feedback
from judgelab.viz import Labeler

N = 60
RNG = np.random.default_rng(3)
TRUTH = RNG.integers(1, 6, N).astype(float)
JUDGE = make_table([{"item_id": f"i{k}", "judge": "gpt", "rubric": "r", "criterion": "quality",
                     "condition": "original", "score": float(np.clip(TRUTH[k] + RNG.integers(-1, 2), 1, 5))}
                    for k in range(N)])
QUESTION = [{"name": "quality", "kind": "score", "scale": 5}]


def test_feedback_is_the_statistics_on_the_labels_so_far(tmp_path: Path) -> None:
    """Invariant: each number shown is what the named statistic gives on the judge's rows plus the labels."""
    lab = LabelSession(JUDGE, QUESTION, "ann", tmp_path / "l.sqlite")
    early = live_feedback(lab)
    assert early["estimate"].isna().all() and "at least two" in early["note"].iloc[0]
    for _ in range(20):
        lab.label(lab.current, quality=int(TRUTH[int(lab.current[1:])]))
    other = LabelSession(JUDGE, QUESTION, "bob", tmp_path / "l.sqlite")
    for _ in range(10):
        other.label(other.current, quality=int(TRUTH[int(other.current[1:])]))
    out = live_feedback(lab, target_width=1.0, n_resamples=200).set_index("metric")
    both = combine([JUDGE, lab.table().drop(columns=["annotator", "label_event", "label_seconds", "order_shown",
                                                     "verdict_shown"])])
    expected = stats.corrected_mean(both, judge="gpt", gold="human:ann", method="ppi++")
    assert out.loc["mean", "estimate"] == pytest.approx(expected.loc[expected["metric"] == "mean", "estimate"].iloc[0])
    kappa = stats.cohen_kappa("gpt", "human:ann", data=both, weights="quadratic", n_resamples=200)
    assert out.loc[kappa["metric"].iloc[0], "estimate"] == pytest.approx(kappa["estimate"].iloc[0])
    alpha = [m for m in out.index if m.startswith("krippendorff_alpha")]
    assert alpha and out.loc[alpha[0], "estimate"] == pytest.approx(1.0) and out.loc[alpha[0], "n"] == 10
    assert out.loc["labels_needed", "estimate"] >= 2
    text = feedback_html(out.reset_index())
    assert "corrected mean" in text and "more labels for an interval of width 1" in text and "annotators' α" in text


def test_the_widget_shows_feedback_after_each_label(tmp_path: Path) -> None:
    lab = Labeler(JUDGE, QUESTION, "ann", tmp_path / "l.sqlite", feedback={"n_resamples": 100})
    assert "label at least two items" in lab.stats.value
    lab.keys.value = "3"
    lab.keys.value = "4"
    assert "corrected mean</b>: " in lab.stats.value and "n = 60" in lab.stats.value
    with pytest.raises(LabelError, match="not a scored question"):
        live_feedback(lab, question="nope")


def test_feedback_uses_the_selection_weights(tmp_path: Path) -> None:
    table = JUDGE.assign(confidence=np.linspace(0.5, 1, N))
    selection = stats.select_for_labelling(table, judge="gpt", budget=15, strategy="active", seed=2)
    lab = LabelSession(table, QUESTION, "ann", tmp_path / "l.sqlite", order=selection)
    assert lab.current == selection["item_id"].iloc[0]
    for _ in range(15):
        lab.label(lab.current, quality=int(TRUTH[int(lab.current[1:])]))
    assert lab.current is None
    row = live_feedback(lab, weights=selection, n_resamples=100).set_index("metric").loc["mean"]
    assert "Zrnic & Candès" in row["method"]
    assert isinstance(feedback_html(pd.DataFrame([row.to_dict() | {"metric": "mean"}])), str)
