"""Comparing two judges against gold: compare_judges(metric="accuracy" and F1) and the paired both-orders test."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.contingency_tables import mcnemar

from judgelab import stats
from judgelab.judgments import make_table
from judgelab.stats.pairwise import PairwiseInputError

VERDICTS = ["A", "B", "TIE", None]  # None: an unscored verdict


def _pairwise_table(gold: list[str], verdicts: dict[str, list[tuple[str | None, str | None]]]) -> pd.DataFrame:
    rows = []
    for i, label in enumerate(gold):
        base = {"run_id": "r", "item_id": f"i{i}", "rubric": "pairwise", "criterion": "overall", "repeat": 0}
        rows.append({**base, "judge": "gold", "condition": "original", "winner": label})
        for judge, pairs in verdicts.items():
            for condition, verdict in zip(("original", "swapped"), pairs[i], strict=True):
                rows.append({**base, "judge": judge, "condition": condition, "winner": verdict} if verdict else
                            {**base, "judge": judge, "condition": condition, "status": "parse_error",
                             "unscored_reason": "no verdict"})
    return make_table(rows)


@st.composite
def two_judges(draw: st.DrawFn) -> tuple[list[str], dict[str, list[tuple[str | None, str | None]]]]:
    """Gold labels (A/B, sometimes TIE) and two judges' verdicts in both orders, ties and unscored verdicts included."""
    n = draw(st.integers(2, 30))
    gold = draw(st.lists(st.sampled_from(["A", "B", "A", "B", "TIE"]), min_size=n, max_size=n))
    pair = st.tuples(st.sampled_from(VERDICTS), st.sampled_from(VERDICTS))
    return gold, {j: draw(st.lists(pair, min_size=n, max_size=n)) for j in ("j1", "j2")}


