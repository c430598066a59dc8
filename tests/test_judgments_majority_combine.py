"""judgments.majority (the annotators' plurality as a rater, ties by a named policy) and judgments.combine
(separate loads in one table, one copy of the rows they share)."""

from __future__ import annotations

import warnings
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as sk

from judgelab import judgments, stats
from judgelab.judgments import JudgmentsTableError, make_table

ANNOTATORS = ["human:a1", "human:a2", "human:a3"]
WINNERS = ["A", "B", "TIE"]


def _table(votes: list[list[str | None]], judge: list[str | None] | None = None) -> pd.DataFrame:
    """Winner rows: votes[i][k] of annotator k on item i (None: an unreadable annotation), and a judge's."""
    rows = []
    for i, item_votes in enumerate(votes):
        base = {"item_id": f"i{i}", "rubric": "pairwise", "criterion": "overall", "condition": "original",
                "repeat": 0, "document_id": f"d{i // 2}"}
        for annotator, vote in zip(ANNOTATORS, item_votes, strict=True):
            rows.append({**base, "run_id": "humans", "judge": annotator, "winner": vote} if vote else
                        {**base, "run_id": "humans", "judge": annotator, "status": "parse_error",
                         "unscored_reason": "unreadable"})
        if judge is not None:
            verdict = judge[i]
            rows.append({**base, "run_id": "judge-run", "judge": "gpt", "winner": verdict} if verdict else
                        {**base, "run_id": "judge-run", "judge": "gpt", "status": "parse_error",
                         "unscored_reason": "no verdict in the reply"})
    return make_table(rows)


def _expected_majority(votes: list[str | None], ties: str) -> str | None:
    counts = Counter(v for v in votes if v)
    if sum(counts.values()) < 2:
        return None
    top = max(counts.values())
    leaders = [v for v, c in counts.items() if c == top]
    if len(leaders) == 1:
        return leaders[0]
    if ties == "label":
        return "TIE"
    if ties == "first_rater":
        return next(v for v in votes if v in leaders)
    return None


votes_strategy = st.lists(st.lists(st.sampled_from([*WINNERS, None]), min_size=3, max_size=3), min_size=1,
                          max_size=25)


@settings(max_examples=80, deadline=None)
@given(votes_strategy, st.sampled_from(["unscored", "label", "first_rater"]))
def test_majority_is_the_plurality_with_the_named_tie_rule(votes: list[list[str | None]], ties: str) -> None:
    """Invariant: for every item the new rater's winner is the most common annotator vote (unreadable annotations
    do not vote; fewer than 2 votes -> unscored); a split vote follows the tie policy; the original rows are
    untouched and the added rows keep the item's extra columns (document_id)."""
    table = _table(votes)
    out = judgments.majority(table, ANNOTATORS, ties=ties, value="winner")
    pd.testing.assert_frame_equal(out.iloc[: len(table)].reset_index(drop=True), judgments.validate(table))
    added = out[out["judge"] == "majority"].set_index("item_id")
    assert len(added) == len(votes)
    for i, item_votes in enumerate(votes):
        row = added.loc[f"i{i}"]
        expected = _expected_majority(item_votes, ties)
        if expected is None:
            assert row["status"] == "missing" and pd.isna(row["winner"])
        else:
            assert row["status"] == "ok" and row["winner"] == expected
        assert row["document_id"] == f"d{i // 2}"


def test_refuse_names_the_tied_items_and_the_choices() -> None:
    table = _table([["A", "A", "B"], ["A", "B", "TIE"]])
    with pytest.raises(JudgmentsTableError, match=r"1 key\(s\).*'i1'.*ties='unscored', 'label'"):
        judgments.majority(table, ANNOTATORS)


