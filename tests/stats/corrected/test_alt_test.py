"""The Alt-Test: per-annotator p-values equal scipy's one-sided t-test on the indicators, rejections equal
statsmodels' Benjamini-Yekutieli, and the released SummEval (3 experts) and OpenQA (3 annotators) runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from judgelab.judgments import make_table
from judgelab.stats import CorrectionError, alt_test
from judgelab.stats.corrected.alt_test import benjamini_yekutieli


def _table(labels: dict[str, list[str]]) -> pd.DataFrame:
    rows = []
    for rater, values in labels.items():
        for i, v in enumerate(values):
            rows.append({"run_id": "t", "item_id": f"i{i}", "rubric": "r", "criterion": "overall",
                         "condition": "original", "repeat": 0, "judge": rater, "status": "ok", "verdict": v})
    return make_table(rows)


def test_indicators_p_values_and_by_rejections_match_scipy_and_statsmodels() -> None:
    rng = np.random.default_rng(0)
    n = 60
    truth = rng.choice(["a", "b", "c"], n)
    noisy = {f"h{k}": np.where(rng.random(n) < 0.75, truth, rng.choice(["a", "b", "c"], n)) for k in range(3)}
    judge = np.where(rng.random(n) < 0.85, truth, rng.choice(["a", "b", "c"], n))
    table = _table({"llm": list(judge), **{k: list(v) for k, v in noisy.items()}})
    out = alt_test(table, judge="llm", annotators=list(noisy), epsilon=0.15)
    per = out[out["metric"] == "alt_test_annotator"].set_index("annotator")
    p_ref = []
    for person in noisy:
        others = [o for o in noisy if o != person]
        s_f = np.array([np.mean([judge[i] == noisy[o][i] for o in others]) for i in range(n)])
        s_h = np.array([np.mean([noisy[person][i] == noisy[o][i] for o in others]) for i in range(n)])
        w_f, w_h = (s_f >= s_h).astype(float), (s_h >= s_f).astype(float)
        p = stats.ttest_1samp(w_h - w_f, 0.15, alternative="less").pvalue
        assert per.loc[person, "p_value"] == pytest.approx(p, rel=1e-12)
        assert per.loc[person, "estimate"] == pytest.approx(w_f.mean())
        p_ref.append(p)
    reject_ref = multipletests(p_ref, alpha=0.05, method="fdr_by")[0]
    assert per["rejected"].tolist() == list(reject_ref)
    winning = out[out["metric"] == "winning_rate"].iloc[0]
    assert winning["estimate"] == pytest.approx(reject_ref.mean())


@pytest.mark.parametrize("seed", range(5))
def test_benjamini_yekutieli_equals_statsmodels(seed: int) -> None:
    p = np.random.default_rng(seed).random(12) ** 3
    assert benjamini_yekutieli(p, 0.1).tolist() == multipletests(p, alpha=0.1, method="fdr_by")[0].tolist()


def test_a_judge_that_copies_the_majority_passes_and_noise_fails() -> None:
    rng = np.random.default_rng(1)
    n = 80
    truth = rng.choice(["x", "y"], n)
    humans = {f"h{k}": list(np.where(rng.random(n) < 0.8, truth, np.where(truth == "x", "y", "x")))
              for k in range(3)}
    good = _table({"good": list(truth), **humans})
    out = alt_test(good, judge="good", annotators=list(humans), epsilon=0.1)
    assert out[out["metric"] == "winning_rate"]["estimate"].iloc[0] == 1.0
    assert out[out["metric"] == "winning_rate"]["note"].iloc[0].startswith("PASSED")
    noise = _table({"noise": list(rng.choice(["x", "y"], n)), **humans})
    out = alt_test(noise, judge="noise", annotators=list(humans), epsilon=0.1)
    assert out[out["metric"] == "winning_rate"]["note"].iloc[0].startswith("FAILED")


def test_bad_input() -> None:
    table = _table({"llm": ["a"] * 40, "h1": ["a"] * 40, "h2": ["b"] * 40})
    with pytest.raises(CorrectionError, match="at least 2 annotators"):
        alt_test(table, judge="llm", annotators=["h1"])
    with pytest.raises(CorrectionError, match=r"rater\(s\) \['h9'\]"):
        alt_test(table, judge="llm", annotators=["h1", "h9"])
    with pytest.raises(CorrectionError, match="no annotator has 50 items"):
        alt_test(table, judge="llm", annotators=["h1", "h2"], min_items_per_annotator=50)
    with pytest.raises(CorrectionError, match="scoring must be"):
        alt_test(table, judge="llm", annotators=["h1", "h2"], scoring="f1")


def test_released_summeval_and_openqa(data_dir: Path) -> None:
    from judgelab.datasets import openqa, summeval

    table = summeval("gpt-3.5-turbo-0301", data_dir=data_dir, criteria=("coherence",)).table
    experts = ["human:expert_1", "human:expert_2", "human:expert_3"]
    out = alt_test(table, judge="gpt-3.5-turbo-0301", annotators=experts, epsilon=0.2, scoring="neg_rmse")
    per = out[out["metric"] == "alt_test_annotator"]
    assert list(per["n"]) == [1200, 1200, 1200] and set(per["annotator"]) == set(experts)
    assert out[out["metric"] == "winning_rate"]["note"].iloc[0].startswith("FAILED")  # as in the paper's SummEval
    table = openqa("gpt-4", data_dir=data_dir).table
    annotators = ["human:annotator1", "human:annotator2", "human:annotator3"]
    out = alt_test(table, judge="gpt-4", annotators=annotators, epsilon=0.15)
    per = out[out["metric"] == "alt_test_annotator"].set_index("annotator")
    assert per.loc["human:annotator3", "n"] < 300  # annotator 3 labelled a subset only
    assert "10 item(s) without a judge value" in out[out["metric"] == "winning_rate"]["note"].iloc[0]
    assert out[out["metric"] == "advantage_probability"]["estimate"].iloc[0] > 0.8
