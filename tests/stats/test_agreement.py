"""Agreement statistics cross-checked against scikit-learn, statsmodels, krippendorff and pingouin."""

from __future__ import annotations

import warnings

import krippendorff
import numpy as np
import pandas as pd
import pingouin
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from judgelab.judgments import make_table
from judgelab.stats import (
    DuplicateRatingsError,
    cohen_kappa,
    fleiss_kappa,
    icc,
    krippendorff_alpha,
    percent_agreement,
)

FAST = {"n_resamples": 200}


def _ordinal_pair(seed: int, n: int = 120) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.integers(1, 6, n)
    return x, np.clip(x + rng.integers(-1, 2, n), 1, 5)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@pytest.mark.parametrize("seed", [0, 1])
def test_cohen_kappa_matches_sklearn_and_statsmodels(weights: str | None, seed: int) -> None:
    x, y = _ordinal_pair(seed)
    out = cohen_kappa(x, y, weights=weights, **FAST).iloc[0]  # type: ignore[arg-type]
    assert out["estimate"] == pytest.approx(cohen_kappa_score(x, y, weights=weights), abs=1e-12)
    table = np.zeros((5, 5))
    np.add.at(table, (x - 1, y - 1), 1)
    ref = cohens_kappa(table, wt=weights) if weights else cohens_kappa(table)
    assert out["p_value"] == pytest.approx(ref.pvalue_two_sided, rel=1e-6)
    assert out["ci_low"] < out["estimate"] < out["ci_high"]


def test_cohen_kappa_with_string_labels_and_explicit_order() -> None:
    x = np.array(["low", "mid", "high", "mid", "low", "high", "mid", "low"])
    y = np.array(["low", "high", "high", "mid", "mid", "high", "mid", "low"])
    order = ["low", "mid", "high"]
    out = cohen_kappa(x, y, weights="linear", labels=order, **FAST).iloc[0]
    assert out["estimate"] == pytest.approx(cohen_kappa_score(x, y, weights="linear", labels=order))
    with pytest.raises(ValueError, match="not in the given labels"):
        cohen_kappa(x, y, labels=["low", "mid"])


def test_kappa_edge_cases_constant_and_n2() -> None:
    constant = cohen_kappa([1, 1, 1], [1, 1, 1], **FAST).iloc[0]
    assert np.isnan(constant["estimate"]) and "expected disagreement is zero" in constant["note"]
    n2 = cohen_kappa([1, 2], [1, 2], **FAST).iloc[0]
    assert n2["estimate"] == pytest.approx(cohen_kappa_score([1, 2], [1, 2])) and n2["n"] == 2
    one_sided = cohen_kappa([1, 1, 1, 1], [1, 2, 1, 2], **FAST).iloc[0]  # one rater constant: kappa 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert one_sided["estimate"] == pytest.approx(cohen_kappa_score([1, 1, 1, 1], [1, 2, 1, 2]))


def test_percent_agreement_and_missing_pairs() -> None:
    x = [1, 2, None, 3, 4, 4]
    y = [1, 3, 2, None, 4, 1]
    out = percent_agreement(x, y, **FAST).iloc[0]
    assert out["estimate"] == pytest.approx(2 / 4) and out["n"] == 4 and out["n_missing_dropped"] == 2


def test_agreement_on_a_judgments_table_uses_verdict_column_and_ok_rows() -> None:
    rows = []
    verdicts = [("yes", "yes"), ("no", "no"), ("yes", "no"), ("no", None), ("yes", "yes")]
    for i, (human, judge) in enumerate(verdicts):
        base = {"run_id": "r", "item_id": f"i{i}", "rubric": "qa", "criterion": "acceptable", "condition": "original"}
        rows.append({**base, "judge": "human", "status": "ok", "verdict": human})
        rows.append({**base, "judge": "gpt", "status": "ok" if judge else "parse_error", "verdict": judge,
                     "unscored_reason": None if judge else "no yes/no"})
    table = make_table(rows)
    out = percent_agreement("gpt", "human", data=table, value="verdict", **FAST).iloc[0]
    assert out["estimate"] == pytest.approx(3 / 4) and out["n_unscored_excluded"] == 1
    kappa = cohen_kappa("gpt", "human", data=table, value="verdict", **FAST).iloc[0]
    assert kappa["estimate"] == pytest.approx(cohen_kappa_score(["yes", "no", "no", "yes"], ["yes", "no", "yes", "yes"]))


@pytest.mark.parametrize("seed", [0, 1])
def test_fleiss_kappa_matches_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, 40)
    ratings = np.array([np.where(rng.random(40) < 0.7, truth, rng.integers(0, 3, 40)) for _ in range(4)]).T
    out = fleiss_kappa(ratings, **FAST).iloc[0]
    assert out["estimate"] == pytest.approx(sm_fleiss_kappa(aggregate_raters(ratings)[0], method="fleiss"))
    assert out["n_raters"] == 4 and out["n"] == 40 and 0 <= out["p_value"] < 0.05