def test_majority_refuses_what_it_cannot_decide() -> None:
    table = _table([["A", "A", "B"]], judge=["A"])
    with pytest.raises(JudgmentsTableError, match="already has rows of judge 'gpt'"):
        judgments.majority(table, ANNOTATORS, name="gpt")
    with pytest.raises(JudgmentsTableError, match=r"rater\(s\) \['human:a9'\]"):
        judgments.majority(table, [*ANNOTATORS[:2], "human:a9"])
    with pytest.raises(JudgmentsTableError, match="ties must be one of"):
        judgments.majority(table, ANNOTATORS, ties="coin")
    doubled = pd.concat([table, table.assign(run_id="again")])
    with pytest.raises(JudgmentsTableError, match="several scored rows"):
        judgments.majority(doubled, ANNOTATORS)
    scores = make_table([{"item_id": "i", "rubric": "r", "criterion": "c", "condition": "original", "judge": j,
                          "score": s} for j, s in (("h1", 3), ("h2", 4))])
    with pytest.raises(JudgmentsTableError, match="needs tie_label="):
        judgments.majority(scores, ["h1", "h2"], ties="label")
    assert judgments.majority(scores, ["h1", "h2"], ties="label", tie_label=3.5)["score"].iloc[-1] == 3.5


def test_published_style_path_macro_f1_against_the_annotators_majority() -> None:
    """The published-study path in four calls: a three-class pairwise judge (A / B / TIE), its unreadable verdicts
    counted as ties (the publisher's rule), reported as accuracy and macro precision/recall/F1 against the
    majority of three annotators (a 1-1-1 split counted as a tie) -- equal to scikit-learn on the same labels."""
    rng = np.random.default_rng(11)
    truth = rng.choice(WINNERS, 120, p=[0.4, 0.4, 0.2])
    votes = [[t if rng.random() < 0.75 else rng.choice(WINNERS) for _ in range(3)] for t in truth]
    judge = [None if rng.random() < 0.08 else (t if rng.random() < 0.7 else rng.choice(WINNERS)) for t in truth]
    table = _table(votes, judge)

    counted = judgments.fill_unscored(table, "TIE", column="winner", judge="gpt")
    with_majority = judgments.majority(counted, ANNOTATORS, ties="label")
    report = stats.classification_report("gpt", "majority", data=with_majority, value="winner", average="macro",
                                         cluster="document_id", n_resamples=500)

    gold = [_expected_majority(v, "label") for v in votes]
    predicted = [j or "TIE" for j in judge]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p, r, f, _ = sk.precision_recall_fscore_support(gold, predicted, average="macro", zero_division=np.nan)
    got = report.set_index("metric")["estimate"]
    assert got["accuracy"] == pytest.approx(sk.accuracy_score(gold, predicted), abs=1e-12)
    assert [got["precision_macro"], got["recall_macro"], got["f1_macro"]] == pytest.approx([p, r, f], abs=1e-12)
    assert (report["n"] == 120).all()
    assert report["method"].str.contains("clustered by document_id (60 clusters", regex=False).all()
    assert (report["ci_low"] <= report["estimate"]).all() and (report["estimate"] <= report["ci_high"]).all()


def test_combine_keeps_one_copy_of_shared_gold_rows() -> None:
    """Two loads of one data set (each with its judge and the same gold rows) become one table: gold once, both
    judges, and a statistic comparing the judges runs on it."""
    def load(judge: str, flip: int) -> pd.DataFrame:
        rows = []
        for i in range(6):
            base = {"run_id": f"load:{judge}", "item_id": f"i{i}", "rubric": f"r:{judge}", "criterion": "overall",
                    "condition": "original", "repeat": 0}
            rows.append({**base, "judge": "gold", "winner": "A" if i % 2 else "B"})
            rows.append({**base, "judge": judge, "winner": "A" if (i + flip) % 3 else "B"})
        return make_table(rows)

    first, second = load("gpt-4", 0), load("chatgpt", 1)
    combined = judgments.combine([first, second])
    assert sorted(combined["judge"].value_counts().items()) == [("chatgpt", 6), ("gold", 6), ("gpt-4", 6)]
    assert set(combined.loc[combined.judge == "gold", "run_id"]) == {"load:gpt-4"}
    with pytest.raises(stats.DuplicateRatingsError, match=r"judgments\.combine"):
        stats.compare_judges("gpt-4", "chatgpt", "gold", data=pd.concat([first, second]), metric="accuracy",
                             value="winner", n_resamples=50)
    result = stats.compare_judges("gpt-4", "chatgpt", "gold", data=combined, metric="accuracy", value="winner",
                                  n_resamples=50)
    assert list(result["n"]) == [6, 6, 6]


