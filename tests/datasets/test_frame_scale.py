"""from_frame's column-wise path (judgelab/datasets/frame_columns.py) against the row-wise builders it replaced.

The row-wise builders stay in the package for list cells and ``candidates=``; forcing them (``_distinct``
answering None) gives the previous path's table for any input. A seeded fuzzer draws messy imports and
checks that both paths agree exactly: the same table (values, dtypes, column order, index) or the same
FrameImportError message.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from judgelab.datasets import frame as frame_module
from judgelab.datasets.frame import from_frame
from judgelab.errors import JudgelabError

# cells a judge column may hold: numbers in and out of scale, text numbers, answers to parse, missing spellings,
# text no mapping reads, bools, numpy scalars, a negative zero (equal to 0 but printed "-0")
_SCORE_CELLS: list[Any] = [1, 2, 3.0, 2.5, 7, -1, 0.0, -0.0, "3", " 4 ", "2.0", "Score: 5", "Coherence: 2",
                           "I would rate this 3 out of 5.", "no score here", "I refuse to judge this.", "", "NA",
                           "null", None, math.nan, True, np.float64(4.0), np.int64(2), math.inf]
_LABEL_CELLS: list[Any] = ["yes", "no", "Yes", 1, 2, 2.0, "2", "maybe", "", None, math.nan, "N/A", True]
_WINNER_CELLS: list[Any] = ["A", "B", "tie", "model_a", "2", 1, "a>b", "[[A]]", "Output (b) is better", "what",
                            "", None, math.nan, "TIE"]
_CELLS = {"score": _SCORE_CELLS, "label": _LABEL_CELLS, "pairwise": _WINNER_CELLS}


def _draw(rng: np.random.Generator) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One messy import: a frame and the from_frame arguments for it."""
    kind = str(rng.choice(["score", "label", "pairwise"]))
    n = int(rng.integers(1, 14))
    n_items = int(rng.integers(1, n + 1))  # fewer items than rows: ids repeat (duplicates, several criteria)
    pool = _CELLS[kind]
    df = pd.DataFrame({"id": [f"i{k}" for k in rng.integers(0, n_items, size=n)]})
    if rng.random() < 0.2:
        df["id"] = rng.integers(0, n_items, size=n)  # integer ids
    crits = ["coherence", "fluency", "overall"][: int(rng.integers(1, 4))]
    use_criterion = rng.random() < 0.6
    if use_criterion:
        df["crit"] = rng.choice(crits, size=n)
    kw: dict[str, Any] = {"item_id": "id", "criterion": "crit" if use_criterion else None}
    long_form = rng.random() < 0.35
    judges = [f"j{k}" for k in range(int(rng.integers(1, 4)))]
    uniform = rng.random() < 0.3  # a column of one type (float, or text): the factorize path
    for j in judges if not long_form else ["value"]:
        if uniform and kind == "score":
            df[j] = rng.choice([1.0, 2.0, 3.5, 5.0, math.nan, 9.0], size=n)
        elif uniform:
            df[j] = pd.Series([str(v) for v in rng.choice(np.array(pool, dtype=object), size=n)], dtype="str")
        else:
            df[j] = pd.Series(list(rng.choice(np.array(pool, dtype=object), size=n)), dtype=object)
    if long_form:
        df["who"] = rng.choice(judges + ["gold"] * (rng.random() < 0.1), size=n)
        kw.update(judge="who", **{{"score": "score", "label": "label", "pairwise": "winner"}[kind]: "value"})
    else:
        kw.update(judges=judges if rng.random() < 0.7 else {j: f"J-{j}" for j in judges}, kind=kind)
    if rng.random() < 0.5:
        df["g"] = pd.Series(list(rng.choice(np.array(pool, dtype=object), size=n)), dtype=object)
        kw["gold"] = "g"
        if rng.random() < 0.3:
            kw["gold_judge"] = "human"
    if kind == "pairwise" and rng.random() < 0.6:
        df["order"] = rng.choice(["original", "swapped"], size=n)
        kw["condition"] = "order"
        kw["winner_in"] = str(rng.choice(["shown", "original"]))
    if rng.random() < 0.3:
        df["rep"] = rng.integers(0, 3, size=n)
        kw["repeat"] = "rep"
    if rng.random() < 0.5:
        df["doc"] = pd.Series(list(rng.choice(np.array(["d1", "d2", 3, None, 4.5], dtype=object), size=n)),
                              dtype=object)
        kw["cluster"] = "doc"
    if rng.random() < 0.3:
        df["extra"] = rng.integers(0, 5, size=n)
        kw["keep"] = ["extra"]
    if kind == "score" and rng.random() < 0.6:
        kw["scale"] = (1, 5)
    if kind == "score" and rng.random() < 0.4:
        kw["scale"] = (1, 5)
        kw["parse"] = "score"
    if kind == "label" and rng.random() < 0.4:
        kw["labels"] = ["yes", "no", "1", "2"]
        if rng.random() < 0.4:
            kw["parse"] = "label"
    if kind == "pairwise" and rng.random() < 0.3:
        kw["parse"] = "winner"
    kw["on_bad"] = str(rng.choice(["raise", "unscored"], p=[0.3, 0.7]))
    if rng.random() < 0.2:
        df.index = pd.Index([f"r{k}" for k in range(n)])  # messages name the index label
    return df, kw


