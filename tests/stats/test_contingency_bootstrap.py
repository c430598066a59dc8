"""Table-based bootstraps (judgelab.stats.contingency + TableStatistic) against scipy / scikit-learn.

Each statistic computed from a joint table must equal the reference library on the raw rows of
every resample (hard cases: ties everywhere, a constant side, two levels, half-point values), and
the intervals drawn from multinomial tables must agree with scipy.stats.bootstrap on the rows, and
the clustered (whole-cluster) table path with the index path, within Monte Carlo error.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from judgelab.stats import StatsInputError, cohen_kappa, compare_judges, correlation, mae, percent_agreement
from judgelab.stats.agreement import agreement_statistic, kappa_statistic, label_codes
from judgelab.stats.bootstrap import (
    TableStatistic,
    bootstrap,
    kendall_statistic,
    paired_tables,
    rowwise_pearson,
    spearman_statistic,
)
from judgelab.stats.errors import error_statistic

RNG = np.random.default_rng(20261124)


def _cases() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    n = 120
    x5 = RNG.integers(1, 6, n).astype(float)
    y5 = np.clip(np.round(x5 + RNG.normal(0, 1.3, n)), 1, 5)
    return {
        "1-5 scale, ties everywhere": (x5, y5),
        "two levels": (RNG.integers(0, 2, n).astype(float), RNG.integers(0, 2, n).astype(float)),
        "half points": (RNG.choice([1.0, 1.5, 2.0, 2.5], n), RNG.choice([1.5, 2.5, 3.5], n)),
        "constant judge": (np.full(n, 3.0), y5),
        "mostly one value": (np.where(RNG.random(n) < 0.95, 4.0, 5.0), np.where(RNG.random(n) < 0.9, 2.0, 1.0)),
    }


CASES = _cases()


def _scipy_nan(func, x, y) -> float:
    """The reference value (scipy warns, and returns NaN, when one side is constant)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(func(x, y).statistic)


def _resamples(n: int, b: int = 40) -> np.ndarray:
    return np.vstack([np.arange(n)[None, :], RNG.integers(0, n, size=(b, n))])


def _kappa_ref(x: np.ndarray, y: np.ndarray, weights: str | None) -> float:
    (cx, cy), cats = label_codes([x, y])
    if len(np.unique(np.r_[cx, cy])) == 1:
        return np.nan  # sklearn warns and returns nan for a 1 x 1 confusion matrix
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(cohen_kappa_score(cx, cy, labels=list(range(len(cats))), weights=weights))


@pytest.mark.parametrize("case", list(CASES))
def test_table_statistics_equal_the_references_on_every_resample(case: str) -> None:
    x, y = CASES[case]
    idx = _resamples(len(x))
    (cx, cy), cats = label_codes([x, y])
    k = len(cats)
    checks = {
        "spearman": (spearman_statistic(x, y), lambda a, b: _scipy_nan(stats.spearmanr, a, b)),
        "kendall_b": (kendall_statistic(x, y), lambda a, b: _scipy_nan(stats.kendalltau, a, b)),
        "kendall_c": (kendall_statistic(x, y, "c"),
                      lambda a, b: _scipy_nan(lambda u, v: stats.kendalltau(u, v, variant="c"), a, b)),
        "mae": (error_statistic("mae", x, y), lambda a, b: float(np.mean(np.abs(a - b)))),
        "rmse": (error_statistic("rmse", x, y), lambda a, b: float(np.sqrt(np.mean((a - b) ** 2)))),
        "mean_signed_difference": (error_statistic("mean_signed_difference", x, y), lambda a, b: float(np.mean(a - b))),
        "agreement": (agreement_statistic(cx, cy), lambda a, b: float(np.mean(a == b))),
    }
    for weights in (None, "linear", "quadratic"):
        checks[f"kappa_{weights}"] = (kappa_statistic(cx, cy, k, weights),  # type: ignore[arg-type]
                                      lambda a, b, w=weights: _kappa_ref(a, b, w))
    for name, (stat, ref) in checks.items():
        assert isinstance(stat, TableStatistic), name  # discrete data take the table path
        ours = stat(idx)
        if name == "agreement":
            expected = np.array([ref(cx[row], cy[row]) for row in idx])
        else:
            expected = np.array([ref(x[row], y[row]) for row in idx])
        np.testing.assert_allclose(ours, expected, rtol=1e-12, atol=1e-12, equal_nan=True, err_msg=f"{case}: {name}")
    if case == "constant judge":  # the degenerate cases behave as before: NaN correlation, kappa exactly 0
        assert np.isnan(checks["spearman"][0](idx)).all() and np.isnan(checks["kendall_b"][0](idx)).all()
        assert (checks["kappa_None"][0](idx) == 0.0).all()


