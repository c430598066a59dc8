"""What to label next: the strategies' draws, the weighted corrected mean, and coverage by seeded simulation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgelab import stats
from judgelab.judgments import make_table
from judgelab.labels.simulation import selection_coverage
from judgelab.stats.corrected.ppi import CorrectionError
from judgelab.stats.selection import inclusion_probabilities, systematic_sample


def _table(n: int = 120, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    confidence = rng.uniform(0.5, 1.0, n)
    y = rng.binomial(1, 0.4, n).astype(float)
    f = np.where(rng.random(n) < confidence, y, 1 - y)
    base = {"rubric": "r", "criterion": "pass", "condition": "original"}
    rows = [{**base, "item_id": f"i{k}", "judge": "judge", "score": f[k], "confidence": confidence[k]} for k in range(n)]
    rows += [{**base, "item_id": f"i{k}", "judge": "other", "score": 1 - f[k] if k % 5 == 0 else f[k]}
             for k in range(n)]
    return make_table(rows), y


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 5), min_size=2, max_size=60), st.data())
def test_inclusion_probabilities_are_positive_capped_and_sum_to_the_budget(u: list[float], data: st.DataObject) -> None:
    """Invariant: for any non-negative uncertainties and budget, every π is in (0, 1], they sum to the budget, a
    more uncertain item never has a smaller π, and the systematic draw takes exactly `budget` distinct items."""
    budget = data.draw(st.integers(1, len(u)))
    pi = inclusion_probabilities(np.array(u), budget)
    assert np.all(pi > 0) and np.all(pi <= 1 + 1e-12) and pi.sum() == pytest.approx(budget)
    order = np.argsort(u, kind="stable")
    assert np.all(np.diff(pi[order]) >= -1e-12)
    chosen = systematic_sample(pi, np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))))
    assert len(chosen) == len(set(chosen)) == budget


def test_systematic_draws_hit_each_item_with_its_probability() -> None:
    """Invariant: over many seeded draws each item's frequency matches its π (binomial 4.5-sigma band)."""
    pi = inclusion_probabilities(np.linspace(0, 1, 20) ** 2, 6)
    rng = np.random.default_rng(0)
    draws = 4000
    counts = np.zeros(20)
    for _ in range(draws):
        counts[systematic_sample(pi, rng)] += 1
    assert np.all(np.abs(counts / draws - pi) <= 4.5 * np.sqrt(pi * (1 - pi) / draws) + 1e-9)


@pytest.mark.parametrize("strategy", ["random", "stratified", "active", "disagreement"])
def test_each_strategy_returns_the_budget_with_probabilities_and_is_seeded(strategy: str) -> None:
    table, _ = _table()
    sel = stats.select_for_labelling(table, judge="judge", budget=30, strategy=strategy, seed=4)
    assert len(sel) == sel["item_id"].nunique() == 30 and list(sel["position"]) == list(range(30))
    assert set(sel["strategy"]) == {strategy} and sel["inclusion_probability"].between(0, 1, "right").all()
    again = stats.select_for_labelling(table, judge="judge", budget=30, strategy=strategy, seed=4)
    pd.testing.assert_frame_equal(sel, again)
    if strategy == "random":
        assert np.allclose(sel["inclusion_probability"], 30 / 120)
    if strategy == "disagreement":  # the items where the other rater disagrees (every fifth) come first
        assert set(sel["item_id"][:24]) == {f"i{k}" for k in range(0, 120, 5)}


def test_selection_refusals() -> None:
    table, _ = _table()
    for kwargs, needle in (({"budget": 0}, "budget must be between"), ({"budget": 500}, "budget must be between"),
                           ({"budget": 10, "strategy": "best"}, "unknown strategy"),
                           ({"budget": 3, "strategy": "stratified"}, "at least 4"),
                           ({"budget": 10, "strategy": "active", "uncertainty": "nope"}, "not a column")):
        with pytest.raises(CorrectionError, match=needle):
            stats.select_for_labelling(table, judge="judge", **kwargs)
    with pytest.raises(CorrectionError, match="needs the judge's uncertainty"):
        stats.select_for_labelling(table.drop(columns="confidence"), judge="judge", budget=10, strategy="active")
    with pytest.raises(CorrectionError, match="several rows for item"):
        stats.select_for_labelling(pd.concat([table, table]), judge="judge", budget=10)


def _labelled(table: pd.DataFrame, y: np.ndarray, selection: pd.DataFrame) -> pd.DataFrame:
    gold = make_table([{"item_id": i, "judge": "gold", "rubric": "r", "criterion": "pass", "condition": "original",
                        "score": y[int(i[1:])]} for i in selection["item_id"]])
    return pd.concat([table[table["judge"] == "judge"], gold], ignore_index=True)


