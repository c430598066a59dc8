"""position.analyze's bootstrap of a mean over few distinct values (issue 28) against stats.bootstrap_ci's mean.

Seeded generated points (0 / 0.5 / 1 win points and a few stated confidences); each test states its invariant.
"""

from __future__ import annotations

import numpy as np
import pytest

from judgelab import stats
from judgelab.probes.position import _mean_ci
from judgelab.stats.bootstrap import TableStatistic, mean_statistic


@pytest.mark.parametrize("seed", range(3))
def test_table_mean_equals_row_mean_on_the_same_resamples(seed: int) -> None:
    """Invariant: the mean from value counts equals the mean of the drawn rows on every resample of the same
    index matrices (1e-12): the table statistic is the same function of a resample."""
    rng = np.random.default_rng(seed)
    points = rng.choice([0.0, 0.5, 1.0], size=int(rng.integers(50, 3000)), p=[0.4, 0.2, 0.4])
    distinct, codes = np.unique(points, return_inverse=True)
    table = TableStatistic(codes.ravel(), len(distinct), lambda counts: counts @ distinct / counts.sum(axis=1))
    idx = rng.integers(0, len(points), size=(40, len(points)))
    np.testing.assert_allclose(table(idx), mean_statistic(points)(idx), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("values", [[0.0, 0.5, 1.0], [0.5, 0.6, 0.8, 0.9, 1.0]])
def test_table_mean_ci_matches_row_bootstrap(values: list[float]) -> None:
    """Invariant: multinomial counts over the distinct values draw from the same distribution as drawing rows:
    with 4,000 resamples each the percentile bounds agree within 0.25 bootstrap standard errors, and the
    interval is the percentile interval the method names."""
    rng = np.random.default_rng(7)
    points = rng.choice(values, size=2000)
    fast = _mean_ci(points, n_resamples=4000, seed=1)
    slow = stats.bootstrap_ci(points, statistic="mean", n_resamples=4000, seed=1).iloc[0]
    se = points.std(ddof=1) / np.sqrt(len(points))
    assert abs(fast["ci_low"] - slow["ci_low"]) < 0.25 * se
    assert abs(fast["ci_high"] - slow["ci_high"]) < 0.25 * se
    assert fast["ci_low"] < points.mean() < fast["ci_high"]
    assert fast["method"] == slow["method"]


def test_continuous_values_keep_the_row_bootstrap() -> None:
    """Invariant: with mostly distinct values the row bootstrap is used: the same interval as bootstrap_ci."""
    points = np.random.default_rng(3).random(300)
    fast = _mean_ci(points, n_resamples=500, seed=2)
    slow = stats.bootstrap_ci(points, statistic="mean", n_resamples=500, seed=2).iloc[0]
    assert (fast["ci_low"], fast["ci_high"]) == (slow["ci_low"], slow["ci_high"])
