"""The judgments table: every column documented where help() reaches, make_table's defaults and errors,
and the two explicit unscored conventions (fill_unscored, aggregate_repeats)."""

from __future__ import annotations

import pydoc

import numpy as np
import pandas as pd
import pytest

from judgelab import judgments
from judgelab.judgments import (
    COLUMN_DOCS,
    COLUMNS,
    MISSING,
    OK,
    PARSE_ERROR,
    JudgmentsTableError,
    aggregate_repeats,
    fill_unscored,
    make_table,
    validate,
)

BASE = {"item_id": "i1", "judge": "j", "rubric": "r", "criterion": "overall", "condition": "original"}


def test_help_documents_every_column_with_meaning_values_and_filler() -> None:
    assert set(COLUMN_DOCS) == set(COLUMNS)
    text = pydoc.render_doc(judgments, renderer=pydoc.plaintext)
    for column, (meaning, allowed, filler) in COLUMN_DOCS.items():
        assert f"``{column}``" in text, column
        assert meaning and allowed and filler
    for word in ("'original'", "'swapped'", "ORIGINAL candidate labels", "'gold'", "'missing'"):
        assert word in text


def test_make_table_fills_status_and_a_stable_run_id() -> None:
    rows = [{**BASE, "score": 3}, {**BASE, "item_id": "i2", "winner": "A"}, {**BASE, "item_id": "i3", "verdict": "no"},
            {**BASE, "item_id": "i4", "status": PARSE_ERROR, "unscored_reason": "unreadable"}]
    t = validate(make_table(rows))
    assert list(t["status"]) == [OK, OK, OK, PARSE_ERROR]
    assert t["run_id"].nunique() == 1 and t["run_id"].iloc[0].startswith("table-")
    assert make_table(rows)["run_id"].iloc[0] == t["run_id"].iloc[0]  # the same rows, the same id
    assert make_table(rows[:2])["run_id"].iloc[0] != t["run_id"].iloc[0]
    assert make_table([{**BASE, "run_id": "mine", "score": 1}])["run_id"].item() == "mine"


def test_make_table_names_the_empty_required_column() -> None:
    with pytest.raises(JudgmentsTableError, match="column 'status' is empty in 1 rows that carry no score"):
        make_table([{**BASE, "score": 1}, {**BASE, "item_id": "i2"}])
    no_rubric = {k: v for k, v in BASE.items() if k != "rubric"}
    with pytest.raises(JudgmentsTableError, match="required column 'rubric' is empty in 1 of 1 rows"):
        make_table([{**no_rubric, "score": 1}])
    with pytest.raises(JudgmentsTableError, match="required column 'run_id' is empty in 1 of 2 rows"):
        make_table([{**BASE, "run_id": "x", "score": 1}, {**BASE, "item_id": "i2", "score": 2}])
    assert len(make_table(pd.DataFrame(columns=list(COLUMNS)))) == 0  # an empty table stays legal


def test_missing_is_an_unscored_status() -> None:
    t = validate(make_table([{**BASE, "status": MISSING, "unscored_reason": "missing in source"}]))
    assert not judgments.is_scored(t).any() and judgments.status_counts(t)[MISSING] == 1
    with pytest.raises(JudgmentsTableError, match="no unscored_reason"):
        validate(make_table([{**BASE, "status": MISSING}]))


def _repeats() -> pd.DataFrame:
    rows = []
    for item, scores in {"a": [4, 5, None, 3], "b": [None, None, None, None], "c": [2, 2, 2, 2]}.items():
        for r, s in enumerate(scores):
            row = {**BASE, "item_id": item, "repeat": r}
            row |= {"score": s} if s is not None else {"status": PARSE_ERROR, "unscored_reason": "no number"}
            rows.append(row)
    return validate(make_table(rows))


