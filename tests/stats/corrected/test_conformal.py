"""Split-conformal intervals for judge scores: the quantile equals MAPIE's, coverage holds by simulation and on
SummEval, the ordinal boundary adjustment never loses coverage, bad input is one sentence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judgelab.stats import CorrectionError, conformal_interval
from judgelab.stats.corrected.conformal import conformal_quantile, snap_to_labels
from tests.stats.judged_tables import judge_and_human


def _table(seed: int, n: int = 400, n_gold: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    gold = rng.integers(1, 6, n).astype(float)
    judge = np.clip(np.round(gold + rng.normal(0.3, 0.9, n)), 1, 5)
    return judge_and_human(judge, gold, n_gold)


def test_quantile_equals_mapie_split_conformal() -> None:
    from mapie.regression import SplitConformalRegressor
    from sklearn.dummy import DummyRegressor

    class Identity(DummyRegressor):
        def predict(self, X):  # noqa: N803 - scikit-learn's argument name
            return np.asarray(X)[:, 0]

    rng = np.random.default_rng(0)
    judge, gold = rng.normal(3, 1, 300), rng.normal(3, 1, 300)
    reg = Identity().fit(judge[:, None], gold)
    mapie = SplitConformalRegressor(reg, confidence_level=0.9, prefit=True).conformalize(judge[:, None], gold)
    _, bounds = mapie.predict_interval(np.array([[0.0]]))
    assert conformal_quantile(gold - judge, 0.9) == pytest.approx(float(bounds[0, 1, 0]), abs=1e-12)
    assert conformal_quantile(np.arange(5.0), 0.9) == np.inf  # ⌈6·0.9⌉ = 6 > 5 items


def test_snapping_to_labels_keeps_every_covered_label() -> None:
    grid = np.arange(1, 6)
    low, high = np.array([1.4, 2.6, 0.2]), np.array([3.4, 3.6, 4.49])
    s_low, s_high = snap_to_labels(low, grid), snap_to_labels(high, grid)
    for a, b, c, d in zip(low, high, s_low, s_high, strict=True):
        inside = {g for g in grid if a <= g <= b}
        assert inside <= {g for g in grid if c <= g <= d}


def test_coverage_holds_on_held_out_items_by_simulation() -> None:
    covered = []
    for seed in range(40):
        table = _table(seed, n=400)
        out = conformal_interval(table, judge="judge", gold="human", calibration=[f"i{i}" for i in range(200)],
                                 scale=(1, 5), ci_level=0.8)
        covered.append(out["covered"].mean())
        assert len(out) == 200 and out["n"].iloc[0] == 200
    # marginal coverage >= 0.8; 40 x 200 held-out items (items within a draw share q, so use draws' means)
    assert np.mean(covered) >= 0.8 - 3 * np.std(covered) / np.sqrt(40)


def test_real_summeval_coherence_coverage(data_dir: Path) -> None:
    from judgelab.datasets import summeval

    table = summeval("gpt-3.5-turbo-0301", data_dir=data_dir, criteria=("coherence",)).table
    ids = table["item_id"].unique()
    cal = np.random.default_rng(0).choice(ids, 600, replace=False)
    out = conformal_interval(table, judge="gpt-3.5-turbo-0301", gold="human", calibration=cal, scale=(1, 5),
                             ci_level=0.9)
    assert len(out) == 600 and out["covered"].mean() >= 0.87
    thirds = {round(k / 3, 6) for k in range(3, 16)}  # the experts' mean is a multiple of 1/3
    assert set(np.round(out["ci_low"], 6)) <= thirds and set(np.round(out["ci_high"], 6)) <= thirds


def test_bad_input() -> None:
    table = _table(0, n=50, n_gold=50)
    with pytest.raises(CorrectionError, match="every judged item is a calibration item"):
        conformal_interval(table, judge="judge", gold="human")
    with pytest.raises(CorrectionError, match="none of the calibration items"):
        conformal_interval(table, judge="judge", gold="human", calibration=["nope"])
    out = conformal_interval(_table(0, n=60, n_gold=5), judge="judge", gold="human", ci_level=0.9)
    assert np.isinf(out["quantile"].iloc[0]) and "too few" in out["note"].iloc[0]
