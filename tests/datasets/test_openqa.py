"""OpenQA-eval (NQ301): published agreement numbers, verdict parsing, and the missing-tab repair."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from judgelab.datasets import DataNotFoundError, DatasetResult, openqa
from judgelab.stats.agreement import cohen_kappa, percent_agreement


@pytest.fixture(scope="module")
def gpt4(data_dir: Path) -> DatasetResult:
    return openqa("gpt-4", data_dir=data_dir)


def _verdicts(result: DatasetResult, judge: str) -> dict[str, str | None]:
    rows = result.table[result.table["judge"] == judge]
    return {
        i: (v if s == "ok" else None)
        for i, v, s in zip(rows["item_id"], rows["verdict"], rows["status"], strict=True)
    }


def test_annotator_agreement_kappa_735(gpt4: DatasetResult) -> None:
    """Published: annotator 1 vs 2 Cohen's kappa .735 (the 7 pairs annotator 2 left blank are not rated)."""
    res = cohen_kappa(
        "human:annotator1", "human:annotator2", data=gpt4.table, value="verdict", n_resamples=200
    )
    kappa = res["estimate"].item()
    assert res["n"].item() == 1483
    assert round(kappa, 3) == 0.735
    a1, a2 = _verdicts(gpt4, "human:annotator1"), _verdicts(gpt4, "human:annotator2")
    both = [i for i in a1 if a1[i] and a2.get(i)]
    assert kappa == pytest.approx(cohen_kappa_score([a1[i] for i in both], [a2[i] for i in both]), abs=1e-12)


def test_gpt4_vs_human_agreement_848_and_kappa_695(gpt4: DatasetResult) -> None:
    """Published: GPT-4 vs human 84.8% agreement, kappa .695.

    The paper's scorer (ehsk/OpenQA-eval ``gpt_eval``) counts a reply that starts with neither
    "yes" nor "no" as not acceptable; the loader keeps those 10 replies unscored, so the
    published convention is applied here explicitly. Human = the majority verdict
    (``Acceptable?`` column). Kappa comes out 0.69598: .695 when truncated to three decimals
    (.696 when rounded); agreement 84.83% rounds to the published 84.8%.
    """
    human, judge = _verdicts(gpt4, "human"), _verdicts(gpt4, "gpt-4")
    assert sum(v is None for v in judge.values()) == 10
    ids = list(human)
    y_human = np.array([human[i] for i in ids], dtype=object)
    y_judge = np.array([judge[i] or "no" for i in ids], dtype=object)  # the paper's convention
    agreement = percent_agreement(y_judge, y_human, n_resamples=200)["estimate"].item()
    kappa = cohen_kappa(y_judge, y_human, n_resamples=200)["estimate"].item()
    assert round(agreement * 100, 1) == 84.8
    assert math.floor(kappa * 1000) / 1000 == 0.695
    assert kappa == pytest.approx(cohen_kappa_score(y_judge, y_human), abs=1e-12)
    # the honest alternative (unscored replies excluded) is reported beside it in the final report
    excluded = cohen_kappa("gpt-4", "human", data=gpt4.table, value="verdict", n_resamples=200)
    assert excluded["n"].item() == 1480


def test_human_majority_matches_the_annotators(gpt4: DatasetResult) -> None:
    votes = {j: _verdicts(gpt4, j) for j in ("human:annotator1", "human:annotator2", "human:annotator3")}
    for item, verdict in _verdicts(gpt4, "human").items():
        cast = [v[item] for v in votes.values() if v.get(item)]
        assert verdict == max(set(cast), key=cast.count)
    unscored = gpt4.table[gpt4.table["status"] != "ok"]
    assert set(unscored["judge"]) == {"gpt-4", "human:annotator2"}
    assert unscored["verdict"].isna().all()


def test_every_judge_loads_and_bem_carries_its_probability(data_dir: Path) -> None:
    davinci = openqa("text-davinci-003", data_dir=data_dir)
    rows = davinci.table[davinci.table["judge"] == "text-davinci-003"]
    assert len(rows) == 1490 and (rows["status"] == "ok").all()
    assert set(davinci.items["question"]) == set(openqa("human", data_dir=data_dir).items["question"])
    bem = openqa("bem", data_dir=data_dir)
    rows = bem.table[bem.table["judge"] == "BEM"]
    assert ((rows["confidence"] > 0.5) == (rows["verdict"] == "yes")).all()
    assert bem.items["gold_answers"].map(len).min() >= 1
    with pytest.raises(DataNotFoundError, match="unknown OpenQA-eval judge"):
        openqa("gpt-5", data_dir=data_dir)


def test_missing_tab_between_question_and_answer_is_repaired(tmp_path: Path, data_dir: Path) -> None:
    """A hand-made text-davinci-003 file: row 1 has the tab, row 2 lacks it; then a row that cannot be split."""
    src = data_dir / "OpenQA-eval" / "data"
    root = tmp_path / "OpenQA-eval" / "data"
    root.mkdir(parents=True)
    human = (src / "NQ301_human.tsv").read_text(encoding="utf-8").splitlines()[:3]
    bem = (src / "NQ301_BEM.tsv").read_text(encoding="utf-8").splitlines()[:3]
    (root / "NQ301_human.tsv").write_text("\n".join(human) + "\n", encoding="utf-8")
    (root / "NQ301_BEM.tsv").write_text("\n".join(bem) + "\n", encoding="utf-8")
    q1, a1 = human[1].split("\t")[1:3]
    q2, a2 = human[2].split("\t")[1:3]
    lines = [
        "id\tQuestion\tModel answer\tAcceptable?\ttext-davinci-003",
        f"1\t{q1}\t{a1}\tYes\tYes, the candidate is correct.",
        f"1\t{q2}{a2}\tNo\tNo, the candidate is not correct.",
    ]
    (root / "NQ301_text-davinci-003.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = openqa("text-davinci-003", data_dir=tmp_path)
    rows = result.table[result.table["judge"] == "text-davinci-003"].set_index("item_id")
    assert list(rows["verdict"]) == ["yes", "no"]
    assert not rows["detail"].fillna("").str.contains("answer_as_judged").any()

    lines[2] = f"1\tsomething else entirely{a2}\tNo\tNo."
    (root / "NQ301_text-davinci-003.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 3 has 4 columns and its question does not match"):
        openqa("text-davinci-003", data_dir=tmp_path)
    shutil.rmtree(tmp_path / "OpenQA-eval")
    with pytest.raises(DataNotFoundError, match="has no OpenQA-eval/ subfolder"):
        openqa("gpt-4", data_dir=tmp_path)


def test_replies_that_are_not_yes_or_no_are_unscored(gpt4: DatasetResult) -> None:
    rows = gpt4.table[(gpt4.table["judge"] == "gpt-4") & (gpt4.table["status"] != "ok")]
    assert rows["unscored_reason"].str.startswith("reply does not start with Yes or No").all()
    assert rows["raw_output"].str.contains("partially correct|cannot determine", case=False).sum() >= 6
