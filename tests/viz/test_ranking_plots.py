"""Ranking and reliability figures draw exactly what the ranking frames say, and refuse frames holding several.

Frames come from the real statistics (rank_systems, rank_by_score, win_rate_matrix) on seeded tournaments with
known strengths; the invariants: the leaderboard lists systems in the frame's rank order with each point at its
estimate and the label "#rank (low–high)"; each heatmap cell is its win rate; each bump line passes through the
system's rank under every judge; each reliability point sits at (estimated, actual). A frame with two rankings
(two judges or criteria) is refused naming the column that splits them, never overplotted.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from scipy import special

from judgelab.stats import rank_by_score, rank_systems, win_rate_matrix
from judgelab.viz.intervals import PlotInputError
from judgelab.viz.ranking_plots import (
    plot_judge_reliability,
    plot_leaderboard,
    plot_ranking_by_judge,
    plot_win_rate_heatmap,
)

SYSTEMS = [f"sys{k}" for k in range(10)]


def battles(seed: int, k: int, judges: tuple[str, ...] = ("j1",)) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 1, k)
    rows = []
    for judge in judges:
        noise = rng.normal(0, 0.3, k)
        for prompt in range(40):
            for i in range(k):
                for j in range(i + 1, k):
                    p = special.expit(strength[i] + noise[i] - strength[j] - noise[j])
                    rows.append({"model_a": SYSTEMS[i], "model_b": SYSTEMS[j], "prompt": prompt, "judge": judge,
                                 "winner": "A" if rng.random() < p else "B"})
    return pd.DataFrame(rows)


@pytest.fixture(autouse=True)
def _close() -> None:
    yield
    plt.close("all")


@pytest.mark.parametrize(("seed", "k"), [(0, 3), (1, 6), (2, 10)])
def test_leaderboard_draws_the_frames_order_points_and_rank_intervals(seed: int, k: int) -> None:
    """Invariant: rows in rank order, each point at its estimate, each label its rank and rank interval."""
    ranking = rank_systems(battles(seed, k), cluster="prompt", n_resamples=100, seed=seed)
    ax = plot_leaderboard(ranking)
    coef = ranking[ranking["metric"] == "bt_coefficient"].sort_values("rank", kind="stable")
    assert [t.get_text() for t in ax.get_yticklabels()] == coef["system"].tolist()
    xs = np.concatenate([line.get_xdata() for line in ax.lines if line.get_marker() == "o"])
    np.testing.assert_allclose(np.sort(xs), np.sort(coef["estimate"].to_numpy(float)))
    labels = [t.get_text() for t in ax.texts if t.get_text().startswith("#")]
    assert labels == [f"#{r} ({lo}–{hi})" for r, lo, hi in coef[["rank", "rank_low", "rank_high"]].to_numpy(int)]
    scores = pd.DataFrame({"system": np.repeat(SYSTEMS[:k], 20), "score": np.tile(np.arange(20), k)
                           + np.repeat(np.arange(k), 20)})
    ax2 = plot_leaderboard(rank_by_score(scores, n_resamples=100))
    assert [t.get_text() for t in ax2.get_yticklabels()][0] == SYSTEMS[k - 1]


def test_win_rate_heatmap_cells_are_the_win_rates() -> None:
    """Invariant: cell (row, column) holds the row system's win rate against the column system."""
    rates = win_rate_matrix(battles(4, 5), cluster="prompt", n_resamples=100)
    ax = plot_win_rate_heatmap(rates)
    rows = [t.get_text() for t in ax.get_yticklabels()]
    cols = [t.get_text() for t in ax.get_xticklabels()]
    data = ax.collections[0].get_array().reshape(len(rows), len(cols))
    for r in rates.itertuples():
        assert data[rows.index(r.system), cols.index(r.opponent)] == pytest.approx(r.estimate)
    means = rates.groupby("system")["estimate"].mean()
    assert rows == means.sort_values(ascending=False, kind="stable").index.tolist()
    with pytest.raises(PlotInputError, match="order= must list each system"):
        plot_win_rate_heatmap(rates, order=rows[:-1])


