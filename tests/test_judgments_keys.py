"""validate's duplicate-key check (judgments._duplicated_keys) against pandas' ``duplicated(keep=False)``.

The check folds each key column's codes into one running key instead of keeping every column's codes at
once (the peak of a 10^7-row import); it must mark exactly the rows pandas marks, whatever the columns hold.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgelab import judgments
from judgelab.judgments import KEY_COLUMNS, _duplicated_keys

# the dtypes key columns have when validate checks them (it coerces to the schema first: Arrow text, nullable
# ints), and "str" and float columns with NaN. Not object columns: there pandas itself answers differently for
# one column (None and NaN two values) and for several (one value), so there is no single answer to match
_CELLS = {
    "string": st.one_of(st.none(), st.sampled_from(["a", "b", "", "ä", "a "])),
    "str": st.one_of(st.none(), st.sampled_from(["x", "y", "z"])),
    "Int64": st.one_of(st.none(), st.integers(-2, 2)),
    "float64": st.one_of(st.just(float("nan")), st.sampled_from([0.0, -0.0, 1.5, 2.0])),
}


@st.composite
def _frames(draw: st.DrawFn) -> pd.DataFrame:
    n = draw(st.integers(0, 40))
    dtypes = draw(st.lists(st.sampled_from(list(_CELLS)), min_size=1, max_size=8))
    columns = {}
    for k, dtype in enumerate(dtypes):
        cells = draw(st.lists(_CELLS[dtype], min_size=n, max_size=n))
        if dtype == "float64":
            columns[f"c{k}"] = pd.Series(cells, dtype="float64")
        else:
            columns[f"c{k}"] = pd.Series(cells, dtype=dtype)
    index = draw(st.sampled_from([None, "labels"]))
    frame = pd.DataFrame(columns)
    if index == "labels":
        frame.index = [f"r{i}" for i in range(n)]
    return frame


@settings(max_examples=150, deadline=None)
@given(_frames())
def test_duplicated_keys_marks_the_rows_pandas_marks(frame: pd.DataFrame) -> None:
    """Invariant: for any frame of key columns (any mix of dtypes, NA in each, repeated and unique rows, a
    non-positional index) the rows marked are exactly ``frame.duplicated(keep=False)``'s, on the same index."""
    expected = frame.duplicated(subset=list(frame.columns), keep=False)
    pd.testing.assert_series_equal(_duplicated_keys(frame, list(frame.columns)), expected, check_names=False)


@pytest.mark.parametrize("seed", range(3))
def test_duplicated_keys_renumbers_before_the_key_overflows(seed: int) -> None:
    """Invariant: with eight columns of ~400 distinct values each (a key space of 400^8, past int64) the
    running key is renumbered before it could overflow, and the marks still equal pandas'."""
    rng = np.random.default_rng(seed)
    n = 800
    frame = pd.DataFrame({f"c{k}": rng.integers(0, 400, size=n) for k in range(8)})
    repeat = rng.choice(n, size=60, replace=False)
    frame.iloc[repeat[:30]] = frame.iloc[repeat[30:]].to_numpy()  # 30 rows copied onto 30 others
    expected = frame.duplicated(keep=False)
    assert expected.sum() >= 30
    pd.testing.assert_series_equal(_duplicated_keys(frame, list(frame.columns)), expected, check_names=False)


def test_validate_still_names_the_rows_that_share_a_key() -> None:
    """Invariant: two rows with one key are refused, naming how many rows and which."""
    base = {"run_id": "r", "judge": "j", "criterion": "c", "rubric": "x", "condition": "original"}
    rows = [{**base, "item_id": "i1", "score": 3.0}, {**base, "item_id": "i2", "score": 3.0},
            {**base, "item_id": "i1", "score": 4.0}]
    table = judgments.make_table(rows)
    with pytest.raises(judgments.JudgmentsTableError, match=r"2 rows share a key .*first: \[0, 2\]"):
        judgments.validate(table)
    assert len(KEY_COLUMNS) == 8
