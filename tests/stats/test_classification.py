"""classification_report and confusion_matrix: scikit-learn's numbers, honest intervals, named zero-division rule."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn import metrics as sk

from judgelab.judgments import make_table
from judgelab.stats import classification_report, confusion_matrix
from judgelab.stats.pairing import StatsInputError

CLASSES = ("A", "B", "TIE", "X")


@st.composite
def labelled(draw: st.DrawFn) -> tuple[list[str], list[str], list[str] | None]:
    """(gold, predicted, labels): labels from a small alphabet, so classes go missing on one side or both, and a
    labels= list (or None) that covers every observed class and may add classes neither side uses."""
    alphabet = draw(st.lists(st.sampled_from(CLASSES), min_size=1, max_size=4, unique=True))
    n = draw(st.integers(1, 40))
    gold = draw(st.lists(st.sampled_from(alphabet), min_size=n, max_size=n))
    pred = draw(st.lists(st.sampled_from(alphabet), min_size=n, max_size=n))
    if draw(st.booleans()):
        return gold, pred, None
    extra = draw(st.lists(st.sampled_from(CLASSES), unique=True))
    labels = list(dict.fromkeys([*draw(st.permutations(sorted(set(gold) | set(pred)))), *extra]))
    return gold, pred, labels


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-12


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(labelled(), st.sampled_from(["macro", "micro", "weighted", None]), st.sampled_from([np.nan, 0.0, 1.0]))
def test_estimates_equal_scikit_learn(case: tuple[list[str], list[str], list[str] | None], average: str | None,
                                      zero_division: float) -> None:
    """Invariant: every estimate (accuracy, and precision/recall/F1 under each average and zero-division rule) equals
    scikit-learn's to 1e-12 on random labels, with classes missing from gold, from the judge, or from both."""
    gold, pred, labels = case
    report = classification_report(pred, gold, labels=labels, average=average, zero_division=zero_division,
                                   n_resamples=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        precision, recall, f1, support = sk.precision_recall_fscore_support(
            gold, pred, labels=labels, average=average, zero_division=zero_division)
    assert _same(report.loc[report.metric == "accuracy", "estimate"].item(), sk.accuracy_score(gold, pred))
    assert (report["n"] == len(gold)).all()
    if average is None:
        classes = labels if labels is not None else sorted(set(gold) | set(pred))
        for name, expected in (("precision", precision), ("recall", recall), ("f1", f1)):
            got = report[report.metric == name]
            assert list(got["label"]) == list(classes)
            assert all(_same(a, b) for a, b in zip(got["estimate"], expected, strict=True))
        assert list(report.loc[report.metric == "f1", "support"]) == list(support)
    else:
        for name, expected in (("precision", precision), ("recall", recall), ("f1", f1)):
            assert _same(report.loc[report.metric == f"{name}_{average}", "estimate"].item(), float(expected))


@settings(max_examples=60, deadline=None)
@given(labelled())
def test_confusion_matrix_equals_scikit_learn(case: tuple[list[str], list[str], list[str] | None]) -> None:
    """Invariant: the tidy counts, read row by row, are scikit-learn's confusion_matrix(gold, predicted); every
    gold row's shares sum to 1 (NaN for a class gold never uses); every K x K cell is listed."""
    gold, pred, labels = case
    cm = confusion_matrix(pred, gold, labels=labels)
    classes = labels if labels is not None else sorted(set(gold) | set(pred))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn warns when one label is seen; labels= is given
        expected = sk.confusion_matrix(gold, pred, labels=classes)
    assert len(cm) == len(classes) ** 2
    assert cm["count"].to_numpy().reshape(len(classes), len(classes)).tolist() == expected.tolist()
    for cls, rows in cm.groupby("gold", sort=False):
        if rows["gold_total"].iloc[0]:
            assert rows["row_share"].sum() == pytest.approx(1.0)
        else:
            assert rows["row_share"].isna().all() and cls not in gold


def test_micro_intervals_are_the_accuracy_interval() -> None:
    """Every row comes from the same resamples: micro precision, recall and F1 equal the accuracy on each resample,
    so their intervals are the accuracy's interval exactly."""
    rng = np.random.default_rng(3)
    gold = rng.choice(["A", "B", "TIE"], 200)
    pred = np.where(rng.random(200) < 0.6, gold, rng.choice(["A", "B", "TIE"], 200))
    report = classification_report(pred, gold, average="micro", n_resamples=400, seed=7)
    assert report[["estimate", "ci_low", "ci_high"]].nunique().tolist() == [1, 1, 1]
    assert report["ci_low"].iloc[0] < report["estimate"].iloc[0] < report["ci_high"].iloc[0]


def test_zero_division_rule_is_named_in_the_note() -> None:
    """A class the judge never predicts: precision undefined -> NaN and left out of the macro average under the
    default rule (the note names the class); zero_division=0 counts it as 0 (scikit-learn's default)."""
    gold = ["A", "A", "B", "B", "TIE", "TIE"]
    pred = ["A", "A", "B", "A", "B", "A"]
    default = classification_report(pred, gold, n_resamples=50)
    note = default.loc[default.metric == "precision_macro", "note"].item()
    assert "'TIE'" in note and "left out of the average" in note
    assert default.loc[default.metric == "precision_macro", "estimate"].item() == pytest.approx((2 / 4 + 1 / 2) / 2)
    zero = classification_report(pred, gold, zero_division=0, n_resamples=50)
    assert zero.loc[zero.metric == "precision_macro", "estimate"].item() == pytest.approx((2 / 4 + 1 / 2 + 0) / 3)
    assert "counted as 0" in zero.loc[zero.metric == "precision_macro", "note"].item()
    per_class = classification_report(pred, gold, average=None, n_resamples=50)
    tie = per_class[(per_class.metric == "precision") & (per_class.label == "TIE")]
    assert math.isnan(tie["estimate"].item()) and "never predicts" in tie["note"].item()


def test_on_a_judgments_table_unscored_rows_are_left_out_and_counted() -> None:
    """Judges of a judgments table are paired by item; an unscored judge row is excluded and counted, never a class."""
    rows = []
    for i, (g, j) in enumerate([("A", "A"), ("B", "B"), ("TIE", "A"), ("A", None), ("B", "A")]):
        base = {"item_id": f"i{i}", "rubric": "r", "criterion": "overall", "condition": "original"}
        rows.append({**base, "judge": "gold", "winner": g})
        rows.append({**base, "judge": "gpt", "winner": j} if j else
                    {**base, "judge": "gpt", "status": "parse_error", "unscored_reason": "unreadable"})
    table = make_table(rows)
    report = classification_report("gpt", "gold", data=table, value="winner", n_resamples=50)
    assert (report["n"] == 4).all() and (report["n_unscored_excluded"] == 1).all()
    assert report.loc[report.metric == "accuracy", "estimate"].item() == pytest.approx(0.5)
    cm = confusion_matrix("gpt", "gold", data=table, value="winner")
    assert cm["count"].sum() == 4 and (cm["n_unscored_excluded"] == 1).all()


def test_by_gives_one_block_per_group() -> None:
    """by="criterion": each block is the report of that criterion's rows alone."""
    frame = pd.DataFrame({"criterion": ["c1"] * 6 + ["c2"] * 6,
                          "judge": list("AABBAB") + list("ABABAB"), "gold": list("AABBBB") + list("AAABBB")})
    both = classification_report("judge", "gold", data=frame, by="criterion", n_resamples=50)
    for crit, part in frame.groupby("criterion"):
        alone = classification_report("judge", "gold", data=part, n_resamples=50)
        got = both[both.criterion == crit].drop(columns="criterion").reset_index(drop=True)
        pd.testing.assert_frame_equal(got, alone)


def test_clustered_interval_treats_copies_of_a_row_as_one_unit() -> None:
    """Invariant: each row duplicated twice and clustered by its original row gives the same estimate and (within
    resampling noise) the interval of the rows unclustered; the method names the cluster."""
    rng = np.random.default_rng(5)
    gold = rng.choice(["A", "B"], 150)
    pred = np.where(rng.random(150) < 0.7, gold, rng.choice(["A", "B"], 150))
    plain = classification_report(pred, gold, n_resamples=4000)
    doubled = classification_report(np.repeat(pred, 2), np.repeat(gold, 2), cluster=np.repeat(np.arange(150), 2),
                                    n_resamples=4000)
    assert np.allclose(plain["estimate"], doubled["estimate"])
    assert np.allclose(plain["ci_low"], doubled["ci_low"], atol=0.03)
    assert np.allclose(plain["ci_high"], doubled["ci_high"], atol=0.03)
    assert doubled["method"].str.contains("clustered by cluster (150 clusters", regex=False).all()
    unclustered_doubled = classification_report(np.repeat(pred, 2), np.repeat(gold, 2), n_resamples=4000)
    width = (doubled["ci_high"] - doubled["ci_low"]).mean()
    assert (unclustered_doubled["ci_high"] - unclustered_doubled["ci_low"]).mean() < 0.85 * width


@pytest.mark.parametrize(("kwargs", "fragment"), [
    ({"labels": ["A"]}, "labels= must list every class"),
    ({"average": "binary"}, "average must be"),
    ({"zero_division": 0.5}, "zero_division must be"),
    ({"labels": ["A", "A", "B"]}, "labels must be distinct"),
])
def test_bad_options_raise_one_sentence(kwargs: dict[str, object], fragment: str) -> None:
    with pytest.raises(StatsInputError, match=fragment):
        classification_report(["A", "B"], ["B", "A"], n_resamples=5, **kwargs)


def test_fractional_scores_need_declared_classes() -> None:
    """Non-integer numbers are refused as classes unless labels= declares them (each distinct float would be a class)."""
    with pytest.raises(StatsInputError, match="labels="):
        classification_report([1.5, 2.0, 2.5], [1.5, 2.5, 2.5], n_resamples=5)
    report = classification_report([1.5, 2.0, 2.5], [1.5, 2.5, 2.5], labels=[1.5, 2.0, 2.5], n_resamples=5)
    assert report.loc[report.metric == "accuracy", "estimate"].item() == pytest.approx(2 / 3)
