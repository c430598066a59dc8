"""from_frame: every mapping (long, wide, two orders, gold, optional columns) and every error path, on
hand-made frames and files; the shipped example files are regenerated from their seeded generator."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from judgelab import stats
from judgelab.datasets import FrameImportError, example_path, from_frame, read_frame
from judgelab.judgments import MISSING, OK, PARSE_ERROR, detail


def _rows(table: pd.DataFrame, judge: str) -> pd.DataFrame:
    return table[table["judge"] == judge].set_index(["item_id", "condition"]).sort_index()


# ------------------------------------------------------------------------------------------ long form

def test_long_form_scores_keep_criterion_repeat_and_cluster() -> None:
    df = pd.DataFrame({"q": ["1", "1", "2", "2"], "model": ["m", "m", "m", "m"], "rating": [4, 5, "3", 2.5],
                       "aspect": ["coh", "flu", "coh", "flu"], "run": [0, 0, 1, 1], "doc": ["d1", "d1", "d2", "d2"]})
    t = from_frame(df, item_id="q", judge="model", score="rating", criterion="aspect", repeat="run", cluster="doc")
    assert list(t["score"]) == [4.0, 5.0, 3.0, 2.5]
    assert list(t["criterion"]) == ["coh", "flu", "coh", "flu"]
    assert list(t["repeat"]) == [0, 0, 1, 1] and list(t["doc"]) == ["d1", "d1", "d2", "d2"]
    assert set(t["status"]) == {OK} and set(t["condition"]) == {"original"} and set(t["rubric"]) == {"imported"}
    assert list(t["raw_output"]) == ["4", "5", "3", "2.5"]
    assert detail(t.iloc[2]) == {"source": "from_frame", "column": "rating", "row": 2}


def test_long_form_labels_are_text_with_integral_numbers_unified() -> None:
    df = pd.DataFrame({"q": [1, 2, 3], "who": ["a", "a", "a"], "verdict": [1.0, 0.0, np.nan]})
    t = from_frame(df, item_id="q", judge="who", label="verdict")
    assert list(t["item_id"]) == ["1", "2", "3"]
    assert list(t["verdict"].iloc[:2]) == ["1", "0"]  # 1.0 (a float column with NaN) reads as "1"
    assert t["status"].iloc[2] == MISSING and t["unscored_reason"].iloc[2].startswith("missing in source")


def test_kind_follows_the_value_column_and_conflicts_are_errors() -> None:
    df = pd.DataFrame({"q": ["1"], "j": ["a"], "v": ["A"]})
    assert from_frame(df, item_id="q", judge="j", winner="v")["winner"].item() == "A"
    with pytest.raises(FrameImportError, match="implies kind 'pairwise'"):
        from_frame(df, item_id="q", judge="j", winner="v", kind="label")
    with pytest.raises(FrameImportError, match="exactly one value column"):
        from_frame(df, item_id="q", judge="j", winner="v", label="v")
    with pytest.raises(FrameImportError, match="not both"):
        from_frame(df, item_id="q", judge="j", judges=["v"], label="v")
    with pytest.raises(FrameImportError, match="say which columns"):
        from_frame(df, item_id="q")
    with pytest.raises(FrameImportError, match="needs kind="):
        from_frame(df, item_id="q", judges=["v"])
    with pytest.raises(FrameImportError, match="kind must be one of"):
        from_frame(df, item_id="q", judges=["v"], kind="rating")  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------ wide form

def test_wide_form_one_row_per_judge_and_missing_cells_are_unscored_rows() -> None:
    df = pd.DataFrame({"q": ["a", "b", "c"], "GPT-4": ["yes", None, "no"], "Mistral": ["no", "no", ""],
                       "Human": ["yes", "no", "no"]})
    t = from_frame(df, item_id="q", judges=["GPT-4", "Mistral"], gold="Human", kind="label")
    assert len(t) == 9  # 3 items x (2 judges + gold): nothing dropped
    gpt = _rows(t, "GPT-4")
    assert gpt.loc[("b", "original"), "status"] == MISSING
    assert gpt.loc[("b", "original"), "unscored_reason"] == "missing in source (column 'GPT-4', row 1)"
    assert _rows(t, "Mistral").loc[("c", "original"), "status"] == MISSING  # "" is a missing value
    gold = _rows(t, "gold")
    assert list(gold["verdict"]) == ["yes", "no", "no"] and set(gold["status"]) == {OK}


def test_wide_form_judge_names_from_a_mapping_and_gold_as_human() -> None:
    df = pd.DataFrame({"q": ["a", "b"], "s1": [3, 4], "s2": [2, 5], "h": [3, 5]})
    t = from_frame(df, item_id="q", judges={"s1": "judge-one", "s2": "judge-two"}, gold="h", kind="score",
                   gold_judge="human", scale=(1, 5))
    assert set(t["judge"]) == {"judge-one", "judge-two", "human"}
    res = stats.spearman("judge-one", "human", data=t, n_resamples=50)
    assert res["n"].item() == 2


def test_all_missing_judge_column_is_one_sentence() -> None:
    df = pd.DataFrame({"q": ["a", "b"], "j1": ["yes", "no"], "j2": [None, ""]})
    with pytest.raises(FrameImportError, match=r"judge column 'j2' has no value in any of its 2 rows"):
        from_frame(df, item_id="q", judges=["j1", "j2"], kind="label")


# ------------------------------------------------------------------------------------------ pairwise in two orders

def _two_orders() -> pd.DataFrame:
    # item p1: gold A; the judge picks the same candidate (original A) in both orders -> shown "B" when swapped
    return pd.DataFrame({"pair": ["p1", "p1", "p2", "p2"], "judge": ["j"] * 4,
                         "order": ["original", "swapped", "original", "swapped"],
                         "winner": ["A", "B", "tie", "A"], "label": ["A", "A", "B", "B"]})


def test_two_orders_shown_labels_are_flipped_to_original_labels() -> None:
    t = from_frame(_two_orders(), item_id="pair", judge="judge", winner="winner", condition="order", gold="label")
    j = _rows(t, "j")
    assert j.loc[("p1", "swapped"), "winner"] == "A"  # shown "B" in the swapped order = original A
    assert detail(j.loc[("p1", "swapped")])["shown_winner"] == "B"
    assert j.loc[("p2", "original"), "winner"] == "TIE" and j.loc[("p2", "swapped"), "winner"] == "B"
    gold = t[t["judge"] == "gold"]
    assert list(gold["winner"]) == ["A", "B"] and set(gold["condition"]) == {"original"}
    acc = stats.pairwise_accuracy(t, policy="tie", n_resamples=50).set_index("metric")
    assert acc.loc["position_consistency", "n_correct"] == 1  # p1 consistent, p2 not


def test_two_orders_already_in_original_labels_are_kept() -> None:
    t = from_frame(_two_orders(), item_id="pair", judge="judge", winner="winner", condition="order",
                   winner_in="original")
    assert _rows(t, "j").loc[("p1", "swapped"), "winner"] == "B"


def test_condition_values_map_source_orders_and_unknown_ones_are_named() -> None:
    df = _two_orders().assign(order=["AB", "BA", "AB", "BA"])
    t = from_frame(df, item_id="pair", judge="judge", winner="winner", condition="order",
                   condition_values={"AB": "original", "BA": "swapped"})
    assert sorted(set(t["condition"])) == ["original", "swapped"]
    flags = _two_orders().assign(order=[False, True, False, True])
    t2 = from_frame(flags, item_id="pair", judge="judge", winner="winner", condition="order",
                    condition_values={False: "original", True: "swapped"})
    assert _rows(t2, "j").loc[("p1", "swapped"), "winner"] == "A"
    with pytest.raises(FrameImportError, match=r"value 'BA', which condition_values= does not map"):
        from_frame(df, item_id="pair", judge="judge", winner="winner", condition="order",
                   condition_values={"AB": "original"})


@pytest.mark.parametrize(("source", "expected"), [("model_a", "A"), ("B>A", "B"), ("A>>B", "A"), ("Tie", "TIE"),
                                                  ("tie (bothbad)", "TIE"), ("2", "B"), (1, "A"), ("A=B", "TIE")])
def test_default_winner_values(source: object, expected: str) -> None:
    df = pd.DataFrame({"q": ["x"], "j": ["m"], "w": [source]})
    assert from_frame(df, item_id="q", judge="j", winner="w")["winner"].item() == expected


def test_winner_values_mapping_replaces_the_default() -> None:
    df = pd.DataFrame({"q": ["x", "y"], "j": ["m", "m"], "w": ["left", "right"]})
    t = from_frame(df, item_id="q", judge="j", winner="w", winner_values={"left": "A", "right": "B"})
    assert list(t["winner"]) == ["A", "B"]
    with pytest.raises(FrameImportError, match="must map to 'A', 'B' or 'TIE'"):
        from_frame(df, item_id="q", judge="j", winner="w", winner_values={"left": "first"})


def test_conflicting_gold_is_an_error_naming_both_rows() -> None:
    df = _two_orders().assign(label=["A", "B", "B", "B"])  # p1's gold given in shown labels on the swapped row
    with pytest.raises(FrameImportError, match=r"gives item 'p1' two values: 'A' \(row 0\) and 'B' \(row 1\)"):
        from_frame(df, item_id="pair", judge="judge", winner="winner", condition="order", gold="label")


def test_missing_gold_is_an_unscored_gold_row_and_a_later_value_fills_it() -> None:
    df = _two_orders().assign(label=[None, "A", None, None])
    t = from_frame(df, item_id="pair", judge="judge", winner="winner", condition="order", gold="label")
    gold = t[t["judge"] == "gold"].set_index("item_id")
    assert gold.loc["p1", "winner"] == "A" and gold.loc["p1", "status"] == OK
    assert gold.loc["p2", "status"] == MISSING


# ------------------------------------------------------------------------------------------ values it cannot map

@pytest.mark.parametrize(("kwargs", "value", "message"), [
    ({"kind": "label", "labels": ["yes", "no"]}, "maybe", r"value 'maybe' in column 'j' \(row 1\) is not one of the "
                                                          r"declared labels \['yes', 'no'\]"),
    ({"kind": "score", "scale": (1, 5)}, 7, r"value 7 in column 'j' \(row 1\) is outside the scale 1-5"),
    ({"kind": "score"}, "four", r"value 'four' in column 'j' \(row 1\) is not a number"),
    ({"kind": "pairwise"}, "C", r"value 'C' in column 'j' \(row 1\) is not a known winner"),
])
def test_bad_values_raise_naming_column_row_and_value_or_become_unscored(kwargs: dict, value: object,
                                                                        message: str) -> None:
    good = {"label": "yes", "score": 3, "pairwise": "A"}[kwargs["kind"]]
    df = pd.DataFrame({"q": ["a", "b"], "j": pd.Series([good, value], dtype=object)})
    with pytest.raises(FrameImportError, match=message):
        from_frame(df, item_id="q", judges=["j"], **kwargs)
    t = from_frame(df, item_id="q", judges=["j"], on_bad="unscored", **kwargs)
    bad = t.iloc[1]
    assert bad["status"] == PARSE_ERROR and bad["raw_output"] == str(value)
    assert pd.Series([bad["unscored_reason"]]).str.contains(message.split(" in column")[0]).item()
    assert t.iloc[0]["status"] == OK


def test_option_for_another_kind_is_an_error() -> None:
    df = pd.DataFrame({"q": ["a"], "j": ["yes"]})
    with pytest.raises(FrameImportError, match="scale= declares the range of kind 'score'"):
        from_frame(df, item_id="q", judges=["j"], kind="label", scale=(1, 5))
    with pytest.raises(FrameImportError, match="labels= declares"):
        from_frame(df, item_id="q", judges=["j"], kind="score", labels=["yes"])
    with pytest.raises(FrameImportError, match="on_bad must be"):
        from_frame(df, item_id="q", judges=["j"], kind="label", on_bad="drop")  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------ bad frames

def test_empty_frame_unknown_column_and_bom_are_one_sentence() -> None:
    with pytest.raises(FrameImportError, match="the frame has no rows"):
        from_frame(pd.DataFrame({"q": [], "j": []}), item_id="q", judges=["j"], kind="label")
    df = pd.DataFrame({"question": ["a"], "judge_1": ["yes"]})
    with pytest.raises(FrameImportError, match=r"item_id='questoin' is not a column .* did you mean 'question'"):
        from_frame(df, item_id="questoin", judges=["judge_1"], kind="label")
    with pytest.raises(FrameImportError, match=r"judges='judge_2' is not a column"):
        from_frame(df, item_id="question", judges=["judge_1", "judge_2"], kind="label")
    bom = df.rename(columns={"question": "\ufeffquestion"})
    with pytest.raises(FrameImportError, match="byte-order mark"):
        from_frame(bom, item_id="question", judges=["judge_1"], kind="label")
    with pytest.raises(FrameImportError, match="DataFrame or a file path"):
        from_frame([{"q": 1}], item_id="q", judges=["j"], kind="label")  # type: ignore[arg-type]


def test_labels_are_compared_as_text_and_refused_only_where_they_could_never_match() -> None:
    # a number and text labels in one column, or digit strings beside text labels: one set of text labels
    within = pd.DataFrame({"q": ["a", "b", "c"], "j": pd.Series([1, "Tie", 2], dtype=object)})
    t = from_frame(within, item_id="q", judges=["j"], kind="label")
    assert list(t["verdict"]) == ["1", "Tie", "2"]
    across = pd.DataFrame({"q": ["a", "b"], "j": ["2", "Tie"], "human": pd.Series([2, "Tie"], dtype=object)})
    t = from_frame(across, item_id="q", judges=["j"], gold="human", kind="label")
    assert set(t.loc[t["judge"] == "j", "verdict"]) == set(t.loc[t["judge"] == "gold", "verdict"]) == {"2", "Tie"}
    # the number 2 reads "2": a "2.0" beside it would never match
    odd = pd.DataFrame({"q": ["a", "b"], "j": ["2.0", "1.0"], "human": [2, 1]})
    with pytest.raises(FrameImportError, match=r"column 'human' holds numbers .* column 'j' the text '1.0'"):
        from_frame(odd, item_id="q", judges=["j"], gold="human", kind="label")
    # numbers in one column, text in another, nothing in common: a coding mismatch (1/0 vs yes/no)
    coded = pd.DataFrame({"q": ["a", "b"], "j": ["yes", "no"], "human": [1, 0]})
    with pytest.raises(FrameImportError, match="labels of different types with none in common"):
        from_frame(coded, item_id="q", judges=["j"], gold="human", kind="label")


def test_two_verdicts_for_one_key_name_the_rows_and_the_fix() -> None:
    df = pd.DataFrame({"q": ["a", "a"], "j": ["m", "m"], "s": [1, 2]})
    with pytest.raises(FrameImportError, match=r"judge 'm' has two verdicts for item 'a' .* row 0 and row 1 \(rows are 0-based positions\).*repeat="):
        from_frame(df, item_id="q", judge="j", score="s")


def test_empty_item_and_bad_repeat_are_errors() -> None:
    with pytest.raises(FrameImportError, match=r"column 'q' \(item_id\) is empty in 1 rows \(row 1\)"):
        from_frame(pd.DataFrame({"q": ["a", None], "j": ["m", "m"], "s": [1, 2]}), item_id="q", judge="j", score="s")
    with pytest.raises(FrameImportError, match=r"whole numbers >= 0; row 1 has 1.5"):
        from_frame(pd.DataFrame({"q": ["a", "a"], "j": ["m", "m"], "s": [1, 2], "r": [0, 1.5]}), item_id="q",
                   judge="j", score="s", repeat="r")
    with pytest.raises(FrameImportError, match="would overwrite judgments-table columns"):
        from_frame(pd.DataFrame({"q": ["a"], "j": ["m"], "s": [1], "score2": [1]}).rename(columns={"score2": "judge"}),
                   item_id="q", judges=["s"], kind="score", cluster="judge")


# ------------------------------------------------------------------------------------------ files

def _csv(rows: list[list[str]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def test_csv_with_bom_and_embedded_newlines(tmp_path: Path) -> None:
    path = tmp_path / "verdicts.csv"
    text = _csv([["id", "answer", "j", "h"], ["007", "line one\nline two, with a comma", "yes", "no"],
                 ["008", "plain", "NA", "yes"]])
    path.write_bytes("\ufeff".encode() + text.encode("utf-8"))
    t = from_frame(path, item_id="id", judges=["j"], gold="h", kind="label", keep=["answer"])
    assert list(t.loc[t["judge"] == "j", "item_id"]) == ["007", "008"]  # text ids keep their zeros
    assert t["answer"].iloc[0] == "line one\nline two, with a comma"
    assert t.loc[t["item_id"] == "008", "status"].iloc[0] == MISSING  # "NA" is a missing value ...
    assert "data row 2" in t.loc[t["item_id"] == "008", "unscored_reason"].iloc[0]
    assert set(t["run_id"]) == {"from_frame:verdicts.csv"}
    kept = from_frame(path, item_id="id", judges=["j"], kind="label", missing_values=("",))
    assert kept.loc[kept["item_id"] == "008", "verdict"].iloc[0] == "NA"  # ... unless missing_values says not


def test_unclosed_quote_is_one_sentence(tmp_path: Path) -> None:
    path = tmp_path / "broken.csv"
    path.write_text('id,j\n1,"yes\n2,no\n', encoding="utf-8")
    with pytest.raises(FrameImportError, match="cannot read broken.csv as CSV.*unclosed quote"):
        from_frame(path, item_id="id", judges=["j"], kind="label")


def test_tsv_jsonl_json_parquet_read_the_same(tmp_path: Path) -> None:
    df = pd.DataFrame({"q": ["a", "b", "c"], "j": ["yes", "no", None], "h": ["yes", "yes", "no"]})
    (tmp_path / "v.tsv").write_text(df.fillna("").to_csv(sep="\t", index=False), encoding="utf-8")
    df.to_json(tmp_path / "v.jsonl", orient="records", lines=True)
    (tmp_path / "v.json").write_text(json.dumps(df.to_dict(orient="records")), encoding="utf-8")
    df.to_parquet(tmp_path / "v.parquet")
    tables = [from_frame(tmp_path / f"v.{ext}", item_id="q", judges=["j"], gold="h", kind="label")
              for ext in ("tsv", "jsonl", "json", "parquet")]
    for t in tables:
        assert list(t["verdict"].fillna("-")) == ["yes", "no", "-", "yes", "yes", "no"]
        assert list(t["status"]) == [OK, OK, MISSING, OK, OK, OK]
    with pytest.raises(FrameImportError, match="cannot tell the format of v.xlsx"):
        (tmp_path / "v.xlsx").write_text("x")
        read_frame(tmp_path / "v.xlsx")
    with pytest.raises(FrameImportError, match="no file at"):
        read_frame(tmp_path / "absent.csv")


# ------------------------------------------------------------------------------------------ shipped examples

def _qa_verdicts_csv(seed: int = 16) -> str:
    """40 questions x 3 answers: three judges' yes/no acceptability verdicts beside a human label."""
    rng = np.random.default_rng(seed)
    accuracy = {"judge_large": 0.9, "judge_medium": 0.8, "judge_small": 0.7}
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["answer_id", "question", *accuracy, "human"])
    for q in range(1, 41):
        hard = rng.random() < 0.3  # a hard question lowers every judge's accuracy on its answers
        for a in range(1, 4):
            human = "yes" if rng.random() < 0.6 else "no"
            row = [f"q{q:02d}-a{a}", f"q{q:02d}"]
            for p in accuracy.values():
                right = rng.random() < (p - 0.25 if hard else p)
                row.append(human if right else {"yes": "no", "no": "yes"}[human])
            row.append(human)
            if rng.random() < 0.04:
                row[2 + int(rng.integers(0, 3))] = ""  # a judge left no verdict
            if (q, a) == (12, 3):
                row[-1] = ""  # no human label for this answer
            writer.writerow(row)
    return out.getvalue()