def test_fill_unscored_counts_parse_errors_as_a_value_and_says_so() -> None:
    t = fill_unscored(_repeats(), 0)
    filled = t[t["unscored_reason"].notna()]
    assert len(filled) == 5 and set(filled["status"]) == {OK} and set(filled["score"]) == {0}
    assert filled["unscored_reason"].iloc[0] == "counted as 0 (was parse_error: no number)"
    assert judgments.detail(filled.iloc[0]) == {"unscored_as": 0, "original_status": PARSE_ERROR}
    verdicts = validate(make_table([{**BASE, "verdict": "yes"}, {**BASE, "judge": "k", "status": PARSE_ERROR,
                                                                 "unscored_reason": "neither yes nor no"}]))
    assert list(fill_unscored(verdicts, "no", column="verdict", judge="k")["verdict"]) == ["yes", "no"]
    assert fill_unscored(verdicts, "no", column="verdict", judge="j")["status"].tolist() == [OK, PARSE_ERROR]
    with pytest.raises(JudgmentsTableError, match="a score must be a number"):
        fill_unscored(verdicts, "no")
    with pytest.raises(JudgmentsTableError, match="not unscored statuses"):
        fill_unscored(verdicts, 0, statuses=[OK])


def test_aggregate_repeats_mean_excludes_or_counts_unscored_as_g_eval_does() -> None:
    t = _repeats()
    excluded = aggregate_repeats(t).set_index("item_id")
    assert excluded.loc["a", "score"] == pytest.approx(4.0) and excluded.loc["a", "n_unscored_excluded"] == 1
    assert excluded.loc["b", "status"] == PARSE_ERROR
    assert excluded.loc["b", "unscored_reason"] == "all 4 repeats unscored"
    assert excluded["repeat"].isna().all() and len(excluded) == 3
    geval = aggregate_repeats(t, unscored_as=0).set_index("item_id")
    # G-Eval (nlpyang/geval meta_eval_summeval.py): sum(parse(x) for x in samples) / len(samples), unparsed = 0
    for item, samples in {"a": [4, 5, 0, 3], "b": [0, 0, 0, 0], "c": [2, 2, 2, 2]}.items():
        assert geval.loc[item, "score"] == pytest.approx(sum(samples) / len(samples))
    assert geval.loc["a", "n_counted_as"] == 1 and geval.loc["b", "n_counted_as"] == 4
    assert aggregate_repeats(t, how="median").set_index("item_id").loc["a", "score"] == pytest.approx(4.0)
    with pytest.raises(JudgmentsTableError, match="averages scores only"):
        aggregate_repeats(validate(make_table([{**BASE, "winner": "A"}])))
    with pytest.raises(JudgmentsTableError, match="how must be"):
        aggregate_repeats(t, how="max")


def test_aggregate_repeats_keeps_keys_with_a_missing_side_apart() -> None:
    rows = [{**BASE, "side": side, "repeat": r, "score": float(r + (side == "A"))}
            for side in ("A", "B", None) for r in range(2)]
    out = aggregate_repeats(validate(make_table(rows)))
    assert len(out) == 3
    assert sorted(out["score"].astype(float)) == pytest.approx(sorted([1.5, 0.5, 0.5]))
    assert np.array_equal(out["n_repeats"].to_numpy(), [2, 2, 2])


@pytest.mark.parametrize("value", [np.inf, -np.inf, float("inf")])
def test_validate_refuses_an_infinite_score_in_one_sentence(value: float) -> None:
    # an inf score with status ok reached kappa as a category; unscored or not, it is refused
    table = make_table([{**BASE, "score": 2.0}, {**BASE, "item_id": "i2", "score": value}])
    with pytest.raises(JudgmentsTableError, match=r"^1 rows have an infinite score \(-?inf; first rows: \[1\]\); "
                                                  "a score is a finite number") as refused:
        validate(table)
    assert "\n" not in str(refused.value)


def test_validate_refuses_an_ok_row_with_no_value() -> None:
    # NaN with status ok: nothing to count, yet counted as scored
    table = make_table([{**BASE, "score": 2.0}, {**BASE, "item_id": "i2", "score": 1.0}])
    table.loc[1, "score"] = np.nan
    with pytest.raises(JudgmentsTableError, match=r"^1 rows have status 'ok' but no score, winner or verdict"):
        validate(table)
    assert validate(make_table([{**BASE, "winner": "A"}, {**BASE, "item_id": "i2", "verdict": "yes"}]))["status"].eq(
        OK).all()  # a winner or a verdict is a value
