"""Length control against a direct statsmodels fit; model-agreement labels; power against pingouin and simulation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pingouin
import pytest
import statsmodels.api as sm
from scipy import special, stats

from judgelab.stats import (
    AGREEMENT_THRESHOLDS,
    THREE_LEVEL_THRESHOLDS,
    agreement_label,
    agreement_matrix,
    agreement_matrix_wide,
    length_controlled_win_rate,
    length_score_correlation,
    n_for_correlation,
    n_for_correlation_difference,
    n_for_flip_rate,
    n_for_kappa,
)


def _pairwise_wins(seed: int, n: int = 400, slope: float = 1.0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    length_a, length_b = rng.normal(300, 80, n), rng.normal(300, 80, n)
    p_win = special.expit(0.2 + slope * (length_a - length_b) / 110)
    win = (rng.random(n) < p_win).astype(float)
    return pd.DataFrame({"win": win, "len_a": length_a, "len_b": length_b, "item": np.repeat(np.arange(n // 4), 4)})


def test_length_controlled_win_rate_matches_a_direct_statsmodels_fit() -> None:
    frame = _pairwise_wins(0)
    out = length_controlled_win_rate("win", "len_a", "len_b", data=frame, cluster="item").set_index("metric")
    d = frame["len_a"] - frame["len_b"]
    exog = np.column_stack([np.ones(len(d)), d / d.std(ddof=1)])
    fit = sm.GLM(frame["win"].to_numpy(), exog, family=sm.families.Binomial()).fit(
        cov_type="cluster", cov_kwds={"groups": frame["item"].to_numpy()})
    assert out.loc["length_coefficient", "estimate"] == pytest.approx(fit.params[1])
    assert out.loc["length_coefficient", "p_value"] == pytest.approx(fit.pvalues[1])
    assert out.loc["length_controlled_win_rate", "estimate"] == pytest.approx(special.expit(fit.params[0]))
    low = special.expit(fit.params[0] - special.ndtri(0.975) * fit.bse[0])
    assert out.loc["length_controlled_win_rate", "ci_low"] == pytest.approx(low)
    assert out.loc["raw_win_rate", "estimate"] == pytest.approx(frame["win"].mean())
    assert "cluster-robust SE by item (100 clusters)" in out.loc["length_controlled_win_rate", "method"]


def test_ties_half_or_excluded_and_labels_accepted() -> None:
    frame = _pairwise_wins(1)
    labels = np.where(frame["win"] == 1, "A", "B").astype(object)
    labels[:10] = "TIE"
    half = length_controlled_win_rate(labels, frame["len_a"], frame["len_b"]).set_index("metric")
    excluded = length_controlled_win_rate(labels, frame["len_a"], frame["len_b"], ties="exclude").set_index("metric")
    assert half.loc["raw_win_rate", "n"] == 400 and excluded.loc["raw_win_rate", "n"] == 390
    assert half.loc["raw_win_rate", "n_ties"] == 10
    assert half.loc["raw_win_rate", "estimate"] == pytest.approx((np.sum(labels == "A") + 5) / 400)
    with pytest.raises(ValueError, match="not one of A, B, TIE"):
        length_controlled_win_rate(["A", "maybe"], [1, 2], [2, 1])


def test_separation_constant_outcome_and_no_length_variation_are_explained_not_nan_silently() -> None:
    frame = _pairwise_wins(2)
    separated = (frame["len_a"] > frame["len_b"]).astype(float)
    out = length_controlled_win_rate(separated, frame["len_a"], frame["len_b"]).set_index("metric")
    assert np.isnan(out.loc["length_controlled_win_rate", "estimate"])
    assert "perfectly separated" in out.loc["length_controlled_win_rate", "note"]
    assert out.loc["raw_win_rate", "estimate"] == pytest.approx(separated.mean())
    all_wins = length_controlled_win_rate(np.ones(50), frame["len_a"][:50], frame["len_b"][:50]).set_index("metric")
    assert all_wins["note"].str.contains("same outcome").all() and all_wins.loc["raw_win_rate", "estimate"] == 1.0
    equal = length_controlled_win_rate(frame["win"], frame["len_a"], frame["len_a"]).set_index("metric")
    assert "no variation" in equal.loc["length_coefficient", "note"]


def test_length_score_correlation_is_spearman() -> None:
    rng = np.random.default_rng(3)
    lengths = rng.integers(50, 500, 100)
    scores = np.clip(np.round(lengths / 100 + rng.normal(0, 1, 100)), 1, 5)
    out = length_score_correlation(scores, lengths, n_resamples=200).iloc[0]
    assert out["estimate"] == pytest.approx(stats.spearmanr(scores, lengths).statistic)


def test_agreement_labels_reproduce_the_seed_papers_labelled_examples() -> None:
    paper = {0.127: "Negligible", 0.218: "Negligible", -0.132: "Negligible", 0.422: "Low", 0.490: "Low",
             0.583: "Medium", 0.655: "Medium", 0.671: "Medium", 0.708: "High", 0.725: "High", 0.810: "High"}
    for rho, label in paper.items():
        assert agreement_label(rho) == label
    assert agreement_label(0.422, THREE_LEVEL_THRESHOLDS) == "Medium"  # why the three-level bands are not default
    assert agreement_label(np.nan) == ""
    assert AGREEMENT_THRESHOLDS[0] == (0.7, "High")


def test_agreement_matrix_pairs_judges_on_shared_items() -> None:
    rng = np.random.default_rng(4)
    truth = rng.integers(1, 6, 40)
    rows = [(i, judge, float(np.clip(truth[i] + rng.integers(-k, k + 1), 1, 5)))
            for judge, k in (("a", 0), ("b", 1), ("c", 3)) for i in range(40)]
    frame = pd.DataFrame(rows, columns=["item_id", "model", "score"])
    frame = frame.drop(index=frame.index[(frame["model"] == "c") & (frame["item_id"] < 5)])
    out = agreement_matrix(frame, judge="model", n_resamples=200)
    assert list(zip(out["judge_a"], out["judge_b"], strict=True)) == [("a", "b"), ("a", "c"), ("b", "c")]
    ac = out.iloc[1]
    c_scores = frame[frame["model"] == "c"].set_index("item_id")["score"]
    a_scores = frame[frame["model"] == "a"].set_index("item_id")["score"].reindex(c_scores.index)
    assert ac["n"] == 35 and ac["estimate"] == pytest.approx(stats.spearmanr(a_scores, c_scores).statistic)
    assert ac["label"] == agreement_label(ac["estimate"]) and "Negligible < 0.3" in ac["label_thresholds"]
    wide = agreement_matrix_wide(out)
    assert wide.loc["c", "a"] == ac["estimate"] and wide.loc["b", "b"] == 1.0


def test_correlation_sample_size_matches_pingouin() -> None:
    for r in (0.2, 0.3, 0.5):
        out = n_for_correlation(r).iloc[0]
        closed_form = ((special.ndtri(0.975) + special.ndtri(0.8)) / np.arctanh(r)) ** 2 + 3
        assert out["n"] == int(np.ceil(closed_form))
        # pingouin solves its own (Fisher z) power curve numerically; the two agree within 2 items
        assert abs(out["n"] - pingouin.power_corr(r=r, power=0.8, alpha=0.05)) <= 2


def test_flip_rate_sample_size_reaches_its_power_in_simulation() -> None:
    out = n_for_flip_rate(0.25, 0.10, alternative="greater").iloc[0]
    n = int(out["n"])
    assert out["achieved_power"] >= 0.8 and out["n_stable"] >= n
    rng = np.random.default_rng(5)
    flips = rng.binomial(n, 0.25, 4000)
    rejects = {k: stats.binomtest(int(k), n, 0.10, alternative="greater").pvalue <= 0.05 for k in np.unique(flips)}
    rejected = np.mean([rejects[k] for k in flips])
    assert rejected == pytest.approx(out["achieved_power"], abs=0.025)
    # one fewer item (where power is below target) is not enough
    smaller = n_for_flip_rate(0.25, 0.10, alternative="greater", max_n=n - 1).iloc[0]
    assert np.isnan(smaller["estimate"]) and "not reached" in smaller["note"]


def test_kappa_sample_size_reaches_its_power_in_simulation() -> None:
    out = n_for_kappa(0.6, 0.4, prevalence=0.3).iloc[0]
    n = int(out["n"])
    rng = np.random.default_rng(6)
    pi, kappa = 0.3, 0.6
    pq = pi * (1 - pi)
    cells = [pi**2 + kappa * pq, pq * (1 - kappa), pq * (1 - kappa), (1 - pi) ** 2 + kappa * pq]
    counts = rng.multinomial(n, cells, size=3000)
    p_yes_1 = (counts[:, 0] + counts[:, 1]) / n
    p_yes_2 = (counts[:, 0] + counts[:, 2]) / n
    observed = (counts[:, 0] + counts[:, 3]) / n
    expected = p_yes_1 * p_yes_2 + (1 - p_yes_1) * (1 - p_yes_2)
    kappas = (observed - expected) / (1 - expected)
    from judgelab.stats.power import kappa_variance_factor
    z = (kappas - 0.4) / np.sqrt(kappa_variance_factor(0.4, pi) / n)
    assert np.mean(z > special.ndtri(0.95)) == pytest.approx(0.8, abs=0.04)


def test_correlation_difference_sample_size_is_smaller_for_correlated_judges() -> None:
    independent = n_for_correlation_difference(0.6, 0.5).iloc[0]["n"]
    dependent = n_for_correlation_difference(0.6, 0.5, r_between=0.8).iloc[0]["n"]
    z = (special.ndtri(0.975) + special.ndtri(0.8)) / (np.arctanh(0.6) - np.arctanh(0.5))
    assert independent == int(np.ceil(2 * z**2 + 3)) and dependent < independent
    with pytest.raises(ValueError, match="must differ"):
        n_for_correlation_difference(0.5, 0.5)