def _pairwise_two_orders_csv(seed: int = 16) -> str:
    """30 pairs judged in both orders (AB, BA) by two judges; winner in the labels as shown; gold in AB labels."""
    rng = np.random.default_rng(seed)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["pair_id", "judge", "order", "winner", "label"])
    judges = {"judge_large": (0.85, 0.05), "judge_small": (0.65, 0.3)}  # (accuracy, P(pick the first shown))
    for k in range(1, 31):
        gold = "A" if rng.random() < 0.5 else "B"
        for judge, (accuracy, first_bias) in judges.items():
            for order in ("AB", "BA"):
                if rng.random() < first_bias:
                    shown = "A"  # the candidate shown first, whatever its merit
                elif rng.random() < 0.05:
                    shown = "tie"
                else:
                    original = gold if rng.random() < accuracy else {"A": "B", "B": "A"}[gold]
                    shown = original if order == "AB" else {"A": "B", "B": "A"}[original]
                if judge == "judge_small" and k == 7 and order == "BA":
                    shown = ""  # one verdict the judge never gave
                writer.writerow([f"pair{k:02d}", judge, order, shown, gold])
    return out.getvalue()


def test_example_files_are_regenerated_by_their_seeded_generator() -> None:
    assert example_path("qa_verdicts_wide.csv").read_text(encoding="utf-8") == _qa_verdicts_csv()
    assert example_path("pairwise_two_orders.csv").read_text(encoding="utf-8") == _pairwise_two_orders_csv()
    with pytest.raises(FrameImportError, match="no example file 'nope.csv'; available: pairwise_two_orders.csv"):
        example_path("nope.csv")


