"""The scale fast paths (issue 28) against the paths they replace, on seeded generated data.

Each test draws seeded random inputs (a few shapes and sizes per test, fixed seeds so every run checks the
same cases) and states the invariant it checks.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgelab import stats
from judgelab.stats.bootstrap import TableStatistic, bootstrap
from judgelab.stats.krippendorff import _units, alpha_statistic


def _ratings(rng: np.random.Generator, n_units: int, n_raters: int, levels: int, missing: float) -> np.ndarray:
    quality = rng.integers(0, levels, size=(n_units, 1))
    m = np.clip(quality + rng.integers(-1, 2, size=(n_units, n_raters)), 0, levels - 1).astype(float) + 1
    m[rng.random(m.shape) < missing] = np.nan
    return m


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
@pytest.mark.parametrize("seed", range(4))
def test_alpha_pattern_table_equals_unit_path(level: str, seed: int) -> None:
    """Invariant: alpha over unit-pattern counts equals alpha over per-unit draw counts -- on the full sample
    and on every resample of the same random index matrices (to 1e-12): grouping identical units loses
    nothing. Data: 3-5 raters on 3-6 levels with 0-30% missing ratings, 200-2,000 units."""
    rng = np.random.default_rng(seed)
    m = _ratings(rng, int(rng.integers(200, 2000)), int(rng.integers(3, 6)), int(rng.integers(3, 7)),
                 float(rng.choice([0.0, 0.1, 0.3])))
    units = _units(m, level)  # type: ignore[arg-type]
    fast = alpha_statistic(units, level)  # type: ignore[arg-type]
    slow = alpha_statistic(units, level, patterns=False)  # type: ignore[arg-type]
    assert isinstance(fast, TableStatistic) and not isinstance(slow, TableStatistic)
    idx = np.vstack([np.arange(units.n_units)[None, :], rng.integers(0, units.n_units, size=(50, units.n_units))])
    np.testing.assert_allclose(fast(idx), slow(idx), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("level", ["nominal", "ordinal"])
def test_alpha_pattern_bootstrap_matches_unit_bootstrap(level: str) -> None:
    """Invariant: the pattern-count bootstrap (multinomial over patterns) draws from the same distribution as
    the unit bootstrap: same estimate (1e-12), and standard errors and percentile bounds within Monte Carlo
    error (2,000 resamples each: bounds within 0.25 standard errors, SEs within 10%)."""
    rng = np.random.default_rng(11)
    units = _units(_ratings(rng, 1500, 3, 5, 0.05), level)  # type: ignore[arg-type]
    fast = bootstrap(alpha_statistic(units, level), units.n_units, n_resamples=2000, seed=3)  # type: ignore[arg-type]
    slow = bootstrap(alpha_statistic(units, level, patterns=False), units.n_units, n_resamples=2000,  # type: ignore[arg-type]
                     seed=3)
    assert fast.estimate == pytest.approx(slow.estimate, abs=1e-12)
    assert fast.std_error == pytest.approx(slow.std_error, rel=0.10)
    assert abs(fast.ci_low - slow.ci_low) < 0.25 * slow.std_error
    assert abs(fast.ci_high - slow.ci_high) < 0.25 * slow.std_error


def test_alpha_many_patterns_keeps_unit_path() -> None:
    """Invariant: with more distinct patterns than half the units (continuous ratings) alpha stays on the unit
    path, and krippendorff_alpha's estimate is the same either way."""
    rng = np.random.default_rng(5)
    m = rng.normal(size=(300, 3))
    units = _units(m, "interval")
    assert not isinstance(alpha_statistic(units, "interval"), TableStatistic)
    out = stats.krippendorff_alpha(m, level="interval", n_resamples=200).iloc[0]
    assert np.isfinite(out["ci_low"]) and out["ci_low"] <= out["estimate"] <= out["ci_high"]