def test_combine_refuses_conflicting_rows_in_one_sentence() -> None:
    base = {"item_id": "i0", "rubric": "r", "criterion": "overall", "condition": "original", "repeat": 0,
            "judge": "gold"}
    one = make_table([{**base, "run_id": "x", "winner": "A"}])
    other = make_table([{**base, "run_id": "y", "winner": "B"}])
    with pytest.raises(JudgmentsTableError, match=r"disagree on 1 rating.*'gold'.*table 1: winner 'A'; table 2: "
                                                  r"winner 'B'.*distinct judge names"):
        judgments.combine([one, other])
    assert len(judgments.combine([one, one.assign(run_id="z")])) == 1


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.sampled_from(["gold", "j1", "j2"]), st.sampled_from(WINNERS)),
                min_size=1, max_size=20, unique_by=lambda t: (t[0], t[1])),
       st.lists(st.integers(0, 2), min_size=1, max_size=20))
def test_combine_is_a_union_without_copies(ratings: list[tuple[int, str, str]], assignment: list[int]) -> None:
    """Invariant: consistent ratings spread over up to three tables (a rating may sit in several) combine to exactly
    one row per rating, each with its value."""
    tables: list[list[dict[str, object]]] = [[], [], []]
    for k, (item, judge, winner) in enumerate(ratings):
        homes = {assignment[k % len(assignment)], assignment[(k * 7) % len(assignment)]}
        for t in homes:
            tables[t].append({"run_id": f"t{t}", "item_id": f"i{item}", "rubric": "r", "criterion": "overall",
                              "condition": "original", "judge": judge, "winner": winner})
    combined = judgments.combine([make_table(rows) for rows in tables if rows])
    got = sorted(zip(combined["item_id"], combined["judge"], combined["winner"], strict=True))
    assert got == sorted((f"i{i}", j, w) for i, j, w in ratings)


@pytest.mark.parametrize("seed", range(6))
def test_copies_under_two_rubrics_name_combine_and_other_ratings_name_by(seed: int) -> None:
    """Invariant (seeded tables): a rater whose rows under two rubrics (or runs) are the same ratings is told
    to combine the loads; once one of its ratings differs, combine is never suggested: two rubrics are two
    designs (the refusal names by=), two runs are a rater named twice (name them apart)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 9))
    column = ["rubric", "run_id"][seed % 2]
    gold = rng.choice(["A", "B"], size=n)

    def load(tag: str, labels: np.ndarray) -> pd.DataFrame:
        rows = []
        for i in range(n):
            base = {"run_id": "run", "rubric": "r", "item_id": f"i{i}", "criterion": "overall",
                    "condition": "original", "repeat": 0, column: f"{column}:{tag}"}
            rows.append({**base, "judge": "gold", "winner": labels[i]})
            rows.append({**base, "judge": f"judge-{tag}", "winner": rng.choice(["A", "B"])})
        return make_table(rows)

    copies = pd.concat([load("x", gold), load("y", gold)], ignore_index=True)
    with pytest.raises(stats.DuplicateRatingsError, match=r"judgments\.combine"):
        stats.compare_judges("judge-x", "judge-y", "gold", data=copies, metric="accuracy", value="winner",
                             n_resamples=20)
    changed = gold.copy()
    changed[int(rng.integers(n))] = "TIE"
    other = pd.concat([load("x", gold), load("y", changed)], ignore_index=True)
    # two rubrics are two designs (by='rubric'); two runs rating differently are one rater named twice
    refusal = (stats.AmbiguousQuestionError, "by=") if column == "rubric" else \
        (stats.DuplicateRatingsError, "distinct judge name")
    with pytest.raises(refusal[0], match=refusal[1]) as caught:
        stats.compare_judges("judge-x", "judge-y", "gold", data=other, metric="accuracy", value="winner",
                             n_resamples=20)
    assert "combine" not in str(caught.value)
