"""Edge cases found by differential testing, each checked against its reference library."""

from __future__ import annotations

import subprocess
import sys
import warnings

import krippendorff
import numpy as np
import pandas as pd
import pingouin
import pytest
from scipy import stats as sps
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from judgelab.stats import (
    DEFAULT_RESAMPLES,
    StatsInputError,
    cohen_kappa,
    compare_judges,
    dependent_correlation_test,
    fleiss_kappa,
    icc,
    krippendorff_alpha,
)

FAST = {"n_resamples": 200}
_PINGOUIN = {"ICC1": "ICC(1,1)", "ICC2": "ICC(A,1)", "ICC3": "ICC(C,1)",
             "ICC1k": "ICC(1,k)", "ICC2k": "ICC(A,k)", "ICC3k": "ICC(C,k)"}


def _long(matrix: np.ndarray) -> pd.DataFrame:
    n, k = matrix.shape
    return pd.DataFrame({"item_id": np.repeat(np.arange(n), k), "judge": np.tile(np.arange(k), n),
                         "score": matrix.ravel()})


def _pingouin_icc(matrix: np.ndarray) -> pd.Series:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pingouin divides by zero on these inputs
        ref = pingouin.intraclass_corr(_long(matrix), targets="item_id", raters="judge", ratings="score")
    return ref.set_index("Type")["ICC"]


def test_icc_refuses_non_numeric_scores_instead_of_making_them_missing() -> None:
    frame = _long(np.arange(12, dtype=float).reshape(4, 3)).astype({"score": object})
    frame.loc[5, "score"] = "n/a"
    with pytest.raises(StatsInputError, match=r"score holds 1 non-numeric value\(s\) \(e.g. 'n/a'\)"):
        icc(data=frame)
    with pytest.raises(StatsInputError, match="non-numeric"):
        icc(np.array([[1, 2], [3, "x"], [4, 5]], dtype=object))


def test_one_layout_everywhere_and_a_transposed_array_is_refused() -> None:
    rng = np.random.default_rng(0)
    items_by_raters = np.clip(rng.integers(1, 6, 40)[:, None] + rng.integers(-1, 2, (40, 3)), 1, 5).astype(float)
    reference = krippendorff.alpha(reliability_data=items_by_raters.T, level_of_measurement="interval")
    default = krippendorff_alpha(items_by_raters, level="interval", **FAST).iloc[0]["estimate"]
    package_layout = krippendorff_alpha(items_by_raters.T, level="interval", layout="raters x items",
                                        **FAST).iloc[0]["estimate"]
    assert default == pytest.approx(reference, abs=1e-12) and package_layout == pytest.approx(reference, abs=1e-12)
    from_long = krippendorff_alpha(data=_long(items_by_raters), level="interval", **FAST).iloc[0]["estimate"]
    assert from_long == pytest.approx(reference, abs=1e-12)
    for statistic in (krippendorff_alpha, fleiss_kappa, icc):
        with pytest.raises(StatsInputError, match="3 rows and 40 columns.*layout='raters x items'"):
            statistic(items_by_raters.T)
    fleiss = fleiss_kappa(items_by_raters.T, layout="raters x items", **FAST).iloc[0]["estimate"]
    assert fleiss == pytest.approx(sm_fleiss_kappa(aggregate_raters(items_by_raters)[0]), abs=1e-12)


def test_fleiss_names_items_dropped_for_more_and_for_fewer_ratings() -> None:
    rng = np.random.default_rng(1)
    ratings = rng.integers(0, 3, (12, 4)).astype(float)
    ratings[:9, 3] = np.nan  # 9 items with 3 ratings (the modal count) ...
    ratings[9, 2:] = np.nan  # ... one with 2, two with 4
    out = fleiss_kappa(ratings, layout="items x raters", **FAST).iloc[0]
    kept = ratings[:9, :3]
    assert out["estimate"] == pytest.approx(sm_fleiss_kappa(aggregate_raters(kept)[0]), abs=1e-12)
    assert (out["n"], out["n_raters"]) == (9, 3)
    assert (out["n_items_fewer_ratings_dropped"], out["n_items_more_ratings_dropped"]) == (1, 2)
    assert out["n_items_incomplete_dropped"] == 3
    assert "kept the 9 items with the most common count (3), dropped 1 with fewer than 3 ratings (first: [9]) " \
        "and 2 with more than 3 ratings (first: [10, 11])" in out["note"]


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_with_one_constant_rater_is_exactly_zero_without_a_test(weights: str | None) -> None:
    constant, other = np.full(30, 3), np.tile([1, 2, 3, 4, 5], 6)
    out = cohen_kappa(constant, other, weights=weights, **FAST).iloc[0]  # type: ignore[arg-type]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = cohen_kappa_score(constant, other, weights=weights)
    assert out["estimate"] == 0.0 and reference == pytest.approx(0.0, abs=1e-12)  # sklearn: 0 plus rounding noise
    assert np.isnan(out["p_value"]) and "x use(s) a single category: kappa is 0 by construction" in out["note"]
    assert out["ci_low"] == out["ci_high"] == 0.0
    both = cohen_kappa([2, 2, 2, 2], [1, 1, 1, 1], **FAST).iloc[0]  # two constant raters, different labels
    assert both["estimate"] == 0.0 and "x and y use(s) a single category" in both["note"]