def test_kappa_both_raters_one_label_is_nan_and_continuous_data_keep_the_index_path() -> None:
    c = np.zeros(30, dtype=np.int64)
    stat = kappa_statistic(c, c, 1)
    assert isinstance(stat, TableStatistic) and np.isnan(stat(_resamples(30, 3))).all()
    x = RNG.normal(size=200)
    y = x + RNG.normal(size=200)
    for stat in (spearman_statistic(x, y), kendall_statistic(x, y), error_statistic("mae", x, y)):
        assert not isinstance(stat, TableStatistic)
    # the public functions report the same degenerate results as before
    out = correlation(np.full(20, 2.0), np.arange(20.0) % 5, n_resamples=200)
    assert np.isnan(out["estimate"].iloc[0]) and np.isnan(out["ci_low"].iloc[0])


def _scipy_spearman(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return rowwise_pearson(np.atleast_2d(stats.rankdata(x, axis=-1)), np.atleast_2d(stats.rankdata(y, axis=-1)))


def _scipy_mae(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.abs(x - y).mean(axis=-1)


def _scipy_agreement(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return (x == y).mean(axis=-1)


def _scipy_quadratic_kappa(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """Quadratic-weighted kappa of integer labels 1..5, vectorised over resamples (written independently)."""
    x, y = np.atleast_2d(x), np.atleast_2d(y)
    observed = ((x - y) ** 2).mean(axis=-1)
    levels = np.arange(1, 6)
    px = (x[..., None] == levels).mean(axis=-2)
    py = (y[..., None] == levels).mean(axis=-2)
    expected = np.einsum("bi,ij,bj->b", px, (levels[:, None] - levels[None, :]) ** 2.0, py)
    return 1 - observed / expected


def _rated_pair(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.integers(1, 6, n).astype(float)
    return x, np.clip(np.round(x + rng.normal(0, 1.1, n)), 1, 5)


@pytest.mark.parametrize("interval", ["percentile", "bca"])
def test_table_intervals_agree_with_scipy_bootstrap(interval: str) -> None:
    x, y = _rated_pair(250, 1)
    (cx, cy), _ = label_codes([x, y])
    cases = [
        (spearman_statistic(x, y), _scipy_spearman),
        (error_statistic("mae", x, y), _scipy_mae),
        (agreement_statistic(cx, cy), _scipy_agreement),
        (kappa_statistic(cx, cy, 5, "quadratic"), _scipy_quadratic_kappa),
    ]
    for i, (stat, ref_stat) in enumerate(cases):
        assert isinstance(stat, TableStatistic)
        ours = bootstrap(stat, len(x), n_resamples=6000, interval=interval, seed=i)  # type: ignore[arg-type]
        if interval == "bca" and ref_stat is _scipy_agreement:
            # many replicates equal the estimate: judgelab's BCa bias correction counts them half
            # (documented in bootstrap()), scipy's not at all -- so compare with judgelab's row path
            rows = bootstrap(lambda idx, s=stat: s(idx), len(x), n_resamples=6000, interval="bca", seed=99)
            tol = 0.2 * rows.std_error + 1.0 / len(x)  # Monte Carlo error, plus one step of the lattice k / n
            assert abs(ours.ci_low - rows.ci_low) < tol and abs(ours.ci_high - rows.ci_high) < tol
            continue
        ref = stats.bootstrap((x, y), ref_stat, paired=True, vectorized=True, n_resamples=6000, random_state=i,
                              method="BCa" if interval == "bca" else "percentile")
        tol = 0.25 * ours.std_error  # ~4 Monte Carlo standard errors of the difference of two 2.5% quantiles
        assert abs(ours.ci_low - ref.confidence_interval.low) < tol, (i, ours, ref.confidence_interval)
        assert abs(ours.ci_high - ref.confidence_interval.high) < tol, (i, ours, ref.confidence_interval)
        assert abs(ours.std_error - ref.standard_error) < 0.08 * ref.standard_error


def test_kendall_table_interval_agrees_with_scipy_bootstrap() -> None:
    x, y = _rated_pair(150, 2)
    ours = bootstrap(kendall_statistic(x, y), len(x), n_resamples=3000, seed=3)
    ref = stats.bootstrap((x, y), lambda a, b: stats.kendalltau(a, b).statistic, paired=True, vectorized=False,
                          n_resamples=3000, random_state=3, method="percentile")
    tol = 0.3 * ours.std_error  # ~4 Monte Carlo standard errors at 3,000 resamples
    assert abs(ours.ci_low - ref.confidence_interval.low) < tol
    assert abs(ours.ci_high - ref.confidence_interval.high) < tol


@pytest.mark.parametrize("how", ["clusters", "clusters_then_rows"])
def test_clustered_table_intervals_agree_with_the_index_path(how: str) -> None:
    rng, n_clusters, size = np.random.default_rng(6), 60, 8
    effect = np.repeat(rng.normal(0, 1.0, n_clusters), size)  # clusters share a level
    x = np.clip(np.round(3 + effect + rng.normal(0, 0.8, n_clusters * size)), 1, 5)
    y = np.clip(np.round(3 + effect + rng.normal(0, 0.8, n_clusters * size)), 1, 5)
    labels = np.repeat([f"doc{g}" for g in range(n_clusters)], size)
    # percent agreement: clusters of 8 have at most 9 kinds of table (0..8 agreements), drawn by kind
    for stat in (spearman_statistic(x, y), kendall_statistic(x, y), error_statistic("mae", x, y),
                 agreement_statistic(x.astype(int), y.astype(int))):
        assert isinstance(stat, TableStatistic)
        common = dict(cluster=labels, cluster_resampling=how, n_resamples=5000)
        table = bootstrap(stat, len(x), seed=1, **common)  # type: ignore[arg-type]
        rows = bootstrap(lambda idx, s=stat: s(idx), len(x), seed=2, **common)  # type: ignore[arg-type]
        tol = 0.3 * rows.std_error  # ~4 Monte Carlo standard errors at 5,000 resamples
        assert abs(table.ci_low - rows.ci_low) < tol and abs(table.ci_high - rows.ci_high) < tol
        assert abs(table.std_error - rows.std_error) < 0.08 * rows.std_error
        bca_table = bootstrap(stat, len(x), seed=1, interval="bca", **common)  # type: ignore[arg-type]
        bca_rows = bootstrap(lambda idx, s=stat: s(idx), len(x), seed=2, interval="bca", **common)  # type: ignore[arg-type]
        assert abs(bca_table.ci_low - bca_rows.ci_low) < tol and abs(bca_table.ci_high - bca_rows.ci_high) < tol


def test_same_seed_same_interval_and_pairing() -> None:
    x, y = _rated_pair(300, 3)
    z = np.clip(y + np.random.default_rng(4).integers(-1, 2, 300), 1, 5)
    stat = spearman_statistic(x, y)
    a, b = bootstrap(stat, 300, n_resamples=2000, seed=5), bootstrap(stat, 300, n_resamples=2000, seed=5)
    c = bootstrap(stat, 300, n_resamples=2000, seed=6)
    assert (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high) and (a.ci_low, a.ci_high) != (c.ci_low, c.ci_high)
    # paired statistics on shared cells: each resample's difference is exactly the difference of the two
    sa, sb = paired_tables(spearman_statistic(x, y), spearman_statistic(z, y))
    da = bootstrap(sa, 300, n_resamples=500, seed=9).distribution
    db = bootstrap(sb, 300, n_resamples=500, seed=9).distribution
    diff = compare_judges(x, z, y, metric="spearman", n_resamples=500, seed=9)
    d = diff[diff["part"] == "difference"].iloc[0]
    assert np.isclose(d["ci_low"], np.quantile(da - db, 0.025)) and np.isclose(d["ci_high"], np.quantile(da - db, 0.975))


def test_public_functions_route_through_tables_with_unchanged_results() -> None:
    x, y = _rated_pair(400, 5)
    assert np.isclose(correlation(x, y, method="kendall", n_resamples=300)["estimate"].iloc[0],
                      stats.kendalltau(x, y).statistic, rtol=1e-12)
    assert np.isclose(cohen_kappa(x.astype(int), y.astype(int), weights="linear", n_resamples=300)["estimate"].iloc[0],
                      cohen_kappa_score(x.astype(int), y.astype(int), weights="linear"), rtol=1e-12)
    assert np.isclose(mae(x, y, n_resamples=300)["estimate"].iloc[0], np.mean(np.abs(x - y)), rtol=1e-12)
    out = percent_agreement(x.astype(int), y.astype(int), n_resamples=300)
    assert np.isclose(out["estimate"].iloc[0], np.mean(x == y)) and out["ci_low"].iloc[0] < out["ci_high"].iloc[0]


@pytest.mark.parametrize("clustered", [False, True])
def test_table_draws_depend_on_the_seed_only_not_on_the_thread_count(clustered: bool, monkeypatch) -> None:
    rng, n_clusters, size = np.random.default_rng(11), 300, 5
    x = rng.integers(1, 6, n_clusters * size).astype(float)
    y = np.clip(x + rng.integers(-1, 2, len(x)), 1, 5)
    labels = np.repeat(np.arange(n_clusters), size) if clustered else None
    stat = kappa_statistic(x.astype(int) - 1, y.astype(int) - 1, 5, "linear")
    assert isinstance(stat, TableStatistic)
    runs = {}
    for threads in ("1", "2", "3"):
        monkeypatch.setenv("JUDGELAB_STATS_THREADS", threads)
        # 3,500 resamples: four blocks, the last one short, shared unevenly among the threads
        runs[threads] = bootstrap(stat, len(x), cluster=labels, cluster_resampling="clusters", n_resamples=3500,
                                  seed=3).distribution
    assert len(runs["1"]) == 3500 and np.unique(runs["1"]).size > 100
    assert np.array_equal(runs["1"], runs["2"]) and np.array_equal(runs["1"], runs["3"])
    monkeypatch.setenv("JUDGELAB_STATS_THREADS", "many")
    with pytest.raises(StatsInputError, match="JUDGELAB_STATS_THREADS must be a whole number"):
        bootstrap(stat, len(x), n_resamples=10, seed=3)


def test_clustered_table_draws_are_exact_whole_numbers() -> None:
    """Resampled tables come from a float32 product of cluster weights and per-cluster counts: exact while
    every total stays below 2**24. Checked against the same draws summed in integers."""
    from judgelab.stats.bootstrap import _cluster_tables, _table_drawer
    from judgelab.stats.two_stage import Clusters

    rng, n_clusters = np.random.default_rng(12), 400
    sizes = rng.integers(1, 40, n_clusters)  # unequal clusters, up to 39 rows each
    labels = np.repeat(np.arange(n_clusters), sizes)
    x = rng.integers(0, 7, len(labels))
    y = np.clip(x + rng.integers(-2, 3, len(labels)), 0, 6)
    stat = kappa_statistic(x, y, 7, None)
    clusters = Clusters.from_labels(labels)
    draw, width = _table_drawer(stat, clusters)
    assert width == n_clusters  # every cluster's table differs: weights are drawn, not kinds
    counts = draw(np.random.default_rng(5), 200)
    gen = np.random.default_rng(5)  # the same draws, counted in integers
    chosen = gen.integers(0, n_clusters, size=(200, n_clusters), dtype=np.uint16)
    weights = np.stack([np.bincount(row, minlength=n_clusters) for row in chosen])
    exact = weights @ _cluster_tables(stat, clusters).astype(np.int64)
    assert counts.dtype == np.float64 and np.array_equal(counts, exact)
