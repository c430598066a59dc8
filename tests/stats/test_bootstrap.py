"""The bootstrap engine against scipy.stats.bootstrap, and its edge cases (clusters, NaN, n = 2, constants)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from judgelab.stats import bootstrap, bootstrap_ci, mean_statistic, pearson_statistic, spearman_statistic
from judgelab.stats.bootstrap import (
    kendall_statistic,
    resample_midranks,
    rowwise_pearson,
    vectorized_statistic,
)


def _scipy_pearson(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    return rowwise_pearson(np.atleast_2d(a), np.atleast_2d(b)).reshape(np.shape(a)[:-1])


def test_resample_midranks_equal_scipy_rankdata_with_ties() -> None:
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 4, size=(20, 15))
    np.testing.assert_allclose(resample_midranks(codes, 4), stats.rankdata(codes, axis=1))


@pytest.mark.parametrize("make", [spearman_statistic, pearson_statistic])
def test_full_sample_statistic_matches_scipy(make) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(1)
    x = rng.integers(1, 6, 80).astype(float)
    y = x + rng.integers(-2, 3, 80)
    expected = stats.spearmanr(x, y).statistic if make is spearman_statistic else stats.pearsonr(x, y).statistic
    assert make(x, y)(np.arange(80)[None, :])[0] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("ties", [True, False])
def test_spearman_statistic_on_resamples_matches_scipy(ties: bool) -> None:
    """Both code paths: few distinct (x, y) pairs (joint counts) and mostly distinct values (own ranks)."""
    rng = np.random.default_rng(12)
    x = rng.integers(1, 6, 60).astype(float) if ties else rng.normal(size=60)
    y = np.clip(x + rng.integers(-1, 2, 60), 1, 5) if ties else x + rng.normal(size=60)
    idx = rng.integers(0, 60, size=(50, 60))
    idx[0] = 7  # a constant resample: undefined
    got = spearman_statistic(x, y)(idx)
    assert np.isnan(got[0])
    expected = [stats.spearmanr(x[row], y[row]).statistic for row in idx[1:]]
    np.testing.assert_allclose(got[1:], expected, atol=1e-12)


def test_kendall_statistic_matches_scipy_variants() -> None:
    rng = np.random.default_rng(2)
    x, y = rng.integers(1, 4, 40), rng.integers(1, 6, 40)
    for variant in ("b", "c"):
        got = kendall_statistic(x, y, variant)(np.arange(40)[None, :])[0]
        assert got == pytest.approx(stats.kendalltau(x, y, variant=variant).statistic)


@pytest.mark.parametrize("interval", ["percentile", "bca"])
def test_intervals_agree_with_scipy_bootstrap(interval: str) -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=60)
    y = 0.6 * x + rng.normal(size=60)
    ours = bootstrap(pearson_statistic(x, y), 60, n_resamples=20_000, interval=interval, seed=4)  # type: ignore[arg-type]
    ref = stats.bootstrap((x, y), _scipy_pearson, paired=True, vectorized=True, n_resamples=20_000,
                          method="BCa" if interval == "bca" else "percentile", random_state=5)
    # different random resamples: agreement up to Monte Carlo error of the quantiles
    assert ours.ci_low == pytest.approx(ref.confidence_interval.low, abs=0.02)
    assert ours.ci_high == pytest.approx(ref.confidence_interval.high, abs=0.02)
    assert ours.std_error == pytest.approx(ref.standard_error, rel=0.05)


def test_seed_reproducible_and_method_states_interval() -> None:
    x = np.random.default_rng(6).normal(size=30)
    a = bootstrap(mean_statistic(x), 30, n_resamples=500, seed=7)
    b = bootstrap(mean_statistic(x), 30, n_resamples=500, seed=7)
    c = bootstrap(mean_statistic(x), 30, n_resamples=500, seed=8)
    np.testing.assert_array_equal(a.distribution, b.distribution)
    assert not np.array_equal(a.distribution, c.distribution)
    assert a.method == "percentile bootstrap 95%, 500 resamples"
    assert "BCa bootstrap 90%" in bootstrap(mean_statistic(x), 30, n_resamples=200, ci_level=0.9, interval="bca").method


def test_clustered_resampling_keeps_cluster_structure_and_widens_interval() -> None:
    rng = np.random.default_rng(9)
    cluster_effect = np.repeat(rng.normal(0, 2, 20), 10)  # strongly clustered data
    x = cluster_effect + rng.normal(0, 0.3, 200)
    labels = np.repeat(np.arange(20), 10)
    iid = bootstrap(mean_statistic(x), 200, n_resamples=2000, seed=1)
    clustered = bootstrap(mean_statistic(x), 200, cluster=labels, cluster_name="doc", n_resamples=2000, seed=1)
    assert (clustered.ci_high - clustered.ci_low) > 2.5 * (iid.ci_high - iid.ci_low)
    assert "clustered by doc (20 clusters; resampling clusters, then rows within)" in clustered.method


def test_unequal_cluster_sizes_give_resamples_of_drawn_clusters() -> None:
    sizes = np.array([1, 2, 3, 7])
    labels = np.repeat(np.arange(4), sizes)
    seen: list[np.ndarray] = []

    def record(idx: np.ndarray) -> np.ndarray:
        seen.extend(idx)
        return np.full(idx.shape[0], float(idx.shape[1]))

    for how in ("clusters_then_rows", "clusters"):
        seen.clear()
        result = bootstrap(record, len(labels), cluster=labels, n_resamples=300, seed=2, cluster_resampling=how)  # type: ignore[arg-type]
        del seen[0]  # the first call evaluates the full sample
        lengths = np.array([len(idx) for idx in seen])
        assert len(seen) == 300 and result.n_invalid == 0
        assert lengths.min() >= 4 * sizes.min() and lengths.max() <= 4 * sizes.max()
        assert len(np.unique(lengths)) > 3  # ragged resamples were evaluated in equal-length groups
        np.testing.assert_array_equal(np.sort(result.distribution), np.sort(lengths.astype(float)))
        if how == "clusters":  # whole clusters: each cluster's rows appear a multiple of its size
            for idx in seen:
                per_cluster = np.bincount(labels[idx], minlength=4)
                assert np.all(per_cluster % sizes == 0)


def test_constant_input_and_small_n_give_nan_with_note_not_an_error() -> None:
    const = bootstrap(spearman_statistic(np.ones(10), np.arange(10.0)), 10, n_resamples=100)
    assert np.isnan(const.estimate) and np.isnan(const.ci_low) and "undefined" in const.note
    one = bootstrap(mean_statistic(np.array([1.0])), 1, n_resamples=100)
    assert one.estimate == 1.0 and np.isnan(one.ci_low) and "fewer than 2" in one.note
    two = bootstrap(spearman_statistic(np.array([1.0, 2.0]), np.array([2.0, 1.0])), 2, n_resamples=200, seed=0)
    assert two.estimate == -1.0
    assert two.n_invalid > 0 and "undefined statistic" in two.note  # resamples repeating one row are constant


def test_bootstrap_ci_tidy_frame_drops_missing_pairwise() -> None:
    df = pd.DataFrame({"judge": [1, 2, 3, np.nan, 5, 4], "human": [1, 3, 2, 4, np.nan, 5], "doc": list("aabbcc")})
    out = bootstrap_ci("judge", "human", data=df, statistic="mean_difference", cluster="doc", n_resamples=200)
    assert list(out.columns[:7]) == ["metric", "estimate", "ci_low", "ci_high", "p_value", "n", "method"]
    row = out.iloc[0]
    assert row["n"] == 4 and row["n_missing_dropped"] == 2
    assert row["estimate"] == pytest.approx(np.mean([1 - 1, 2 - 3, 3 - 2, 4 - 5]))
    custom = bootstrap_ci(np.arange(10.0), statistic=lambda a: a.std(axis=-1), n_resamples=100)
    assert custom["estimate"].iloc[0] == pytest.approx(np.arange(10.0).std())


def test_bad_arguments_raise_clear_errors() -> None:
    stat = vectorized_statistic(lambda a: a.mean(axis=-1), np.arange(5.0))
    with pytest.raises(ValueError, match="ci_level"):
        bootstrap(stat, 5, ci_level=95)
    with pytest.raises(ValueError, match="interval"):
        bootstrap(stat, 5, interval="basic")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="cluster has 3 labels"):
        bootstrap(stat, 5, cluster=[1, 2, 3])
    with pytest.raises(ValueError, match="non-numeric"):
        bootstrap_ci(["a", "b"], n_resamples=10)
    with pytest.raises(ValueError, match="different lengths"):
        bootstrap_ci([1.0, 2.0], [1.0], statistic="pearson")