def test_weighted_corrected_mean_reads_the_selection_and_refuses_disagreement() -> None:
    table, y = _table()
    active = stats.select_for_labelling(table, judge="judge", budget=40, strategy="active", seed=1)
    out = stats.corrected_mean(_labelled(table, y, active), judge="judge", gold="gold", weights=active,
                               method=["classical", "ppi", "ppi++"])
    means = out[out["metric"] == "mean"]
    assert means["method"].str.contains("Zrnic & Candès").all() and (means["n_labelled"] == 40).all()
    # classical with weights is the weighted (Hájek) mean of the labels: Σ y/π / Σ 1/π over the labelled items
    pi = active.set_index("item_id")["inclusion_probability"]
    hajek = sum(y[int(i[1:])] / p for i, p in pi.items()) / sum(1 / p for p in pi)
    assert means.set_index("estimator").loc["classical", "estimate"] == pytest.approx(hajek)
    review = stats.select_for_labelling(table, judge="judge", budget=40, strategy="disagreement")
    with pytest.raises(CorrectionError, match="'disagreement' selection picks items for review"):
        stats.corrected_mean(_labelled(table, y, review), judge="judge", gold="gold", weights=review)
    with pytest.raises(CorrectionError, match="no inclusion probability"):
        stats.corrected_mean(_labelled(table, y, active), judge="judge", gold="gold", weights=dict(list(pi.items())[:5]))
    with pytest.raises(CorrectionError, match="with weights="):
        stats.corrected_mean(_labelled(table, y, active), judge="judge", gold="gold", weights=active,
                             method="calibrated")


def test_equal_probabilities_give_ppi_with_the_judge_mean_over_all_items() -> None:
    """Invariant: with every π equal, the weighted estimate is PPI's, the judge's mean taken over all items, and its
    variance PPI's (ddof 0): the weights change nothing but the weighting."""
    rng = np.random.default_rng(5)
    f = rng.integers(1, 6, 300).astype(float)
    y = np.clip(f + rng.integers(-1, 2, 300), 1, 5)
    g = np.where(rng.random(300) < 0.15, y, np.nan)
    lab = ~np.isnan(g)
    out = stats.corrected_mean(judge=f, gold=g, method="ppi", weights=np.full(300, 0.15))
    row = out[out["metric"] == "mean"].iloc[0]
    assert row["estimate"] == pytest.approx(f.mean() + np.mean(y[lab] - f[lab]))
    assert row["std_error"] ** 2 == pytest.approx(np.var(y[lab] - f[lab]) / lab.sum() + np.var(f) / 300)


def test_the_unweighted_path_gives_the_numbers_it_gave_before_weights() -> None:
    """The estimates and lower bounds of corrected_mean(method="all") on a seeded data set, plain, stratified and
    clustered, as the code before ``weights=`` computed them (run at main's 02e3233 and pinned here)."""
    rng = np.random.default_rng(7)
    n = 200
    y = rng.integers(1, 6, n).astype(float)
    f = np.clip(y + rng.normal(0, 1, n).round(), 1, 5)
    g = np.where(rng.random(n) < 0.2, y, np.nan)
    strata = rng.integers(0, 2, n)
    pinned = [
        [0.766233766234, 0.388888888889, 0.396341463415, 0.393522267526, 0.398615130219, 0.397286483952,
         0.584950694111, 0.229642461436, 0.264203093702, 0.278777411362, 0.213068101388, 0.272958728225],
        [0.766233766234, 0.3874375, 0.395195271536, 0.392407525172, 0.39684276052, 0.396002290891,
         0.584950694111, 0.229961241254, 0.265079128654, 0.280413869918, 0.186628739917, 0.274058655138],
        [0.766233766234, 0.388888888889, 0.396341463415, 0.393522267526, 0.398615130219, 0.391557887642,
         0.584950694111, 0.234466460292, 0.240903375919, 0.274040127498, 0.17058995869, 0.251619141392]]
    for kwargs, expected in zip(({}, {"strata": strata}, {"cluster": rng.integers(0, 30, n)}), pinned, strict=True):
        r = stats.corrected_mean(judge=f, gold=g, method="all", positive=lambda s: s >= 4, **kwargs)
        assert list(r["estimate"]) + list(r["ci_low"]) == pytest.approx(expected, abs=1e-11)


def test_strategies_cover_and_active_is_narrower_in_simulation() -> None:
    """Invariant: over 200 seeded data sets per scale (binary and 1-5, 400 items, 40 labels), every strategy's 95%
    interval holds the true mean at least 88% of the time, and "active" (weighted by 1/π) is narrower than random
    where the judge's uncertainty says where its errors are. A weighting left out or wrong fails the first."""
    cov = selection_coverage(200, seed=11)
    assert (cov["estimate"] >= 0.88).all(), cov[["scale", "strategy", "estimate"]]
    active = cov[cov["strategy"] == "active"]
    assert (active["width_vs_random"] < 0.95).all(), active[["scale", "width_vs_random"]]


@pytest.mark.long
def test_strategies_cover_over_1000_data_sets() -> None:
    """The same over 1,000 seeded data sets per scale: coverage within 0.92-0.995 for random and active."""
    cov = selection_coverage(1000, seed=12)
    unbiased = cov[cov["strategy"].isin(["random", "active"])]
    assert unbiased["estimate"].between(0.92, 0.995).all(), cov[["scale", "strategy", "estimate"]]
    assert (cov.loc[cov["strategy"] == "active", "width_vs_random"] < 0.95).all()
