"""The table's turn column: old tables stay valid, statistics never pool two turns, reparse keeps the turn."""

from __future__ import annotations

import pandas as pd
import pytest

import judgelab
from judgelab import judgments, stats
from judgelab.rubrics import example_items, load_rubric
from judgelab.stats.question import AmbiguousQuestionError
from tests.support.openai_stub import StubServer


def _two_turn_table() -> pd.DataFrame:
    rows = [{"run_id": f"r{j}", "item_id": str(i), "rubric": "x", "criterion": "overall", "judge": j,
             "condition": "original", "turn": t, "score": float(s)}
            for j, scores in (("a", [1, 2, 3, 4, 5, 1]), ("b", [1, 3, 3, 5, 5, 2]))
            for i in range(3) for t, s in zip((1, 2), scores[2 * i:2 * i + 2], strict=True)]
    return judgments.make_table(rows)


def test_a_table_saved_before_the_turn_column_loads_with_whole_item_rows(tmp_path) -> None:
    table = _two_turn_table().drop(columns="turn")
    table = table[table["judge"] == "a"].drop_duplicates(["item_id"])
    for suffix in (".parquet", ".jsonl"):
        path = tmp_path / f"old{suffix}"
        table.to_parquet(path) if suffix == ".parquet" else judgments._write_jsonl(table, path)
        loaded = judgments.load(path)
        assert "turn" in loaded.columns and loaded["turn"].isna().all() and len(loaded) == len(table)


def test_statistics_refuse_to_pool_turns_and_split_on_them() -> None:
    """Two turns of one item are two questions: a statistic names them and asks for by='turn' (never pools)."""
    table = _two_turn_table()
    with pytest.raises(AmbiguousQuestionError, match=r"2 turns \(1, 2\).*by='turn'"):
        stats.percent_agreement("a", "b", data=table, n_resamples=50)
    per_turn = stats.percent_agreement("a", "b", data=table, by="turn", n_resamples=50).set_index("turn")
    assert per_turn.loc[1, "estimate"] == 1.0 and per_turn.loc[2, "estimate"] == 0.0


def test_reparse_keeps_each_rows_turn() -> None:
    with StubServer(lambda body: "Rating: [[7]]") as srv:
        table = judgelab.run(example_items("mt_bench_single")[:2], "mt_bench_single", "openai/stub",
                             api_base=srv.base_url, cache=False, progress=False)
    again = judgelab.reparse(table, load_rubric("mt_bench_single"))
    assert sorted(again["turn"].tolist()) == sorted(table["turn"].tolist()) == [1, 1, 2, 2]
    assert (again["score"] == 7).all()
