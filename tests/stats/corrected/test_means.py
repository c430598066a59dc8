"""Judge-corrected means: cross-checked against ppi-python, judgy, cje-eval, statsmodels and the published
Rogan-Gladen interval formula; the table interface, strata, clusters, differences and every bad input."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from judgy import estimate_success_rate
from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate
from scipy import special

from judgelab.judgments import make_table
from judgelab.stats import CorrectionError, corrected_difference, corrected_mean
from judgelab.stats.corrected.means import estimate_method
from judgelab.stats.corrected.ppi import Sample


def _continuous(seed: int, n: int = 200, big_n: int = 1500, slope: float = 0.8) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    y = rng.normal(3, 1, n + big_n)
    yhat = slope * y + rng.normal(0.5, 0.7, n + big_n)
    return y[:n], yhat[:n], yhat[n:], y


def _binary(seed: int, n: int = 300, big_n: int = 2000, q1: float = 0.85, q0: float = 0.9,
            theta: float = 0.3) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    z = (rng.random(n + big_n) < theta).astype(float)
    yhat = np.where(z == 1, rng.random(n + big_n) < q1, rng.random(n + big_n) > q0).astype(float)
    return z[:n], yhat[:n], yhat[n:]


def _as_arrays(y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    judge = np.concatenate([yhat, yhat_u])
    gold = np.concatenate([y, np.full(len(yhat_u), np.nan)])
    return judge, gold


def _row(frame: pd.DataFrame, estimator: str) -> pd.Series:
    return frame[frame["estimator"] == estimator].iloc[0]


# ------------------------------------------------------------------------------------------ reference libraries


@pytest.mark.parametrize("seed,slope", [(0, 0.8), (1, 0.3), (2, -0.6), (3, 1.0)])
def test_ppi_and_ppi_plus_plus_equal_ppi_python(seed: int, slope: float) -> None:
    y, yhat, yhat_u, _ = _continuous(seed, slope=slope)
    judge, gold = _as_arrays(y, yhat, yhat_u)
    out = corrected_mean(judge=judge, gold=gold, method=["classical", "ppi", "ppi++"], ci_level=0.9)
    for estimator, lam in (("ppi", 1), ("ppi++", None)):
        row = _row(out, estimator)
        lo, hi = ppi_mean_ci(y, yhat, yhat_u, alpha=0.1, lam=lam)
        assert row["ci_low"] == pytest.approx(float(lo[0]), abs=1e-6)
        assert row["ci_high"] == pytest.approx(float(hi[0]), abs=1e-6)
        assert row["estimate"] == pytest.approx(float(ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam)[0]), abs=1e-9)
    lo, hi = classical_mean_ci(y, alpha=0.1)
    row = _row(out, "classical")
    assert (row["ci_low"], row["ci_high"]) == (pytest.approx(lo, abs=1e-9), pytest.approx(hi, abs=1e-9))


def test_anti_correlated_judge_falls_back_to_classical_and_says_so() -> None:
    y, yhat, yhat_u, _ = _continuous(5, slope=-0.9)
    judge, gold = _as_arrays(y, yhat, yhat_u)
    out = corrected_mean(judge=judge, gold=gold, method=["classical", "ppi++"])
    pp, classical = _row(out, "ppi++"), _row(out, "classical")
    assert pp["lambda"] == 0.0
    assert pp["estimate"] == pytest.approx(classical["estimate"])
    assert pp["ci_high"] - pp["ci_low"] == pytest.approx(classical["ci_high"] - classical["ci_low"])
    assert "anti-correlated" in pp["note"] and "classical" in pp["note"]
    corr = out[out["metric"] == "judge_gold_correlation"].iloc[0]
    assert corr["estimate"] < 0 and corr["note"].startswith("warning")


@pytest.mark.parametrize("seed,q1,q0,theta", [(0, 0.85, 0.9, 0.3), (1, 0.7, 0.8, 0.6), (2, 0.95, 0.6, 0.1),
                                              (3, 0.9, 0.9, 0.97)])
def test_rogan_gladen_point_estimate_equals_judgy(seed: int, q1: float, q0: float, theta: float) -> None:
    y, yhat, yhat_u = _binary(seed, q1=q1, q0=q0, theta=theta)
    judge, gold = _as_arrays(y, yhat, yhat_u)
    out = corrected_mean(judge=judge, gold=gold, method="rogan_gladen")
    np.random.seed(seed)
    theta_judgy, _, _ = estimate_success_rate(y.astype(int), yhat.astype(int), yhat_u.astype(int),
                                              bootstrap_iterations=200)
    assert out.iloc[-1]["estimate"] == pytest.approx(theta_judgy, abs=1e-12)


def _lee_interval(p: float, q0: float, q1: float, n: int, m0: int, m1: int, level: float) -> tuple[float, float]:
    """Lee et al. (2025) adjusted interval as printed in the paper (Appendix C), written out independently."""
    z = float(special.ndtri(0.5 + level / 2))
    p, q0, q1 = (n * p + z ** 2 / 2) / (n + z ** 2), (m0 * q0 + 1) / (m0 + 2), (m1 * q1 + 1) / (m1 + 2)
    n, m0, m1 = n + z ** 2, m0 + 2, m1 + 2
    th = (p + q0 - 1) / (q0 + q1 - 1)
    dth = 2 * z ** 2 * (-(1 - th) * q0 * (1 - q0) / m0 + th * q1 * (1 - q1) / m1)
    se = np.sqrt(p * (1 - p) / n + (1 - th) ** 2 * q0 * (1 - q0) / m0 + th ** 2 * q1 * (1 - q1) / m1) / (q0 + q1 - 1)
    return max(0.0, th + dth - z * se), min(1.0, th + dth + z * se)


def test_rogan_gladen_interval_is_lee_et_al_and_carries_the_error_rates() -> None:
    y, yhat, yhat_u = _binary(7)
    judge, gold = _as_arrays(y, yhat, yhat_u)
    row = corrected_mean(judge=judge, gold=gold, method="rogan_gladen", ci_level=0.9).iloc[-1]
    q1, q0 = yhat[y == 1].mean(), 1 - yhat[y == 0].mean()
    lo, hi = _lee_interval(yhat_u.mean(), q0, q1, len(yhat_u), int((y == 0).sum()), int((y == 1).sum()), 0.9)
    assert (row["ci_low"], row["ci_high"]) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12))
    # the error rates' uncertainty is in it: wider than the interval that treats them as known
    z = float(special.ndtri(0.95))
    known = 2 * z * np.sqrt(yhat_u.mean() * (1 - yhat_u.mean()) / len(yhat_u)) / (q0 + q1 - 1)
    assert row["ci_high"] - row["ci_low"] > 1.5 * known


def test_calibrated_mean_agrees_with_cje_within_monte_carlo_error() -> None:
    from cje import calibrated_mean_ci

    z_scores, ratios = [], []
    for seed in range(8):
        rng = np.random.default_rng(seed)
        big, n = 1500, 250
        s = rng.uniform(0, 1, big)
        y = np.clip(0.2 + 0.6 * s ** 2 + rng.normal(0, 0.12, big), 0, 1)
        idx = rng.choice(big, n, replace=False)
        gold = np.full(big, np.nan)
        gold[idx] = y[idx]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = calibrated_mean_ci(s, gold, seed=seed)
        row = _row(corrected_mean(judge=s, gold=gold, method="calibrated", seed=seed), "calibrated")
        z_scores.append((row["estimate"] - ref.estimate) / row["std_error"])
        ratios.append((row["ci_high"] - row["ci_low"]) / (ref.ci[1] - ref.ci[0]))
    assert np.max(np.abs(z_scores)) < 1.0  # the two differ by less than one standard error on every data set
    assert np.mean(np.abs(z_scores)) < 0.5
    assert 0.8 < np.min(ratios) and np.max(ratios) < 1.25


def test_classical_cluster_robust_variance_equals_statsmodels() -> None:
    import statsmodels.api as sm

    rng = np.random.default_rng(3)
    clusters = np.repeat(np.arange(40), 6)
    y = rng.normal(0, 1, 40)[clusters] + rng.normal(0, 1, 240)
    sample = Sample(y, y, np.zeros(0), cluster_l=clusters, cluster_u=np.zeros(0, dtype=int))
    est = estimate_method(sample, "classical")
    fit = sm.OLS(y, np.ones((240, 1))).fit(cov_type="cluster", cov_kwds={"groups": clusters})
    assert est.estimate == pytest.approx(float(fit.params[0]))
    assert est.std_error == pytest.approx(float(fit.bse[0]), rel=1e-10)
    assert est.df == 39


def test_stratified_classical_is_the_stratified_mean() -> None:
    rng = np.random.default_rng(4)
    strata_l = np.repeat([0, 1], [30, 10])
    strata_u = np.repeat([0, 1], [70, 390])  # stratum 1 is 80% of the items but 25% of the labels
    y = np.where(strata_l == 0, rng.normal(1, 1, 40), rng.normal(5, 2, 40))
    sample = Sample(y, y, np.zeros(460), strata_l, strata_u)
    est = estimate_method(sample, "classical")
    w = np.array([100, 400]) / 500
    ys = [y[strata_l == h] for h in (0, 1)]
    assert est.estimate == pytest.approx(w[0] * ys[0].mean() + w[1] * ys[1].mean())
    assert est.variance == pytest.approx(sum(w[h] ** 2 * ys[h].var() / len(ys[h]) for h in (0, 1)))
    one = Sample(y, y, np.zeros(460), np.zeros(40, dtype=int), np.zeros(460, dtype=int))
    plain = Sample(y, y, np.zeros(460))
    assert estimate_method(one, "ppi++").estimate == pytest.approx(estimate_method(plain, "ppi++").estimate)


# ------------------------------------------------------------------------------------------ the table interface


def _table(seed: int = 0, n_items: int = 400, n_gold: int = 120, unscored: int = 0, binary: bool = False,
           docs: int | None = None) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    truth = rng.normal(3, 1, n_items) if not binary else (rng.random(n_items) < 0.4).astype(float)
    judged = 0.9 * truth + rng.normal(0.3, 0.5, n_items) if not binary else np.where(
        truth == 1, rng.random(n_items) < 0.85, rng.random(n_items) > 0.9).astype(float)
    rows = []
    for i in range(n_items):
        base = {"run_id": "t", "item_id": f"i{i}", "rubric": "r", "criterion": "overall", "condition": "original",
                "repeat": 0, "document_id": f"d{i % docs}" if docs else f"d{i}", "system": "S1"}
        if i < unscored:
            rows.append({**base, "judge": "judge", "status": "parse_error", "unscored_reason": "unreadable"})
        elif binary:
            rows.append({**base, "judge": "judge", "status": "ok", "verdict": "pass" if judged[i] else "fail"})
        else:
            rows.append({**base, "judge": "judge", "status": "ok", "score": float(judged[i])})
        if i < n_gold:
            value = {"verdict": "pass" if truth[i] else "fail"} if binary else {"score": float(truth[i])}
            rows.append({**base, "judge": "human", "status": "ok", **value})
    return make_table(rows)


def test_table_interface_equals_the_array_interface() -> None:
    table = _table()
    from_table = corrected_mean(table, judge="judge", gold="human", method="all" if False else
                                ["classical", "ppi", "ppi++", "calibrated"])
    judge = table[table["judge"] == "judge"]["score"].astype(float).to_numpy()
    gold = np.full(len(judge), np.nan)
    gold[:120] = table[table["judge"] == "human"]["score"].astype(float).to_numpy()
    from_arrays = corrected_mean(judge=judge, gold=gold, method=["classical", "ppi", "ppi++", "calibrated"])
    cols = ["estimate", "ci_low", "ci_high", "n_labelled", "n_unlabelled"]
    np.testing.assert_allclose(from_table[cols].to_numpy(float), from_arrays[cols].to_numpy(float), rtol=1e-12)
    row = _row(from_table, "ppi++")
    assert row["n_labelled"] == 120 and row["n_unlabelled"] == 280 and row["n"] == 400
    assert row["effective_n"] == pytest.approx(120 * row["ess_gain"]) and row["ess_gain"] > 1.5
    assert "PPI++" in row["method"] and "normal 95%" in row["method"]


def test_labels_need_positive_and_binary_methods_read_them() -> None:
    table = _table(binary=True)
    with pytest.raises(CorrectionError, match="positive="):
        corrected_mean(table, judge="judge", gold="human")
    out = corrected_mean(table, judge="judge", gold="human", positive="pass", method="all")
    assert set(out["estimator"].dropna()) == {"classical", "ppi", "ppi++", "rogan_gladen", "calibrated"}
    assert (out["ci_low"] <= out["estimate"]).all() and (out["estimate"] <= out["ci_high"]).all()
    assert "1 for ['pass']" in _row(out, "rogan_gladen")["method"]


def test_by_groups_and_clusters() -> None:
    parts = []
    for k, system in enumerate(("S1", "S2")):
        t = _table(seed=k, docs=50)
        t["system"] = system
        t["item_id"] = t["item_id"] + system
        parts.append(t)
    table = make_table(pd.concat(parts, ignore_index=True))
    out = corrected_mean(table, judge="judge", gold="human", by="system", cluster="document_id",
                         method=["classical", "ppi++"])
    assert list(out.loc[out["metric"] == "mean", "system"]) == ["S1", "S1", "S2", "S2"]
    row = _row(out[out["system"] == "S1"], "ppi++")
    assert row["n_clusters"] == 50 and "cluster-robust by document_id (50 clusters)" in row["method"]
    assert "t (49 df)" in row["method"]


def test_difference_of_two_systems_is_paired() -> None:
    rng = np.random.default_rng(11)
    n = 500
    prompt_effect = rng.normal(0, 1, n)
    rows = []
    for system, shift in (("A", 0.3), ("B", 0.0)):
        truth = 3 + shift + prompt_effect + rng.normal(0, 0.5, n)
        judged = truth + rng.normal(0.2, 0.4, n)
        for i in range(n):
            base = {"run_id": "t", "item_id": f"p{i}", "rubric": "r", "criterion": "overall", "condition": "original",
                    "repeat": 0, "system": system}
            rows.append({**base, "judge": "judge", "status": "ok", "score": judged[i]})
            if i < 150:
                rows.append({**base, "judge": "human", "status": "ok", "score": truth[i]})
    table = make_table(rows)
    out = corrected_difference(table, judge="judge", gold="human", between="system", method=["classical", "ppi"])
    diff = out[out["metric"] == "mean_difference"].set_index("estimator")
    # with every pair labelled on both sides, the paired difference is the estimate on per-pair differences
    wide = table.pivot_table(index=["item_id", "judge"], columns="system", values="score").reset_index()
    d_judge = wide[wide["judge"] == "judge"].set_index("item_id")
    d_gold = wide[wide["judge"] == "human"].set_index("item_id").reindex(d_judge.index)
    ref = corrected_mean(judge=(d_judge["A"] - d_judge["B"]).to_numpy(float),
                         gold=(d_gold["A"] - d_gold["B"]).to_numpy(float), method=["classical", "ppi"])
    for m in ("classical", "ppi"):
        r = _row(ref, m)
        assert diff.loc[m, "estimate"] == pytest.approx(r["estimate"], abs=1e-12)
        assert diff.loc[m, "ci_high"] - diff.loc[m, "ci_low"] == pytest.approx(r["ci_high"] - r["ci_low"], rel=1e-9)
    assert diff.loc["ppi", "p_value"] < 0.05
    means = out[out["metric"] == "mean"]
    assert set(means["system"]) == {"A", "B"}


# ------------------------------------------------------------------------------------------------ bad input


def test_no_gold_rows_is_one_sentence() -> None:
    table = _table()
    with pytest.raises(CorrectionError, match="no rows of gold 'expert'"):
        corrected_mean(table, judge="judge", gold="expert")
    with pytest.raises(CorrectionError, match="judge 'nobody' has no rows"):
        corrected_mean(table, judge="nobody", gold="human")


def test_gold_on_every_item_says_use_classical() -> None:
    table = _table(n_items=50, n_gold=50)
    with pytest.raises(CorrectionError, match="nothing unlabelled: use method='classical'"):
        corrected_mean(table, judge="judge", gold="human", method="ppi++")
    assert _row(corrected_mean(table, judge="judge", gold="human", method="classical"), "classical")["n"] == 50


def test_rogan_gladen_refuses_non_binary_and_chance_judges() -> None:
    with pytest.raises(CorrectionError, match="rogan_gladen needs a binary"):
        corrected_mean(_table(), judge="judge", gold="human", method="rogan_gladen")
    y, yhat, yhat_u = _binary(3, q1=0.4, q0=0.45)
    judge, gold = _as_arrays(y, yhat, yhat_u)
    with pytest.raises(CorrectionError, match=r"<= 1: it is no better than chance.*no number is returned"):
        corrected_mean(judge=judge, gold=gold, method="rogan_gladen")
    y = np.zeros(30)
    with pytest.raises(CorrectionError, match="no gold positives"):
        corrected_mean(judge=np.r_[np.zeros(30), np.ones(10)], gold=np.r_[y, np.full(10, np.nan)],
                       method="rogan_gladen")


def test_clusters_one_cluster_is_an_error_and_singletons_are_noted() -> None:
    table = _table()
    table["one"] = "same"
    with pytest.raises(CorrectionError, match="at least 2 clusters"):
        corrected_mean(table, judge="judge", gold="human", cluster="one")
    row = _row(corrected_mean(table, judge="judge", gold="human", cluster="item_id"), "ppi++")
    assert "every cluster holds one item" in row["note"]


def test_unscored_judge_rows_follow_the_named_policy() -> None:
    table = _table(unscored=10)
    row = _row(corrected_mean(table, judge="judge", gold="human"), "ppi++")
    assert row["n_unscored_excluded"] == 10 and row["n_labelled"] == 110 and "unscored='exclude'" in row["note"]
    with pytest.raises(CorrectionError, match="10 unscored row"):
        corrected_mean(table, judge="judge", gold="human", unscored="error")
    row = _row(corrected_mean(table, judge="judge", gold="human", unscored=1.0), "ppi++")
    assert row["n_unscored_imputed"] == 10 and row["n_labelled"] == 120 and "imputed as 1.0" in row["note"]
    with pytest.raises(CorrectionError, match="unscored must be"):
        corrected_mean(table, judge="judge", gold="human", unscored="drop")


def test_unscored_gold_rows_leave_items_unlabelled_and_are_counted() -> None:
    table = _table()
    gold = table["judge"] == "human"
    first = table.index[gold][:5]
    table.loc[first, "score"] = np.nan
    table.loc[first, "status"] = "parse_error"
    table.loc[first, "unscored_reason"] = "unreadable"
    row = _row(corrected_mean(table, judge="judge", gold="human"), "ppi++")
    assert row["n_gold_unscored"] == 5 and row["n_labelled"] == 115 and row["n_unlabelled"] == 285


def test_duplicate_judge_rows_and_thin_strata_are_errors() -> None:
    table = _table()
    extra = table[table["judge"] == "judge"].iloc[:3].assign(condition="swapped")
    with pytest.raises(CorrectionError, match=r"rows sharing an item .* differing in \['condition'\]"):
        corrected_mean(make_table(pd.concat([table, extra])), judge="judge", gold="human")
    strata = {f"i{i}": "rare" if i in (0, 300, 301) else "common" for i in range(400)}
    with pytest.raises(CorrectionError, match="fewer than 2 labelled items"):
        corrected_mean(table, judge="judge", gold="human", strata=strata)
    with pytest.raises(CorrectionError, match="unknown method"):
        corrected_mean(table, judge="judge", gold="human", method="bayes")
    with pytest.raises(CorrectionError, match="at least 2 gold labels"):
        corrected_mean(judge=np.arange(5.0), gold=np.r_[1.0, np.full(4, np.nan)])


def test_real_data_openqa_hidden_labels(data_dir: Path) -> None:
    from judgelab.datasets import openqa

    result = openqa("gpt-4", data_dir=data_dir)
    table = result.table.merge(result.items[["item_id", "question_id"]], on="item_id")
    keep = set(np.random.default_rng(0).choice(result.items["item_id"], 300, replace=False))
    hidden = table[(table["judge"] != "human") | table["item_id"].isin(keep)]
    out = corrected_mean(hidden, judge="gpt-4", gold="human", positive="yes", method="all", cluster="question_id")
    classical, pp = _row(out, "classical"), _row(out, "ppi++")
    assert pp["ci_high"] - pp["ci_low"] < classical["ci_high"] - classical["ci_low"]
    assert pp["n_unscored_excluded"] == 10  # gpt-4's 10 unreadable replies, counted
    corr = out[out["metric"] == "judge_gold_correlation"].iloc[0]
    assert 0.6 < corr["estimate"] < 0.8