def test_bump_chart_passes_through_every_judges_ranks() -> None:
    """Invariant: each system's line has its rank under each judge, judges left to right in the frame's order."""
    ranked = rank_systems(battles(5, 6, ("first", "second", "third")), cluster="prompt", by="judge",
                          n_resamples=100)
    ax = plot_ranking_by_judge(ranked)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["first", "second", "third"]
    coef = ranked[ranked["metric"] == "bt_coefficient"]
    expected = {s: part.set_index("judge").loc[["first", "second", "third"], "rank"].to_numpy(float).tolist()
                for s, part in coef.groupby("system")}
    lines = sorted((list(line.get_ydata()) for line in ax.lines), key=str)
    assert lines == sorted(expected.values(), key=str)
    with pytest.raises(PlotInputError, match="order= names"):
        plot_ranking_by_judge(ranked, order=["first", "fourth"])


def test_a_frame_with_several_rankings_is_refused_naming_the_split() -> None:
    """Invariant: two judges' rankings in one leaderboard or heatmap are refused, naming 'judge'."""
    both = battles(6, 4, ("j1", "j2"))
    ranked = rank_systems(both, cluster="prompt", by="judge", n_resamples=100)
    with pytest.raises(PlotInputError, match="'judge'"):
        plot_leaderboard(ranked)
    rates = pd.concat([win_rate_matrix(part, n_resamples=100).assign(judge=j) for j, part in both.groupby("judge")])
    with pytest.raises(PlotInputError, match="'judge'"):
        plot_win_rate_heatmap(rates)
    with pytest.raises(PlotInputError, match="metric 'nope'"):
        plot_leaderboard(ranked[ranked["judge"] == "j1"], metric="nope")
    with pytest.raises(PlotInputError, match="needs columns"):
        plot_leaderboard(ranked.drop(columns="rank_low"))


def latent_frame(methods: tuple[str, ...] = ("dawid_skene", "one_coin")) -> pd.DataFrame:
    rows = []
    for m, method in enumerate(methods):
        for k, judge in enumerate(["g", "h", "i"]):
            est = 0.7 + 0.05 * k + 0.01 * m
            rows.append({"metric": "accuracy", "judge": judge, "method": method, "estimate": est,
                         "ci_low": est - 0.02, "ci_high": est + 0.02})
            rows.append({"metric": "actual_accuracy", "judge": judge, "method": "agreement with 'gold'",
                         "estimate": 0.6 + 0.1 * k, "ci_low": 0.55 + 0.1 * k, "ci_high": 0.65 + 0.1 * k})
    return pd.DataFrame(rows)


def test_reliability_points_sit_at_estimated_and_actual_accuracy() -> None:
    """Invariant: one point per judge and method at (estimated, actual); no gold rows -> refused."""
    frame = latent_frame()
    ax = plot_judge_reliability(frame)
    points = sorted((round(float(x), 6), round(float(y), 6)) for line in ax.lines[:-1] if line.get_marker() == "o"
                    for x, y in zip(line.get_xdata(), line.get_ydata(), strict=True))
    est = frame[frame["metric"] == "accuracy"]
    act = frame[frame["metric"] == "actual_accuracy"].drop_duplicates("judge").set_index("judge")["estimate"]
    assert points == sorted((round(e, 6), round(float(act[j]), 6)) for e, j in zip(est["estimate"], est["judge"],
                                                                                    strict=True))
    with pytest.raises(PlotInputError, match="actual_accuracy"):
        plot_judge_reliability(frame[frame["metric"] == "accuracy"])
    clash = pd.concat([frame, frame.assign(estimate=frame["estimate"] - 0.1)])
    with pytest.raises(PlotInputError, match="one question|different actual"):
        plot_judge_reliability(clash)
