"""Every statistic validates its input: one sentence for empty, unscored-only, status-less, unknown, duplicated."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from sklearn.metrics import cohen_kappa_score

from judgelab import stats
from judgelab.errors import JudgelabError
from judgelab.judgments import make_table
from judgelab.stats import AmbiguousQuestionError, DuplicateRatingsError, EmptyInputError, StatsInputError

FAST = {"n_resamples": 50}


def _rows(n: int = 8, judges: tuple[str, ...] = ("a", "b", "c"), **extra: object) -> list[dict[str, object]]:
    rows = []
    for i in range(n):
        for j, judge in enumerate(judges):
            rows.append({"run_id": "r", "item_id": f"i{i}", "rubric": "q", "criterion": "overall",
                         "condition": "original", "judge": judge, "score": float((i + j) % 3 + 1), **extra})
    return rows


def _table(n: int = 8, judges: tuple[str, ...] = ("a", "b", "c")) -> pd.DataFrame:
    return make_table(_rows(n, judges, status="ok"))


def _two_criteria_table() -> pd.DataFrame:
    rows = _rows(6, status="ok")
    rows += [{**r, "criterion": "fluency", "score": r["score"] + i % 4 // 3}  # type: ignore[operator]
             for i, r in enumerate(_rows(6, status="ok"))]
    return make_table(rows)


PAIR_STATISTICS = {
    "percent_agreement": lambda **kw: stats.percent_agreement("a", "b", **kw, **FAST),
    "cohen_kappa": lambda **kw: stats.cohen_kappa("a", "b", **kw, **FAST),
    "spearman": lambda **kw: stats.spearman("a", "b", **kw, **FAST),
    "kendall": lambda **kw: stats.kendall("a", "b", **kw, **FAST),
    "pearson": lambda **kw: stats.pearson("a", "b", **kw, **FAST),
    "mae": lambda **kw: stats.mae("a", "b", **kw, **FAST),
    "positive_bias": lambda **kw: stats.positive_bias("a", "b", **kw, **FAST),
    "flip_rate": lambda **kw: stats.flip_rate("a", "b", value="score", **kw),
    "compare_judges": lambda **kw: stats.compare_judges("a", "b", "c", **kw, **FAST),
    "bootstrap_ci": lambda **kw: stats.bootstrap_ci("a", **kw, **FAST),
}
MULTI_RATER = {
    "fleiss_kappa": lambda **kw: stats.fleiss_kappa(**kw, **FAST),
    "krippendorff_alpha": lambda **kw: stats.krippendorff_alpha(**kw, **FAST),
    "icc": lambda **kw: stats.icc(**kw),
}


@pytest.mark.parametrize("name", [*PAIR_STATISTICS, *MULTI_RATER, "agreement_matrix"])
def test_a_table_without_statuses_is_an_error_not_nan_with_n_zero(name: str) -> None:
    # make_table without status: every row is unscored; before, percent_agreement gave NaN with n=0
    table = make_table(_rows())
    table["status"] = pd.NA
    call = {**PAIR_STATISTICS, **MULTI_RATER, "agreement_matrix": lambda **kw: stats.agreement_matrix(
        kw["data"], **FAST)}[name]
    with pytest.raises(EmptyInputError, match=r"none (of the \d+ rows )?is scored \(status 'ok'\): \d+ <no status>"):
        call(data=table)


@pytest.mark.parametrize("name", list(PAIR_STATISTICS))
def test_a_frame_with_judges_but_no_status_column_says_so(name: str) -> None:
    frame = pd.DataFrame(_rows()).drop(columns=["criterion"])
    with pytest.raises(StatsInputError, match="no 'criterion' and 'status' columns, so scored rows cannot be told"):
        PAIR_STATISTICS[name](data=frame)


@pytest.mark.parametrize("name", list(PAIR_STATISTICS))
def test_unknown_column_names_the_thing(name: str) -> None:
    frame = pd.DataFrame({"x": [1.0, 2.0, 3.0]})
    with pytest.raises(StatsInputError, match=r"column 'a' .*its columns: x"):
        PAIR_STATISTICS[name](data=frame)


def test_unknown_judge_lists_the_judges_of_the_table() -> None:
    with pytest.raises(StatsInputError, match=r"judge\(s\) \['gpt-5'\] have no rows.*'a', 'b', 'c'"):
        stats.spearman("gpt-5", "a", data=_table(), **FAST)
    with pytest.raises(StatsInputError, match=r"judge\(s\) \['gpt-5'\] have no rows in the data"):
        stats.agreement_matrix(_table(), raters=["a", "gpt-5"], **FAST)
    table = _table().assign(c=_table()["score"])  # "c" is a column too: a judge and a column cannot be mixed
    with pytest.raises(StatsInputError, match=r"column 'a' \(given as x\) is not in the data frame.*'a' is a "
                       "judge of this frame"):
        stats.spearman("a", "c", data=table.drop(columns=["status"]), **FAST)


def test_empty_frames_arrays_and_disjoint_judges_raise() -> None:
    with pytest.raises(EmptyInputError, match="no rows"):
        stats.spearman("a", "b", data=_table().iloc[:0])
    with pytest.raises(EmptyInputError, match="no rows to compare"):
        stats.percent_agreement([], [])
    with pytest.raises(EmptyInputError, match="none of the 3 rows has a value"):
        stats.mae([1.0, np.nan, 3.0], [np.nan, 2.0, np.nan])
    rows = [r for r in _rows() if not (r["judge"] == "b" and r["item_id"] in {f"i{i}" for i in range(8)})]
    rows += [{**r, "item_id": f"other{i}", "judge": "b"} for i, r in enumerate(_rows(4, ("a",)))]
    with pytest.raises(EmptyInputError, match=r"none of the \d+ keys \(item x criterion x side\)"):
        stats.cohen_kappa("a", "b", data=make_table([{**r, "status": "ok"} for r in rows]), **FAST)
    with pytest.raises(EmptyInputError, match="ratings array is empty"):
        stats.fleiss_kappa(np.empty((0, 0)))
    with pytest.raises(EmptyInputError):
        stats.icc(data=_table().iloc[:0])


def test_errors_are_judgelab_errors_and_value_errors() -> None:
    for cls in (StatsInputError, EmptyInputError, DuplicateRatingsError):
        assert issubclass(cls, JudgelabError) and issubclass(cls, ValueError)


def _two_repeats_table() -> pd.DataFrame:
    rows = _rows(6, status="ok", repeat=0)
    rows += [{**r, "repeat": 1, "score": r["score"] + i % 4 // 3}  # type: ignore[operator]
             for i, r in enumerate(_rows(6, status="ok"))]
    return make_table(rows)


@pytest.mark.parametrize("name", list(MULTI_RATER))
def test_multi_rater_statistics_refuse_several_criteria_and_name_the_fix(name: str) -> None:
    # several criteria are several questions: refused (with or without aggregate=), never pooled
    table = _two_criteria_table()
    for extra in ({}, {"aggregate": "mean"}):
        with pytest.raises(AmbiguousQuestionError, match=r"this table has 2 criteria \(fluency, overall\) for "
                           r"judges 'a', 'b', 'c': pass by='criterion' for one row per criterion, or filter"):
            MULTI_RATER[name](data=table, **extra)


@pytest.mark.parametrize("name", list(MULTI_RATER))
def test_multi_rater_statistics_refuse_duplicates_and_name_the_keys(name: str) -> None:
    table = _table(6)
    doubled = pd.concat([table, table.assign(run_id="second run")], ignore_index=True)
    with pytest.raises(DuplicateRatingsError) as err:
        MULTI_RATER[name](data=doubled)
    message = str(err.value)
    assert "18 (item_id, judge) key(s) have several scored rows (36 rows)" in message
    assert "(i0, a) x 2" in message and "differ in run_id (r, second run)" in message
    assert "by=" in message and "aggregate=" in message


@pytest.mark.parametrize("name", list(MULTI_RATER))
def test_by_criterion_gives_one_row_block_per_criterion(name: str) -> None:
    table = _two_criteria_table()
    out = MULTI_RATER[name](data=table, by="criterion")
    assert list(pd.unique(out["criterion"])) == ["fluency", "overall"]
    for criterion, part in out.groupby("criterion"):
        alone = MULTI_RATER[name](data=table[table["criterion"] == criterion])
        np.testing.assert_allclose(part["estimate"].to_numpy(), alone["estimate"].to_numpy())


def test_aggregate_mean_merges_and_says_how_many_rows() -> None:
    table = _two_repeats_table()
    out = stats.icc(data=table, aggregate="mean").set_index("metric")
    wide = table.groupby(["item_id", "judge"])["score"].mean().unstack()
    ref = stats.icc(wide.to_numpy(float)).set_index("metric")
    assert out.loc["ICC2", "estimate"] == pytest.approx(ref.loc["ICC2", "estimate"])
    assert (out["n_rows_merged"] == 18).all() and "aggregate='mean': 18 duplicate" in out.loc["ICC1", "note"]
    first = stats.krippendorff_alpha(data=table, aggregate="first", level="interval", **FAST).iloc[0]
    only_first = table.drop_duplicates(["item_id", "judge"], keep="first")
    assert first["estimate"] == pytest.approx(
        stats.krippendorff_alpha(data=only_first, level="interval", **FAST).iloc[0]["estimate"])
    with pytest.raises(StatsInputError, match="aggregate='mean' needs numeric"):
        stats.fleiss_kappa(data=table.assign(verdict=table["score"].map({1: "bad", 2: "ok", 3: "good", 4: "top"})),
                           value="verdict", aggregate="mean")


PAIRED_ON_TABLE = {
    "percent_agreement": lambda t, **kw: stats.percent_agreement("a", "b", data=t, **kw, **FAST),
    "cohen_kappa": lambda t, **kw: stats.cohen_kappa("a", "b", data=t, **kw, **FAST),
    "spearman": lambda t, **kw: stats.spearman("a", "b", data=t, **kw, **FAST),
    "error_metrics": lambda t, **kw: stats.error_metrics("a", "b", data=t, **kw, **FAST),
    "compare_judges": lambda t, **kw: stats.compare_judges("a", "b", "c", data=t, **kw, **FAST),
    "agreement_matrix": lambda t, **kw: stats.agreement_matrix(t, **kw, **FAST),
    "meta_evaluation": lambda t, **kw: stats.meta_evaluation("a", "b", data=t, **kw, **FAST),
}


@pytest.mark.parametrize("name", list(PAIRED_ON_TABLE))
def test_paired_statistics_refuse_two_orders_and_aggregate_on_request(name: str) -> None:
    rows = _rows(10, status="ok")
    swapped = [{**r, "condition": "swapped", "score": 3.0} for r in _rows(10, status="ok")]
    table = make_table(rows + swapped)
    with pytest.raises(AmbiguousQuestionError, match=r"this table has 2 conditions \(original, swapped\) for judge "
                       r"'a': pass by='condition' for one row per condition, filter the table to one, or merge a "
                       r"rater's rows of one key with aggregate="):
        PAIRED_ON_TABLE[name](table)
    out = PAIRED_ON_TABLE[name](table, aggregate="first")
    plain = PAIRED_ON_TABLE[name](make_table(rows))
    np.testing.assert_allclose(out["estimate"].to_numpy(float), plain["estimate"].to_numpy(float))
    assert (out["n_rows_merged"] >= 10).all()
    assert out["note"].str.contains("aggregate='first'").all()


def test_aggregate_mean_of_two_orders_on_a_table_matches_a_hand_computation() -> None:
    rows = _rows(12, status="ok")
    swapped = [{**r, "condition": "swapped", "score": float(r["score"]) + (i % 2)}  # type: ignore[arg-type]
               for i, r in enumerate(_rows(12, status="ok"))]
    table = make_table(rows + swapped)
    out = stats.spearman("a", "b", data=table, aggregate="mean", **FAST).iloc[0]
    means = table.groupby(["item_id", "judge"])["score"].mean().astype(float).unstack()
    assert out["estimate"] == pytest.approx(sps.spearmanr(means["a"], means["b"]).statistic)
    assert out["n_rows_merged"] == 24 and out["n"] == 12


def test_system_level_statistics_refuse_silent_averaging_of_an_item_and_system() -> None:
    frame = pd.DataFrame({"x": [1.0, 2, 3, 4, 2, 5, 1, 3], "y": [1.0, 3, 2, 4, 2, 4, 2, 3],
                          "system": list("ababABAB".lower()), "doc": [0, 0, 1, 1, 0, 0, 1, 1]})
    with pytest.raises(DuplicateRatingsError, match=r"\(item, system\).*aggregate="):
        stats.system_level_correlation("x", "y", "system", item="doc", data=frame, **FAST)
    out = stats.system_pair_accuracy("x", "y", "system", item="doc", data=frame, aggregate="mean", **FAST).iloc[0]
    assert out["n_rows_merged"] == 4 and out["estimate"] == 1.0


def test_aggregate_on_plain_columns_is_refused() -> None:
    frame = pd.DataFrame({"x": [1.0, 2, 3], "y": [1.0, 2, 2]})
    with pytest.raises(StatsInputError, match="aggregate= merges a judge's duplicate rows"):
        stats.spearman("x", "y", data=frame, aggregate="mean")
    with pytest.raises(StatsInputError, match="aggregate must be"):
        stats.spearman("a", "b", data=_table(), aggregate="max")  # type: ignore[arg-type]


def test_agreement_matrix_keeps_a_row_for_a_pair_without_shared_items() -> None:
    rows = _rows(6, ("a", "b"), status="ok") + [
        {**r, "item_id": f"z{i}"} for i, r in enumerate(_rows(6, ("c",), status="ok"))]
    out = stats.agreement_matrix(make_table(rows), **FAST).set_index(["judge_a", "judge_b"])
    assert out.loc[("a", "c"), "n"] == 0 and np.isnan(out.loc[("a", "c"), "estimate"])
    assert "no estimate" in out.loc[("a", "c"), "note"] and np.isfinite(out.loc[("a", "b"), "estimate"])


def test_kappa_on_a_table_with_labels_is_unchanged() -> None:
    table = _table()
    x = table[table.judge == "a"]["score"].to_numpy(float)
    y = table[table.judge == "b"]["score"].to_numpy(float)
    out = stats.cohen_kappa("a", "b", data=table, **FAST).iloc[0]
    assert out["estimate"] == pytest.approx(cohen_kappa_score(x, y))