def _outcome(source: Any, kw: dict[str, Any], *, row_wise: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    with monkeypatch.context() as m:
        if row_wise:
            m.setattr(frame_module, "_distinct", lambda frame, columns: None)
        try:
            return from_frame(source, **kw)
        except JudgelabError as exc:
            return (type(exc).__name__, str(exc))


def _same(fast: Any, slow: Any, case: str) -> None:
    if isinstance(slow, tuple) or isinstance(fast, tuple):
        assert fast == slow, case
        return
    pd.testing.assert_frame_equal(fast, slow, check_exact=True, obj=case)


def test_column_wise_import_equals_row_wise_on_fuzzed_frames(monkeypatch: pytest.MonkeyPatch) -> None:
    """Invariant: for any frame (random kinds, judge and criterion counts, long or wide form, gold, orders,
    repeats, carried columns of mixed types, missing spellings, NaN, out-of-scale and unreadable cells,
    duplicate ids, parse= rules, on_bad either way, a non-positional index) the column-wise path returns the
    row-wise path's table exactly -- values, dtypes, column order -- or raises the same error message."""
    rng = np.random.default_rng(20261126)
    outcomes = {"table": 0, "error": 0}
    for case in range(160):
        df, kw = _draw(rng)
        fast = _outcome(df, kw, row_wise=False, monkeypatch=monkeypatch)
        slow = _outcome(df, kw, row_wise=True, monkeypatch=monkeypatch)
        _same(fast, slow, f"case {case}: {kw}")
        outcomes["error" if isinstance(slow, tuple) else "table"] += 1
    assert min(outcomes.values()) >= 20, outcomes  # both tables and refusals were compared


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_column_wise_import_equals_row_wise_on_files(tmp_path: Path, suffix: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Invariant: reading a CSV or Parquet file (cells as the file holds them: text in CSV, typed columns in
    Parquet) both paths give the same table or the same message naming the data row and line."""
    rng = np.random.default_rng(7 if suffix == "csv" else 8)
    for case in range(12):
        df, kw = _draw(rng)
        df = df.reset_index(drop=True)
        for col in df.columns:  # a file column holds one type: text, except uniform float columns
            if df[col].dtype == object:
                df[col] = [None if v is None or (isinstance(v, float) and math.isnan(v)) else str(v) for v in df[col]]
        path = tmp_path / f"case{case}.{suffix}"
        if suffix == "csv":
            df.to_csv(path, index=False)
        else:
            df.to_parquet(path, index=False)
        fast = _outcome(path, kw, row_wise=False, monkeypatch=monkeypatch)
        slow = _outcome(path, kw, row_wise=True, monkeypatch=monkeypatch)
        _same(fast, slow, f"{suffix} case {case}: {kw}")


def test_csv_cells_in_arrow_give_the_same_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Invariant: importing a CSV file with its text cells moved to Arrow (text_tables.arrow_text, what
    from_frame does to save the Python strings) gives the table, or the error message naming the data row
    and line, that the object cells give -- on fuzzed imports of every kind, column-wise and row-wise."""
    rng = np.random.default_rng(11)
    compared = {"table": 0, "error": 0}
    for case in range(40):
        df, kw = _draw(rng)
        df = df.reset_index(drop=True)
        for col in df.columns:
            if df[col].dtype == object:
                df[col] = [None if v is None or (isinstance(v, float) and math.isnan(v)) else str(v) for v in df[col]]
        path = tmp_path / f"case{case}.csv"
        df.to_csv(path, index=False)
        row_wise = case % 4 == 0
        arrow = _outcome(path, kw, row_wise=row_wise, monkeypatch=monkeypatch)
        with monkeypatch.context() as m:
            m.setattr(frame_module, "arrow_text", lambda frame: frame)
            cells = _outcome(path, kw, row_wise=row_wise, monkeypatch=monkeypatch)
        _same(arrow, cells, f"csv case {case}: {kw}")
        compared["error" if isinstance(cells, tuple) else "table"] += 1
    assert min(compared.values()) >= 5, compared


def test_each_distinct_answer_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Invariant: with parse=, a text repeated across rows is read once per criterion (the parse cost grows
    with distinct answers, not rows), and every row still gets its own provenance."""
    calls: list[str] = []

    def rule(text: str) -> float | None:
        calls.append(text)
        return float(text[-1]) if text[-1].isdigit() else None

    df = pd.DataFrame({"id": [f"i{k}" for k in range(300)], "j": ["Score 3", "Score 4", "unsure"] * 100})
    table = from_frame(df, item_id="id", judges=["j"], kind="score", parse=rule, on_bad="unscored")
    assert sorted(calls) == ["Score 3", "Score 4", "unsure"]
    assert table["score"].tolist()[:3] == [3.0, 4.0, pd.NA]
    assert table["unscored_reason"].iloc[299] == "parse= returned no value (column 'j', row 299)"
    assert '"row": 299' in table["detail"].iloc[299]
