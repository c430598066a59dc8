"""Comparing judges: paired bootstrap differences, dependent-correlation tests, p-value correction."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.multitest import multipletests

from judgelab.stats import adjust_pvalues, compare_judges, dependent_correlation_test
from judgelab.stats.compare import _steiger, _williams, _zou_interval


def _three_raters(seed: int, n: int = 150) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    human = rng.normal(size=n)
    return human + rng.normal(0, 0.7, n), human + rng.normal(0, 1.4, n), human


def test_paired_difference_equals_difference_of_estimates_and_shares_resamples() -> None:
    a, b, human = _three_raters(0)
    out = compare_judges(a, b, human, metric="spearman", n_resamples=2000).set_index("part")
    assert out.loc["a", "estimate"] == pytest.approx(stats.spearmanr(a, human).statistic)
    assert out.loc["b", "estimate"] == pytest.approx(stats.spearmanr(b, human).statistic)
    assert out.loc["difference", "estimate"] == pytest.approx(out.loc["a", "estimate"] - out.loc["b", "estimate"])
    assert out.loc["difference", "ci_low"] > 0 and out.loc["difference", "p_value"] < 0.01
    # a paired interval is narrower than the two separate intervals would suggest
    separate = np.hypot(out.loc["a", "ci_high"] - out.loc["a", "ci_low"], out.loc["b", "ci_high"] - out.loc["b", "ci_low"])
    assert out.loc["difference", "ci_high"] - out.loc["difference", "ci_low"] < separate


def test_identical_judges_have_zero_difference_and_p_one() -> None:
    a, _, human = _three_raters(1)
    out = compare_judges(a, a.copy(), human, metric="mae", n_resamples=300).set_index("part")
    assert out.loc["difference", "estimate"] == 0 and out.loc["difference", "p_value"] == 1.0


def test_label_metrics_and_missing_rows_use_only_shared_items() -> None:
    a = np.array([1, 2, 3, 1, 2, 3, 1, 2, None, 3])
    b = np.array([1, 2, 2, 1, 3, 3, 2, 2, 1, None])
    human = np.array([1, 2, 3, 1, 2, 2, 1, 3, 1, 3])
    out = compare_judges(a, b, human, metric="kappa", n_resamples=300).set_index("part")
    keep = slice(0, 8)
    assert out.loc["a", "n"] == 8 and out.loc["a", "n_missing_dropped"] == 2
    assert out.loc["a", "estimate"] == pytest.approx(cohen_kappa_score(a[keep].astype(int), human[keep]))
    assert out.loc["b", "estimate"] == pytest.approx(cohen_kappa_score(b[keep].astype(int), human[keep]))
    with pytest.raises(ValueError, match="unknown metric"):
        compare_judges(a, b, human, metric="auc")


@pytest.mark.parametrize(
    ("r_a", "r_b", "r_ab", "n", "williams", "steiger"),
    [  # outputs of the R package cocor printed in public analyses (inputs rounded to 4 decimals there)
        (-0.1741, 0.2015, 0.3734, 646, -9.0340, -8.6124),
        (0.8066, 0.2383, 0.2255, 177, 9.3823, 8.5460),
        (0.5447, 0.8, 0.0729, 70, -2.8114, None),
    ],
)
def test_williams_and_steiger_match_cocor_outputs(r_a, r_b, r_ab, n, williams, steiger) -> None:  # type: ignore[no-untyped-def]
    assert _williams(r_a, r_b, r_ab, n)[0] == pytest.approx(williams, abs=0.003)
    if steiger is not None:
        assert _steiger(r_a, r_b, r_ab, n)[0] == pytest.approx(steiger, abs=0.003)


def test_dependent_correlation_tests_hold_their_size_under_the_null() -> None:
    """Simulated: r(ref, a) = r(ref, b) = 0.5, r(a, b) = 0.4, n = 60; a 5% test rejects about 5%."""
    rng = np.random.default_rng(7)
    cov = np.array([[1.0, 0.5, 0.5], [0.5, 1.0, 0.4], [0.5, 0.4, 1.0]])
    chol = np.linalg.cholesky(cov)
    rejections = {"williams": 0, "steiger": 0}
    covered = 0
    n, reps = 60, 2000
    for _ in range(reps):
        ref, a, b = chol @ rng.normal(size=(3, n))
        r = np.corrcoef([ref, a, b])
        rejections["williams"] += _williams(r[0, 1], r[0, 2], r[1, 2], n)[1] < 0.05
        rejections["steiger"] += _steiger(r[0, 1], r[0, 2], r[1, 2], n)[1] < 0.05
        low, high = _zou_interval(r[0, 1], r[0, 2], r[1, 2], n, 0.95)
        covered += low <= 0 <= high
    for count in rejections.values():
        assert 0.035 <= count / reps <= 0.065
    assert 0.935 <= covered / reps <= 0.965


def test_dependent_correlation_test_rows_and_symmetry() -> None:
    a, b, human = _three_raters(2)
    out = dependent_correlation_test(a, b, human)
    swapped = dependent_correlation_test(b, a, human)
    assert list(out["test"]) == ["williams_t", "steiger_z"]
    assert out["estimate"].iloc[0] == pytest.approx(stats.pearsonr(human, a).statistic - stats.pearsonr(human, b).statistic)
    np.testing.assert_allclose(out["statistic"], -swapped["statistic"])
    np.testing.assert_allclose(out["p_value"], swapped["p_value"])
    assert (out["p_value"] < 0.01).all() and (out["ci_low"] > 0).all()
    small = dependent_correlation_test([1.0, 2, 3], [2.0, 1, 3], [1.0, 3, 2])
    assert small["p_value"].isna().all()
    rho = dependent_correlation_test(a, b, human, method="spearman")
    assert "approximation" in rho["note"].iloc[0]


def test_adjust_pvalues_matches_multipletests_and_leaves_nan_out() -> None:
    frame = pd.DataFrame({"metric": list("abcde"), "p_value": [0.01, 0.04, np.nan, 0.03, 0.2], "note": ""})
    out = adjust_pvalues(frame, method="fdr_bh")
    reject, adjusted, _, _ = multipletests([0.01, 0.04, 0.03, 0.2], method="fdr_bh")
    np.testing.assert_allclose(out["p_adjusted"].dropna(), adjusted)
    assert list(out["reject"]) == [reject[0], reject[1], False, reject[2], reject[3]]
    assert "left out" in out.loc[2, "note"] and out["correction"].iloc[0].startswith("fdr_bh over 4 tests")
    with pytest.raises(ValueError, match="p_val"):
        adjust_pvalues(frame, p_col="p_val")
