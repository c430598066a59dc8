"""Positive bias, error metrics, flip rates and McNemar against scipy / statsmodels / scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import mean_absolute_error, root_mean_squared_error
from statsmodels.stats.contingency_tables import mcnemar

from judgelab.judgments import make_table
from judgelab.stats import (
    error_metrics,
    flip_rate,
    mcnemar_test,
    pair_conditions,
    positive_bias,
    score_distributions,
)

FAST = {"n_resamples": 300}


def _generous_judge(seed: int, n: int = 150) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 6, n).astype(float)
    return np.clip(human + rng.choice([-1, 0, 1, 1], n), 1, 5), human


def test_positive_bias_rows_match_scipy_tests() -> None:
    judge, human = _generous_judge(0)
    diff = judge - human
    out = positive_bias(judge, human, **FAST).set_index("metric")
    assert out.loc["mean_difference", "estimate"] == pytest.approx(diff.mean())
    assert out.loc["mean_difference", "p_value"] == pytest.approx(stats.ttest_1samp(diff, 0).pvalue)
    assert out.loc["wilcoxon_signed_rank", "p_value"] == pytest.approx(stats.wilcoxon(diff).pvalue)
    over, under = int((diff > 0).sum()), int((diff < 0).sum())
    sign = stats.binomtest(over, over + under)
    assert out.loc["sign_test", "p_value"] == pytest.approx(sign.pvalue) and out.loc["sign_test", "n"] == over + under
    assert out.loc["sign_test", "ci_low"] == pytest.approx(sign.proportion_ci(method="exact").low)
    shares = out.loc[["share_over_rated", "share_under_rated", "share_equal"], "estimate"]
    assert shares.sum() == pytest.approx(1.0) and shares.iloc[0] == pytest.approx(over / len(diff))


def test_positive_bias_per_criterion_and_all_zero_differences() -> None:
    judge, human = _generous_judge(1, 100)
    criterion = np.repeat(["fluency", "coherence"], 50)
    judge[criterion == "coherence"] = human[criterion == "coherence"]  # no bias at all there
    out = positive_bias(judge, human, criterion=criterion, **FAST)
    assert list(out["criterion"].unique()) == ["fluency", "coherence"]
    coherence = out[out["criterion"] == "coherence"].set_index("metric")
    assert np.isnan(coherence.loc["wilcoxon_signed_rank", "p_value"])
    assert "all differences are zero" in coherence.loc["sign_test", "note"]
    assert coherence.loc["share_equal", "estimate"] == 1.0


def test_score_distributions_count_shared_items_for_both_raters() -> None:
    judge = np.array([5, 5, 4, np.nan, 3])
    human = np.array([3, 4, 4, 2, 1])
    dist = score_distributions(judge, human)
    assert set(dist["rater"]) == {"judge", "human"} and (dist["n"] == 4).all()
    judge_counts = dist[dist["rater"] == "judge"].set_index("score")["count"]
    assert judge_counts.to_dict() == {1.0: 0, 3.0: 1, 4.0: 1, 5.0: 2}
    assert dist.groupby("rater")["share"].sum().tolist() == [1.0, 1.0]


def test_error_metrics_match_sklearn() -> None:
    judge, human = _generous_judge(2)
    out = error_metrics(judge, human, **FAST).set_index("metric")
    assert out.loc["mae", "estimate"] == pytest.approx(mean_absolute_error(human, judge))
    assert out.loc["rmse", "estimate"] == pytest.approx(root_mean_squared_error(human, judge))
    assert out.loc["mean_signed_difference", "estimate"] == pytest.approx((judge - human).mean())
    assert np.isnan(out.loc["mae", "p_value"]) and out["method"].str.contains("percentile bootstrap 95%").all()


def test_flip_rate_exact_interval_and_null_test() -> None:
    before = ["A"] * 40 + ["B"] * 40
    after = ["A"] * 30 + ["B"] * 10 + ["B"] * 35 + ["TIE"] * 5
    out = flip_rate(before, after, null_rate=0.05, alternative="greater").iloc[0]
    ref = stats.binomtest(15, 80, 0.05, alternative="greater")
    ci = stats.binomtest(15, 80).proportion_ci(method="exact")
    assert out["estimate"] == pytest.approx(15 / 80) and out["n_flips"] == 15
    assert out["p_value"] == pytest.approx(ref.pvalue)
    assert (out["ci_low"], out["ci_high"]) == pytest.approx((ci.low, ci.high))
    assert np.isnan(flip_rate(before, after).iloc[0]["p_value"])
    assert flip_rate(["A", "B"], ["A", "B"]).iloc[0]["ci_low"] == 0.0


def test_mcnemar_matches_statsmodels_exact_and_chi_square() -> None:
    rng = np.random.default_rng(3)
    before = rng.random(200) < 0.8
    after = np.where(rng.random(200) < 0.2, ~before, before)
    table = [[np.sum(before & after), np.sum(before & ~after)], [np.sum(~before & after), np.sum(~before & ~after)]]
    for exact in (True, False):
        out = mcnemar_test(before, after, exact=exact).iloc[0]
        assert out["p_value"] == pytest.approx(mcnemar(table, exact=exact, correction=True).pvalue)
    assert out["estimate"] == pytest.approx(after.mean() - before.mean())
    with pytest.raises(ValueError, match="0/1"):
        mcnemar_test([0, 2], [1, 1])


def test_flip_rate_on_a_judgments_table_via_pair_conditions() -> None:
    rows = []
    verdicts = [("A", "A"), ("A", "B"), ("B", "B"), ("TIE", "A"), ("B", None)]
    for i, (original, swapped) in enumerate(verdicts):
        base = {"run_id": "r", "item_id": f"i{i}", "rubric": "pair", "criterion": "overall", "judge": "gpt"}
        rows.append({**base, "condition": "original", "status": "ok", "winner": original})
        rows.append({**base, "condition": "swapped", "status": "ok" if swapped else "parse_error", "winner": swapped,
                     "unscored_reason": None if swapped else "no verdict"})
    wide = pair_conditions(make_table(rows), ["original", "swapped"], judge="gpt")
    out = flip_rate("original", "swapped", data=wide).iloc[0]
    assert out["n"] == 4 and out["n_flips"] == 2 and out["n_unscored_excluded"] == 1
