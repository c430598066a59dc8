"""Label budgets: the classical budget is the textbook formula, projections match the intervals corrected_mean
actually gives, an unreachable target is NaN with a note, bad input is one sentence."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import special

from judgelab.stats import CorrectionError, corrected_mean, label_budget, projected_width
from tests.stats.judged_tables import judge_and_human


def _pilot(seed: int = 0, n_items: int = 3000, n_gold: int = 100, binary: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    if binary:
        truth = (rng.random(n_items) < 0.4).astype(float)
        judged = np.where(truth == 1, rng.random(n_items) < 0.9, rng.random(n_items) > 0.9).astype(float)
    else:
        truth = rng.normal(3, 1, n_items)
        judged = truth + rng.normal(0.2, 0.5, n_items)
    return judge_and_human(judged, truth, n_gold)


def test_classical_budget_is_the_textbook_formula() -> None:
    pilot = _pilot()
    gold = pilot[pilot["judge"] == "human"]["score"].astype(float).to_numpy()
    out = label_budget(pilot, judge="judge", gold="human", target_width=0.2, method="classical")
    z = float(special.ndtri(0.975))
    assert out["estimate"].iloc[0] == math.ceil((2 * z * gold.std(ddof=1) / 0.2) ** 2)
    assert out["width_at_n"].iloc[0] <= 0.2


def test_a_good_judge_needs_fewer_labels_and_projections_match_real_intervals() -> None:
    pilot = _pilot()
    need = label_budget(pilot, judge="judge", gold="human", target_width=0.15,
                        method=["classical", "ppi", "ppi++", "calibrated"]).set_index("estimator")
    assert need.loc["ppi++", "estimate"] < need.loc["classical", "estimate"] / 2
    # the projected width at the pilot's own n equals the interval corrected_mean gives on the pilot (ppi++ within
    # the ddof=0 vs ddof=1 difference of the variance estimates)
    proj = projected_width(pilot, judge="judge", gold="human", n_labels=[100], method=["classical", "ppi++"])
    real = corrected_mean(pilot, judge="judge", gold="human", method=["classical", "ppi++"])
    for m in ("classical", "ppi++"):
        width = real.loc[real["estimator"] == m, ["ci_low", "ci_high"]].diff(axis=1).iloc[0, 1]
        assert proj.loc[proj["estimator"] == m, "estimate"].iloc[0] == pytest.approx(width, rel=0.02)
    widths = projected_width(pilot, judge="judge", gold="human", n_labels=[50, 100, 400], method="classical")
    assert widths["estimate"].is_monotonic_decreasing


def test_clustered_pilot_projects_its_cluster_robust_interval_and_says_the_design_effect_is_held() -> None:
    rng = np.random.default_rng(3)
    n_clusters, size = 300, 10
    shared = np.repeat(rng.normal(0, 1, n_clusters), size)  # items of a cluster share a level
    truth = 3 + shared + rng.normal(0, 1, n_clusters * size)
    pilot = judge_and_human(truth + rng.normal(0.2, 0.5, len(truth)), truth, 100)  # gold: the first 10 clusters
    cluster = {f"i{i}": f"c{i // size}" for i in range(len(truth))}
    proj = projected_width(pilot, judge="judge", gold="human", n_labels=[100, 400], method=["classical", "ppi++"],
                           cluster=cluster).set_index(["estimator", "n_labels"])
    plain = projected_width(pilot, judge="judge", gold="human", n_labels=[100], method=["classical", "ppi++"])
    real = corrected_mean(pilot, judge="judge", gold="human", method=["classical", "ppi++"], cluster=cluster)
    for m in ("classical", "ppi++"):
        # at the pilot's n the projection is the cluster-robust interval corrected_mean gives (z vs t(299 df))
        width = real.loc[real["estimator"] == m, ["ci_low", "ci_high"]].diff(axis=1).iloc[0, 1]
        assert proj.loc[(m, 100), "estimate"] == pytest.approx(width, rel=0.02)
        # clusters of 10 labels with a shared level: a design effect well above 1, applied at every n
        deff = proj.loc[(m, 100), "design_effect"]
        assert deff > 1.5 and proj.loc[(m, 400), "design_effect"] == deff
        assert proj.loc[(m, 100), "estimate"] == pytest.approx(
            plain.loc[plain["estimator"] == m, "estimate"].iloc[0] * math.sqrt(deff), rel=1e-9)
    note = proj["note"].iloc[0]
    assert "design effect held at the pilot's (10 labels per cluster, size-weighted, over 10 labelled" in note
    assert "optimistic" in note and (proj["note"] == note).all()
    assert (plain["note"] == "").all()  # no clusters: nothing held, nothing said
    need = label_budget(pilot, judge="judge", gold="human", target_width=0.3, method="ppi++", cluster=cluster)
    assert need["estimate"].iloc[0] > label_budget(pilot, judge="judge", gold="human", target_width=0.3,
                                                   method="ppi++")["estimate"].iloc[0]
    assert "design effect held" in need["note"].iloc[0]


def test_unreachable_target_is_nan_with_a_note() -> None:
    pilot = _pilot(n_items=300, n_gold=60, binary=True)
    out = label_budget(pilot, judge="judge", gold="human", target_width=0.01,
                       method=["classical", "rogan_gladen"]).set_index("estimator")
    assert np.isnan(out.loc["rogan_gladen", "estimate"]) and "unreachable" in out.loc["rogan_gladen", "note"]


def test_bad_input() -> None:
    pilot = _pilot(n_items=200, n_gold=5)
    with pytest.raises(CorrectionError, match="at least 10"):
        label_budget(pilot, judge="judge", gold="human", target_width=0.1)
    with pytest.raises(CorrectionError, match="target_width must be positive"):
        label_budget(_pilot(n_items=200), judge="judge", gold="human", target_width=0)
    with pytest.raises(CorrectionError, match="nothing unlabelled"):
        label_budget(_pilot(n_items=100, n_gold=100), judge="judge", gold="human", target_width=0.1)
    with pytest.raises(CorrectionError, match="n_labels must be between"):
        projected_width(_pilot(n_items=200), judge="judge", gold="human", n_labels=[500])