def test_fleiss_kappa_long_input_drops_incomplete_items() -> None:
    rows = [(i, r, (i + r) % 2) for i in range(10) for r in range(3)]
    frame = pd.DataFrame(rows, columns=["item_id", "judge", "score"])
    frame = frame[~((frame["item_id"] == 0) & (frame["judge"] == 2))]  # item 0 has only 2 ratings
    out = fleiss_kappa(data=frame, **FAST).iloc[0]
    assert out["n"] == 9 and out["n_items_incomplete_dropped"] == 1
    constant = fleiss_kappa(np.ones((5, 3)), **FAST).iloc[0]
    assert np.isnan(constant["estimate"]) and "same category" in constant["note"]


def test_long_ratings_with_two_ratings_of_one_item_by_one_rater_are_an_error() -> None:
    frame = pd.DataFrame({"item_id": [0, 0, 1, 1, 1], "judge": ["a", "b", "a", "b", "b"], "score": [1, 1, 2, 2, 3]})
    for statistic in (fleiss_kappa, krippendorff_alpha, icc):
        with pytest.raises(DuplicateRatingsError, match=r"1 \(item_id, judge\) key\(s\).*\(1, b\) x 2.*aggregate="):
            statistic(data=frame)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_krippendorff_alpha_matches_the_krippendorff_package(level: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    base = rng.integers(1, 6, 30).astype(float)
    reliability = np.array([np.clip(base + rng.integers(-1, 2, 30), 1, 5) for _ in range(3)])
    reliability[rng.random(reliability.shape) < 0.2] = np.nan  # missing ratings
    out = krippendorff_alpha(reliability, level=level, layout="raters x items", **FAST).iloc[0]  # type: ignore[arg-type]
    expected = krippendorff.alpha(reliability_data=reliability, level_of_measurement=level)
    assert out["estimate"] == pytest.approx(expected, abs=1e-10)
    assert out["ci_low"] <= out["estimate"] <= out["ci_high"]


def test_krippendorff_alpha_long_input_ties_and_unpairable_units() -> None:
    frame = pd.DataFrame({"item_id": [1, 1, 2, 2, 3, 4, 4, 4], "judge": list("abababca"),
                          "score": [1, 1, 2, 3, 5, 2, 2, 1], "status": ["ok"] * 7 + ["parse_error"]})
    frame.loc[frame["status"] != "ok", "score"] = np.nan
    out = krippendorff_alpha(data=frame, level="interval", **FAST).iloc[0]
    reliability = frame[frame["status"] == "ok"].pivot(index="judge", columns="item_id", values="score").to_numpy(float)
    assert out["estimate"] == pytest.approx(krippendorff.alpha(reliability_data=reliability,
                                                               level_of_measurement="interval"))
    assert out["n_units_unpairable"] == 1 and out["n_unscored_excluded"] == 1
    constant = krippendorff_alpha(np.ones((4, 2)), **FAST).iloc[0]
    assert np.isnan(constant["estimate"]) and "no variation" in constant["note"]


def test_icc_matches_pingouin() -> None:
    rng = np.random.default_rng(3)
    target = rng.normal(size=25)
    frame = pd.DataFrame([(i, r, target[i] + bias + rng.normal(0, 0.6)) for i in range(25)
                          for r, bias in enumerate([0.0, 0.4, -0.3])], columns=["item_id", "judge", "score"])
    ours = icc(data=frame).set_index("metric")
    ref = pingouin.intraclass_corr(frame, targets="item_id", raters="judge", ratings="score").set_index("Type")
    names = {"ICC1": "ICC(1,1)", "ICC2": "ICC(A,1)", "ICC3": "ICC(C,1)",
             "ICC1k": "ICC(1,k)", "ICC2k": "ICC(A,k)", "ICC3k": "ICC(C,k)"}
    if "ICC1" in ref.index:  # older pingouin names
        names = {k: k for k in names}
    for ours_name, ref_name in names.items():
        assert ours.loc[ours_name, "estimate"] == pytest.approx(ref.loc[ref_name, "ICC"], abs=1e-10)
        assert ours.loc[ours_name, "p_value"] == pytest.approx(ref.loc[ref_name, "pval"], rel=1e-6)
        low, high = ref.loc[ref_name, "CI95"] if "CI95" in ref.columns else ref.loc[ref_name, "CI95%"]
        # pingouin rounds its interval to 2 decimals
        assert ours.loc[ours_name, "ci_low"] == pytest.approx(low, abs=0.006)
        assert ours.loc[ours_name, "ci_high"] == pytest.approx(high, abs=0.006)


def test_icc_listwise_drop_and_degenerate_input() -> None:
    ratings = np.array([[1.0, 2.0], [2.0, 2.5], [3.0, np.nan], [4.0, 4.5]])
    out = icc(ratings)
    assert (out["n"] == 3).all() and (out["n_items_incomplete_dropped"] == 1).all()
    constant = icc(np.ones((4, 3)))
    assert constant["estimate"].isna().all() and constant["note"].str.contains("undefined").all()