def test_icc_with_zero_error_variance_follows_pingouin() -> None:
    cases = {
        "identical": np.array([[1, 1, 1], [2, 2, 2], [4, 4, 4], [5, 5, 5.0]]),
        "constant offset": np.array([[1, 2, 3], [2, 3, 4], [4, 5, 6], [5, 6, 7.0]]),
        "fractional identical": np.array([[0.1, 0.1], [0.7, 0.7], [0.3, 0.3]]),
        "items equal, raters differ": np.array([[1, 2, 3], [1, 2, 3], [1, 2, 3.0]]),
    }
    for name, matrix in cases.items():
        ours = icc(matrix, layout="items x raters").set_index("metric")
        ref = _pingouin_icc(matrix)
        for form, ref_form in _PINGOUIN.items():
            expected = ref[ref_form]
            if np.isfinite(expected):
                assert ours.loc[form, "estimate"] == pytest.approx(expected, abs=1e-12), (name, form)
            else:  # pingouin's -inf or NaN is a division by zero: ours is NaN and says which mean squares are 0
                assert np.isnan(ours.loc[form, "estimate"]) and "denominator is 0" in ours.loc[form, "note"]
    identical = icc(cases["identical"], layout="items x raters").set_index("metric")
    assert (identical["estimate"] == 1.0).all() and (identical["p_value"] == 0.0).all()
    assert identical.loc["ICC1", "note"].startswith("F is infinite (zero within-item mean square)")
    flat = icc(np.ones((4, 3))).set_index("metric")
    assert flat["estimate"].isna().all()
    assert "between-item, between-rater, residual, within-item mean squares zero" in flat.loc["ICC2", "note"]


def test_dependent_correlation_test_with_three_items_says_why_p_is_missing() -> None:
    out = dependent_correlation_test([1.0, 2, 3], [1.0, 3, 2], [1.0, 2, 4])
    assert out["p_value"].isna().all() and out["ci_low"].isna().all()
    assert out["note"].str.startswith("n=3 <= 3: Williams' t and Steiger's z need n > 3").all()
    four = dependent_correlation_test([1.0, 2, 3, 5], [1.0, 3, 2, 4], [1.0, 2, 4, 3])
    assert four["p_value"].notna().all() and not four["note"].str.contains("n > 3").any()


def test_kappa_refuses_continuous_scores_unless_categories_are_declared() -> None:
    rng = np.random.default_rng(2)
    human = np.round(rng.uniform(1, 5, 50), 2)
    judge = np.round(human + rng.normal(0, 0.3, 50), 2)
    with pytest.raises(StatsInputError, match=r"treats every distinct value as a category.*non-integer.*labels="):
        cohen_kappa(judge, human, **FAST)
    with pytest.raises(StatsInputError, match="non-integer"):
        compare_judges(judge, human, human, metric="kappa_linear", **FAST)
    half = np.array([1, 1.5, 2, 2.5, 3, 1.5, 2, 3])
    scale = [1, 1.5, 2, 2.5, 3]
    out = cohen_kappa(half, half[::-1], labels=scale, weights="linear", **FAST).iloc[0]
    doubled = (2 * half).astype(int)  # scikit-learn refuses float labels; positions are what count
    assert out["estimate"] == pytest.approx(cohen_kappa_score(doubled, doubled[::-1], labels=[2, 3, 4, 5, 6],
                                                              weights="linear"), abs=1e-12)
    integers = cohen_kappa(np.array([1.0, 2.0, 3.0, 2.0]), np.array([1.0, 2.0, 2.0, 2.0]), **FAST).iloc[0]
    assert np.isfinite(integers["estimate"])  # integer-valued floats are categories, as they should be