@pytest.mark.parametrize("equal", [True, False])
@pytest.mark.parametrize("which", ["spearman", "kappa_quadratic"])
def test_two_stage_cluster_tables_give_the_same_resamples(equal: bool, which: str) -> None:
    """Invariant: clustered two-stage resampling of a table statistic through per-row cells gives exactly the
    same resampled values (so the same interval for a seed) as the index-matrix path it replaces, for equal and
    unequal cluster sizes; BCa too. Data: 1-5 scores of two raters sharing a cluster shift, 40-150 clusters."""
    from judgelab.stats.agreement import kappa_statistic
    from judgelab.stats.bootstrap import spearman_statistic

    rng = np.random.default_rng(21 if equal else 22)
    n_clusters = int(rng.integers(40, 150))
    sizes = np.full(n_clusters, 6) if equal else rng.integers(1, 12, size=n_clusters)
    cluster = np.repeat(np.arange(n_clusters), sizes)
    rng.shuffle(cluster)  # rows of a cluster need not be adjacent
    shift = rng.normal(0, 1, n_clusters)[cluster]
    x = np.clip(np.round(3 + shift + rng.normal(0, 0.8, len(cluster))), 1, 5)
    y = np.clip(np.round(3 + shift + rng.normal(0, 0.8, len(cluster))), 1, 5)
    if which == "spearman":
        stat = spearman_statistic(x, y)
    else:
        stat = kappa_statistic(x.astype(int) - 1, y.astype(int) - 1, 5, "quadratic")
    assert isinstance(stat, TableStatistic)
    for interval in ("percentile", "bca"):
        fast = bootstrap(stat, len(x), cluster=cluster, n_resamples=700, seed=4, interval=interval)  # type: ignore[arg-type]
        slow = bootstrap(lambda idx: stat(idx), len(x), cluster=cluster, n_resamples=700, seed=4,  # type: ignore[arg-type]
                         interval=interval)
        np.testing.assert_array_equal(fast.distribution, slow.distribution)
        assert (fast.estimate, fast.ci_low, fast.ci_high) == (slow.estimate, slow.ci_low, slow.ci_high)



@settings(max_examples=150, deadline=None)
@given(values=st.lists(st.one_of(st.text(max_size=4), st.integers(-3, 3), st.floats(allow_nan=True, width=16),
                                 st.booleans(), st.none()), max_size=30),
       as_arrow=st.booleans())
def test_distinct_text_equals_the_rowwise_strings(values: list, as_arrow: bool) -> None:
    """Invariant (generated columns: strings, numbers equal across types such as 1, 1.0 and True, NaN, None;
    object and Arrow string dtypes): distinct_text gives exactly set(values.dropna().astype(str))."""
    from judgelab.judgments import distinct_text

    series = pd.Series(values, dtype=object)
    if as_arrow:
        series = pd.Series([v for v in values if isinstance(v, str) or v is None], dtype="string[pyarrow]")
    assert distinct_text(series) == set(series.dropna().astype(str))


_CELLS = st.one_of(st.none(), st.sampled_from(["a", "b", "ü", ""]), st.integers(0, 2), st.floats(0, 2, width=16))


@settings(max_examples=150, deadline=None)
@given(raters=st.lists(st.sampled_from(["j1", "j2", None]), min_size=1, max_size=25), data=st.data(),
       dtype=st.sampled_from(["object", "string[pyarrow]", "Int64", "Float64"]))
def test_design_checks_count_the_same_distinct_values_as_the_object_conversion(raters: list, data: st.DataObject,
                                                                              dtype: str) -> None:
    """Invariant (generated columns of every dtype a judgments table holds, NA included): check_design's
    distinct values equal pd.unique(col.astype(object)) in order, and its per-rater distinct counts on
    integer codes equal groupby(...).nunique(dropna=False) on the object conversion."""
    from judgelab.stats.question import _distinct

    cells = data.draw(st.lists(_CELLS, min_size=len(raters), max_size=len(raters)))
    if dtype == "string[pyarrow]":
        cells = [None if c is None else str(c) for c in cells]
    elif dtype in ("Int64", "Float64"):
        cells = [c if isinstance(c, (int, float)) and not isinstance(c, bool) else None for c in cells]
        cells = [None if c is None else (int(c) if dtype == "Int64" else float(c)) for c in cells]
    col = pd.Series(cells, dtype=dtype)
    old = pd.unique(col.astype(object))
    new = _distinct(col)
    assert len(old) == len(new) and all((a is b) or (pd.isna(a) and pd.isna(b)) or a == b
                                for a, b in zip(old, new, strict=True))
    rows = pd.DataFrame({"judge": pd.Series(raters, dtype="string[pyarrow]"), "col": col})
    expected = rows.astype(object).groupby("judge", sort=False, dropna=False).nunique(dropna=False)["col"]
    codes, names = pd.factorize(rows["judge"], use_na_sentinel=False)
    counts = pd.DataFrame({"col": pd.factorize(rows["col"], use_na_sentinel=False)[0]}).groupby(codes, sort=False).nunique()
    assert list(counts["col"]) == list(expected)