@settings(max_examples=50, deadline=None)
@given(two_judges(), st.sampled_from(["tie", "wrong"]))
def test_each_judge_row_is_its_pairwise_accuracy_mean(case: tuple, policy: str) -> None:
    """Invariant: under "tie" or "wrong" every cell counts, so each judge's row is pairwise_accuracy's accuracy_mean;
    the difference is their difference; the correct_both row's p is statsmodels' McNemar on the per-item
    correct-in-both-orders indicators (exact below 25 discordant items, p = 1 with none)."""
    gold, verdicts = case
    table = _pairwise_table(gold, verdicts)
    out = stats.compare_pairwise_judges(table, "j1", "j2", policy=policy, n_resamples=50).set_index("part")
    single = stats.pairwise_accuracy(table, policy=policy, by=("judge",)).set_index(["judge", "metric"])
    assert out.loc["a", "estimate"] == pytest.approx(single.loc[("j1", "accuracy_mean"), "estimate"], abs=1e-12)
    assert out.loc["b", "estimate"] == pytest.approx(single.loc[("j2", "accuracy_mean"), "estimate"], abs=1e-12)
    assert out.loc["difference", "estimate"] == pytest.approx(out.loc["a", "estimate"] - out.loc["b", "estimate"])
    assert out.loc["correct_both", "n"] == len(gold)
    right = {j: np.array([all(_is_right(v, g, policy) for v in verdicts[j][i]) for i, g in enumerate(gold)])
             for j in ("j1", "j2")}
    assert right["j1"].mean() - right["j2"].mean() == pytest.approx(out.loc["correct_both", "estimate"], abs=1e-12)
    discordant = int(np.sum(right["j1"] != right["j2"]))
    table_2x2 = [[np.sum(right["j2"] & right["j1"]), np.sum(right["j2"] & ~right["j1"])],
                 [np.sum(~right["j2"] & right["j1"]), np.sum(~right["j2"] & ~right["j1"])]]
    expected = 1.0 if discordant == 0 else mcnemar(table_2x2, exact=discordant < 25, correction=True).pvalue
    assert out.loc["correct_both", "p_value"] == pytest.approx(expected, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(two_judges(), st.sampled_from(["tie", "wrong", "exclude"]), st.data())
def test_an_absent_order_is_left_out_never_a_tie_or_a_miss(case: tuple, policy: str, data: st.DataObject) -> None:
    """Invariant: deleting one judge's row in one order for some items gives exactly the comparison on the other
    items (an absent verdict is not unscored: it is not counted as a tie or a miss), and the deleted items are
    counted in n_items_one_order."""
    gold, verdicts = case
    table = _pairwise_table(gold, verdicts)
    items = sorted(set(table["item_id"]))
    dropped = data.draw(st.lists(st.sampled_from(items), max_size=len(items) - 1, unique=True))
    judge, condition = data.draw(st.sampled_from(["j1", "j2"])), data.draw(st.sampled_from(["original", "swapped"]))
    hit = table["item_id"].isin(dropped) & (table["judge"] == judge) & (table["condition"] == condition)
    kept = table[~table["item_id"].isin(dropped)]
    try:
        expected = stats.compare_pairwise_judges(kept, "j1", "j2", policy=policy, n_resamples=30)
    except PairwiseInputError:  # nothing left to compare on the kept items: the holed table refuses too
        with pytest.raises(PairwiseInputError):
            stats.compare_pairwise_judges(table[~hit], "j1", "j2", policy=policy, n_resamples=30)
        return
    got = stats.compare_pairwise_judges(table[~hit], "j1", "j2", policy=policy, n_resamples=30)
    cols = ["part", "estimate", "ci_low", "ci_high", "p_value", "n", "n_items"]
    pd.testing.assert_frame_equal(got[cols], expected[cols])
    assert (got["n_items_one_order"] == len(dropped)).all()


def _is_right(verdict: str | None, gold: str, policy: str) -> bool:
    if verdict is None:
        return policy == "tie" and gold == "TIE"
    return verdict == gold


@settings(max_examples=40, deadline=None)
@given(two_judges())
def test_exclude_compares_only_cells_both_judges_can_be_scored_on(case: tuple) -> None:
    """Invariant: under "exclude" a cell counts when neither judge's verdict there is a tie or unscored and gold is
    not a tie; each row is the pooled accuracy over exactly those cells, and the excluded cells are counted."""
    gold, verdicts = case
    table = _pairwise_table(gold, verdicts)
    usable, right = [], {"j1": [], "j2": []}
    for i, g in enumerate(gold):
        for k in range(2):
            a, b = verdicts["j1"][i][k], verdicts["j2"][i][k]
            if g != "TIE" and a in ("A", "B") and b in ("A", "B"):
                usable.append(1)
                right["j1"].append(a == g)
                right["j2"].append(b == g)
    if not usable:
        with pytest.raises(PairwiseInputError, match="no \\(item, order\\) cell"):
            stats.compare_pairwise_judges(table, "j1", "j2", n_resamples=20)
        return
    out = stats.compare_pairwise_judges(table, "j1", "j2", n_resamples=20).set_index("part")
    assert out.loc["a", "n"] == len(usable) == 2 * len(gold) - out.loc["a", "n_cells_excluded"]
    assert out.loc["a", "estimate"] == pytest.approx(np.mean(right["j1"]), abs=1e-12)
    assert out.loc["b", "estimate"] == pytest.approx(np.mean(right["j2"]), abs=1e-12)


def test_a_judge_against_its_own_copy_differs_by_nothing() -> None:
    """The same verdicts under two names: difference 0 on every resample (interval [0, 0], p = 1), McNemar p = 1."""
    rng = np.random.default_rng(4)
    gold = list(rng.choice(["A", "B"], 40))
    pairs = [(rng.choice(["A", "B", "TIE"]), rng.choice(["A", "B"])) for _ in gold]
    out = stats.compare_pairwise_judges(_pairwise_table(gold, {"x": pairs, "y": pairs}), "x", "y",
                                        n_resamples=300).set_index("part")
    assert (out.loc["difference", ["estimate", "ci_low", "ci_high"]] == 0).all()
    assert out.loc["difference", "p_value"] == 1.0 and out.loc["correct_both", "p_value"] == 1.0


def test_the_difference_interval_is_paired() -> None:
    """Two judges that differ on few items: the paired difference interval is far narrower than either judge's
    own interval (which it would not be if the three came from different resamples)."""
    rng = np.random.default_rng(9)
    gold = list(rng.choice(["A", "B"], 200))
    good = [(g if rng.random() < 0.75 else ("B" if g == "A" else "A"),) * 2 for g in gold]
    close = [p if i % 25 else (gold[i], gold[i]) for i, p in enumerate(good)]
    out = stats.compare_pairwise_judges(_pairwise_table(gold, {"good": good, "close": close}), "close", "good",
                                        n_resamples=2000).set_index("part")
    width = out["ci_high"] - out["ci_low"]
    assert width["difference"] < 0.5 * min(width["a"], width["b"])
    assert out.loc["difference", "estimate"] > 0


def test_a_one_order_table_is_refused_with_the_fix() -> None:
    table = _pairwise_table(["A", "B"], {"x": [("A", "B"), ("B", "A")], "y": [("A", "A"), ("B", "B")]})
    one_order = table[table["condition"] == "original"]
    with pytest.raises(PairwiseInputError, match=r"no rows in condition\(s\) \['swapped'\].*metric='accuracy'"):
        stats.compare_pairwise_judges(one_order, "x", "y")
    result = stats.compare_judges("x", "y", "gold", data=one_order, metric="accuracy", value="winner", n_resamples=50)
    assert list(result["estimate"]) == [1.0, 1.0, 0.0]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("ABT"), st.sampled_from("ABT"), st.sampled_from("ABT")), min_size=2,
                max_size=40),
       st.sampled_from(["accuracy", "f1_macro", "precision_weighted", "recall_macro"]))
def test_compare_judges_classification_metrics_equal_classification_report(rows: list[tuple[str, str, str]],
                                                                           metric: str) -> None:
    """Invariant: compare_judges(metric=<classification metric>) gives, for each judge, classification_report's
    estimate on the same items (accuracy = the share of items where the judge's label is gold's), and their
    difference."""
    a, b, gold = (list(col) for col in zip(*rows, strict=True))
    out = stats.compare_judges(a, b, gold, metric=metric, n_resamples=20).set_index("part")["estimate"]
    name, _, average = metric.partition("_")
    for part, judge in (("a", a), ("b", b)):
        report = stats.classification_report(judge, gold, average=average or "macro", n_resamples=5)
        key = "accuracy" if name == "accuracy" else metric
        expected = report.set_index("metric").loc[key, "estimate"]
        assert out[part] == pytest.approx(expected, abs=1e-12, nan_ok=True)
    if np.isfinite(out["a"]) and np.isfinite(out["b"]):
        assert out["difference"] == pytest.approx(out["a"] - out["b"], abs=1e-12)


def test_compare_judges_on_both_orders_points_to_the_paired_comparison() -> None:
    """compare_judges needs one verdict per item; on a two-order table its error names compare_pairwise_judges."""
    table = _pairwise_table(["A", "B"], {"x": [("A", "B"), ("B", "A")], "y": [("A", "A"), ("B", "B")]})
    with pytest.raises(stats.AmbiguousQuestionError,
                       match=r"2 conditions \(original, swapped\).*stats\.compare_pairwise_judges"):
        stats.compare_judges("x", "y", "gold", data=table, metric="accuracy", value="winner", n_resamples=20)