def test_compare_judges_kappa_equals_cohen_kappa_of_each_pair() -> None:
    # judge b uses category 4, which neither a nor gold uses: pooling the three raters' categories
    # moved a's linear kappa away from cohen_kappa(a, gold)
    gold = np.array([1, 2, 3, 5, 1, 2, 3, 5, 2, 3, 1, 5])
    a = np.array([1, 2, 3, 5, 2, 2, 3, 3, 2, 5, 1, 5])
    b = np.array([1, 4, 3, 4, 1, 2, 4, 5, 2, 3, 4, 5])
    for metric, weights in (("kappa", None), ("kappa_linear", "linear"), ("kappa_quadratic", "quadratic")):
        out = compare_judges(a, b, gold, metric=metric, **FAST).set_index("part")
        for part, judge in (("a", a), ("b", b)):
            single = cohen_kappa(judge, gold, weights=weights, **FAST).iloc[0]["estimate"]  # type: ignore[arg-type]
            assert out.loc[part, "estimate"] == pytest.approx(single, abs=1e-12)
            assert single == pytest.approx(cohen_kappa_score(judge, gold, weights=weights), abs=1e-12)
    pooled_linear = cohen_kappa(a, gold, weights="linear", labels=[1, 2, 3, 4, 5], **FAST).iloc[0]["estimate"]
    declared = compare_judges(a, b, gold, metric="kappa_linear", labels=[1, 2, 3, 4, 5], **FAST).set_index("part")
    assert declared.loc["a", "estimate"] == pytest.approx(pooled_linear, abs=1e-12)
    assert pooled_linear != pytest.approx(cohen_kappa_score(a, gold, weights="linear"))  # the case is a real one


# VmHWM (this process's own peak RSS), not getrusage's ru_maxrss: Linux carries ru_maxrss across fork + exec,
# so a child of a large pytest process would report the parent's peak
_MEMORY_CHILD = """
import re, sys
import numpy as np
from judgelab.stats import krippendorff_alpha

def peak_bytes():
    with open("/proc/self/status") as f:
        return int(re.search(r"VmHWM:\\s+(\\d+) kB", f.read()).group(1)) * 1024

before = peak_bytes()
rng = np.random.default_rng(0)
truth = rng.normal(size=400)
ratings = np.round(truth[:, None] + rng.normal(0, 0.3, (400, 3)), 3)
out = krippendorff_alpha(ratings, level="ordinal", layout="items x raters").iloc[0]  # default resamples
after = peak_bytes()
print(len(np.unique(ratings)), before, after, out["n_resamples"], out["estimate"], out["ci_low"],
      out["ci_high"])
"""


def test_ordinal_alpha_bootstrap_memory_is_bounded_with_a_thousand_distinct_values() -> None:
    # peak RSS of a fresh process (tracemalloc would make the resampling loop 70x slower)
    done = subprocess.run([sys.executable, "-c", _MEMORY_CHILD], capture_output=True, text=True, timeout=300,
                          check=True)
    distinct, before, peak, resamples, estimate, low, high = done.stdout.split()
    assert int(distinct) >= 1000 and int(resamples) == DEFAULT_RESAMPLES
    # the pairwise-distance version needed resamples x values^2 floats: tens of GB at the default resamples
    assert int(peak) < 1e9, f"peak RSS {int(peak) / 1e6:.0f} MB (after imports: {int(before) / 1e6:.0f} MB)"
    assert 0.85 < float(low) < float(estimate) < float(high) < 0.95
    # the point estimate against the krippendorff package on the first 60 items (~180 distinct values; the
    # package needs about a minute for all 1,200 values)
    rng = np.random.default_rng(0)
    truth = rng.normal(size=400)
    ratings = np.round(truth[:, None] + rng.normal(0, 0.3, (400, 3)), 3)[:60]
    expected = krippendorff.alpha(reliability_data=ratings.T, level_of_measurement="ordinal")
    ours = krippendorff_alpha(ratings, level="ordinal", layout="items x raters", n_resamples=1).iloc[0]
    assert ours["estimate"] == pytest.approx(expected, abs=1e-12)


def test_spearman_reference_on_tied_ranks_is_unchanged() -> None:
    x, y = np.array([1, 1, 2, 2, 3, 3, 3]), np.array([2, 1, 2, 3, 3, 3, 1])
    from judgelab.stats import spearman

    assert spearman(x, y, **FAST).iloc[0]["estimate"] == pytest.approx(sps.spearmanr(x, y).statistic, abs=1e-12)
