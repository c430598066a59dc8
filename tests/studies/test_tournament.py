"""The tournament helpers: one item per question and pair of systems, and the systems put back on the table.

The invariant: a round robin of k systems over q questions makes q x k(k-1)/2 items, each pair once with the
first name as A; with the systems attached, rank_systems reads the table and ranks a system that always wins
first (a synthetic table: the judge here is a rule, since no model can judge offline).
"""

from __future__ import annotations

import pandas as pd
import pytest

from judgelab.errors import ConfigError
from judgelab.judgments import make_table
from judgelab.stats import rank_systems
from judgelab.studies.tournament import tournament_items, with_systems

QUESTIONS = {"q1": "What is 2+2?", "q2": "Name a prime.", "q3": "Capital of France?"}
ANSWERS = {s: {q: f"{s} answers {q}" for q in QUESTIONS} for s in ("best", "mid", "worst")}
STRENGTH = {"best": 2, "mid": 1, "worst": 0}


def test_round_robin_items_and_ranking_from_the_table() -> None:
    items = tournament_items(QUESTIONS, ANSWERS)
    assert len(items) == 3 * 3
    assert {(i["model_a"], i["model_b"]) for i in items} == {("best", "mid"), ("best", "worst"), ("mid", "worst")}
    rows = []
    for item in items:
        for condition in ("original", "swapped"):
            a_wins = STRENGTH[item["model_a"]] > STRENGTH[item["model_b"]]
            if item["question_id"] == "q3" and condition == "swapped":
                a_wins = not a_wins  # one upset per pair: every system wins somewhere, so the fit is finite
            rows.append({"run_id": "t", "item_id": item["item_id"], "rubric": "pairwise", "criterion": "overall",
                         "judge": "rule", "condition": condition, "status": "ok", "winner": "A" if a_wins else "B"})
    table = with_systems(make_table(pd.DataFrame(rows)), items)
    assert len(table) == len(rows) and table["model_a"].notna().all()
    ranked = rank_systems(table, system_a="model_a", system_b="model_b", ties="half", n_resamples=100)
    coef = ranked[ranked["metric"] == "bt_coefficient"].sort_values("rank")
    assert coef["system"].tolist()[0] == "best"
    with pytest.raises(ConfigError, match="already has column"):
        with_systems(table, items)


@pytest.mark.parametrize(("answers", "match"), [
    ({"only": ANSWERS["best"]}, "two or more systems"),
    ({"a": ANSWERS["best"], "b": {"q1": "x", "q2": "y"}}, "no answer to question 'q3'"),
])
def test_a_tournament_without_every_answer_is_refused(answers: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        tournament_items(QUESTIONS, answers)
