"""Learn-then-Test thresholds: p-values equal MAPIE's, the fixed sequence stops where it should, and the guarantee
holds by seeded simulation (a test that can fail: coverage of the guarantee within binomial tolerance)."""

from __future__ import annotations

import numpy as np
import pytest
from mapie.risk_control.methods import compute_hoeffding_bentkus_p_value

from judgelab.stats import CorrectionError, ltt_cascade, ltt_threshold
from judgelab.stats.corrected.ltt import binomial_p_value, cascade_decisions, min_kept_for_rejection
from judgelab.studies.corrected_study import ltt_simulation


def test_binomial_p_values_equal_mapie_hoeffding_bentkus_for_a_binary_loss() -> None:
    kept = np.array([30, 80, 150, 400, 1000])
    errors = np.array([0, 5, 12, 50, 95])
    ours = binomial_p_value(errors, kept, 0.1)
    ref = compute_hoeffding_bentkus_p_value(errors / kept, kept, 0.1, binary=True)[:, 0]
    np.testing.assert_allclose(ours, ref, rtol=1e-12)


def test_threshold_is_the_last_rejection_of_the_fixed_sequence() -> None:
    rng = np.random.default_rng(0)
    conf = rng.random(800)
    correct = rng.random(800) < 0.5 + 0.5 * conf
    res = ltt_threshold(conf, correct, alpha=0.1, delta=0.1)
    tested = res.hypotheses
    assert tested["rejected"].iloc[:-1].all() and not tested["rejected"].iloc[-1]  # stopped at the first failure
    assert res.threshold == tested.loc[tested["rejected"], "threshold"].min()
    assert tested["threshold"].is_monotonic_decreasing
    assert tested["n_kept"].iloc[0] >= min_kept_for_rejection(0.1, 0.1)  # starts where a rejection is possible
    keep = conf >= res.threshold
    assert res.n_kept == keep.sum() and res.risk == pytest.approx(1 - correct[keep].mean())
    assert 0.1 < res.coverage < 0.7  # true risk 0.25·(1 − λ) <= 0.1 needs λ >= 0.6: some, not all, kept


def test_a_hopeless_judge_escalates_everything() -> None:
    rng = np.random.default_rng(1)
    res = ltt_threshold(rng.random(300), rng.random(300) < 0.6, alpha=0.05, delta=0.1)
    assert res.threshold == np.inf and res.n_kept == 0 and np.isnan(res.risk)
    cal = ltt_cascade([rng.random(300)], [rng.random(300) < 0.6], alpha=0.05, delta=0.1)
    assert not cal.certified and cal.to_human == 1.0


def test_cascade_decisions_keep_at_the_first_confident_tier() -> None:
    c1, c2 = np.array([0.9, 0.2, 0.2, np.nan]), np.array([0.1, 0.8, 0.3, 0.95])
    assert cascade_decisions([c1, c2], (0.5, 0.7)).tolist() == [0, 1, -1, 1]


def test_bad_input_is_one_sentence() -> None:
    with pytest.raises(CorrectionError, match="alpha and delta"):
        ltt_threshold([0.5], [True], alpha=0.0, delta=0.1)
    with pytest.raises(CorrectionError, match="0/1"):
        ltt_threshold([0.5, 0.6], [1, 2], alpha=0.1, delta=0.1)
    with pytest.raises(CorrectionError, match="one length"):
        ltt_threshold([0.5, 0.6], [1], alpha=0.1, delta=0.1)


@pytest.mark.slow
def test_the_guarantee_holds_by_simulation() -> None:
    out = ltt_simulation(n_sims=300, n_calibration=400, alpha=0.1, delta=0.1, seed=5)
    for _, row in out.iterrows():
        # P(true risk <= alpha) >= 1 − delta, up to 3 binomial standard errors of 300 draws
        assert row["estimate"] >= 0.9 - 3 * np.sqrt(0.9 * 0.1 / 300), row["setup"]
        assert row["mean_coverage"] > 0.05, row["setup"]  # and it is not vacuous