def test_wide_example_agreement_matches_sklearn_on_the_raw_csv() -> None:
    path = example_path("qa_verdicts_wide.csv")
    t = from_frame(path, item_id="answer_id", judges=["judge_large", "judge_medium", "judge_small"], gold="human",
                   kind="label", labels=["yes", "no"], cluster="question")
    assert len(t) == 4 * 120 and int((t["status"] == MISSING).sum()) == 9  # 8 judge cells + 1 human cell
    raw = pd.read_csv(path, dtype=str, keep_default_na=False)
    both = raw[(raw["judge_small"] != "") & (raw["human"] != "")]
    kappa = stats.cohen_kappa("judge_small", "gold", data=t, value="verdict", n_resamples=50)
    assert kappa["n"].item() == len(both)
    assert kappa["estimate"].item() == pytest.approx(cohen_kappa_score(both["judge_small"], both["human"]), abs=1e-12)
    agree = stats.percent_agreement("judge_small", "gold", data=t, value="verdict", n_resamples=50)
    assert agree["estimate"].item() == pytest.approx((both["judge_small"] == both["human"]).mean(), abs=1e-12)


def test_pairwise_example_flips_the_swapped_order() -> None:
    path = example_path("pairwise_two_orders.csv")
    t = from_frame(path, item_id="pair_id", judge="judge", winner="winner", condition="order", gold="label",
                   condition_values={"AB": "original", "BA": "swapped"})
    raw = pd.read_csv(path, dtype=str, keep_default_na=False)
    swapped = raw[(raw["order"] == "BA") & raw["winner"].isin(["A", "B"])]
    table = t[(t["condition"] == "swapped") & (t["judge"] != "gold")].set_index(["item_id", "judge"])
    for _, r in swapped.iterrows():
        assert table.loc[(r["pair_id"], r["judge"]), "winner"] == {"A": "B", "B": "A"}[r["winner"]]
    assert len(t[t["judge"] == "gold"]) == 30 and int((t["status"] == MISSING).sum()) == 1
