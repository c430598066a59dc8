"""stats.rank_systems / win_rate_matrix / elo_ratings against choix, statsmodels and direct likelihoods.

Tournaments are generated from seeded numpy generators with known strengths: every pair of systems meets
several times, so the comparison graph is connected and (with the strengths used) no system wins every
battle; each test's docstring states the invariant it checks.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from typing import Any

import choix
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, special

from judgelab.errors import JudgelabError
from judgelab.stats import StatsInputError, elo_ratings, rank_systems, win_rate_matrix

NAMES = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]


def tournament(seed: int, k: int = 5, per_pair: int = 12, tie_rate: float = 0.0, spread: float = 0.8,
               len_effect: float = 0.0, n_prompts: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """A seeded tournament: each pair meets ``per_pair`` times in random order and sides; true strengths too."""
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, spread, k)
    pairs = np.array([(i, j) for i in range(k) for j in range(i + 1, k)] * per_pair)
    turn = rng.random(len(pairs)) < 0.5
    a = np.where(turn, pairs[:, 1], pairs[:, 0])
    b = np.where(turn, pairs[:, 0], pairs[:, 1])
    len_diff = rng.normal(0, 1, len(a))
    p_a = special.expit(strength[a] - strength[b] + len_effect * len_diff)
    u = rng.random(len(a))
    decisive = rng.random(len(a)) >= tie_rate
    winner = np.where(~decisive, "tie", np.where(u < p_a, "A", "B"))
    frame = pd.DataFrame({"model_a": [NAMES[i] for i in a], "model_b": [NAMES[i] for i in b], "winner": winner,
                          "len_diff": len_diff})
    if n_prompts:
        frame["prompt"] = rng.integers(0, n_prompts, len(a))
    order = rng.permutation(len(frame))
    return frame.iloc[order].reset_index(drop=True), strength


def coefficients(result: pd.DataFrame, metric: str = "bt_coefficient") -> pd.Series:
    rows = result[result["metric"] == metric]
    return rows.set_index("system")["estimate"].sort_index()


def design(frame: pd.DataFrame, systems: list[str], reference: str) -> pd.DataFrame:
    """+1 in A's column, -1 in B's, the reference's column dropped (its coefficient is 0)."""
    x = pd.DataFrame(0.0, index=frame.index, columns=systems)
    for side, sign in (("model_a", 1.0), ("model_b", -1.0)):
        for s in systems:
            x.loc[frame[side] == s, s] += sign
    return x.drop(columns=[reference])


@pytest.mark.parametrize("seed", range(4))
def test_bradley_terry_equals_choix_and_statsmodels_logit(seed: int) -> None:
    """Invariant: on decisive battles, the sum-zero coefficients equal choix's MLE (ILSR, alpha=0, centred) and
    the reference-identified ones equal statsmodels' Logit on the +1/-1 design, to 1e-6."""
    frame, _ = tournament(seed, k=5, per_pair=8 + seed)
    systems = sorted(NAMES[:5])
    centred = coefficients(rank_systems(frame, n_resamples=2, seed=seed))
    code = {s: i for i, s in enumerate(systems)}
    pairs = [(code[w], code[lo]) for w, lo in np.where(frame[["winner"]] == "A", frame[["model_a", "model_b"]],
                                                       frame[["model_b", "model_a"]])]
    reference_values = choix.ilsr_pairwise(len(systems), pairs, alpha=0.0, max_iter=100_000, tol=1e-13)
    np.testing.assert_allclose(centred.to_numpy(), reference_values - reference_values.mean(), atol=1e-6)
    anchored = coefficients(rank_systems(frame, reference="bravo", n_resamples=2))
    logit = sm.Logit((frame["winner"] == "A").astype(float), design(frame, systems, "bravo")).fit(
        disp=0, method="newton", tol=1e-12, maxiter=100)
    np.testing.assert_allclose(anchored.drop("bravo").to_numpy(), logit.params.sort_index().to_numpy(), atol=1e-6)
    assert anchored["bravo"] == 0.0
    # one model, two identifications: differences are the same
    np.testing.assert_allclose((anchored - anchored.mean()).to_numpy(), centred.to_numpy(), atol=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_ties_as_half_equal_choix_with_each_tie_a_win_both_ways(seed: int) -> None:
    """Invariant: ties="half" maximises the likelihood where a tie is half a win for each side, which is
    choix's likelihood with every decisive battle counted twice and every tie once in each direction."""
    frame, _ = tournament(seed, per_pair=10, tie_rate=0.3)
    systems = sorted(NAMES[:5])
    code = {s: i for i, s in enumerate(systems)}
    pairs = []
    for a, b, w in frame[["model_a", "model_b", "winner"]].itertuples(index=False):
        if w == "tie":
            pairs += [(code[a], code[b]), (code[b], code[a])]
        else:
            pairs += [(code[a], code[b])] * 2 if w == "A" else [(code[b], code[a])] * 2
    expected = choix.ilsr_pairwise(len(systems), pairs, alpha=0.0, max_iter=100_000, tol=1e-13)
    got = coefficients(rank_systems(frame, ties="half", n_resamples=2))
    np.testing.assert_allclose(got.to_numpy(), expected - expected.mean(), atol=1e-6)


def test_davidson_equals_a_direct_maximisation_of_davidsons_likelihood() -> None:
    """Invariant: ties="davidson" maximises Davidson's likelihood, P(i beats j) = p_i / (p_i + p_j + nu sqrt(p_i p_j)),
    P(tie) = nu sqrt(p_i p_j) / (same), written here in the strengths p = e^theta and maximised by BFGS."""
    frame, _ = tournament(5, per_pair=10, tie_rate=0.25)
    systems = sorted(NAMES[:5])
    code = {s: i for i, s in enumerate(systems)}
    a = frame["model_a"].map(code).to_numpy()
    b = frame["model_b"].map(code).to_numpy()
    w = frame["winner"].to_numpy()

    def negative_log_likelihood(params: np.ndarray) -> float:
        theta = np.concatenate([[0.0], params[:-1]])  # alpha (the first system) anchored at 0
        p_a, p_b, nu = np.exp(theta[a]), np.exp(theta[b]), np.exp(params[-1])
        total = p_a + p_b + nu * np.sqrt(p_a * p_b)
        numerator = np.where(w == "A", p_a, np.where(w == "B", p_b, nu * np.sqrt(p_a * p_b)))
        return -float(np.sum(np.log(numerator / total)))

    direct = optimize.minimize(negative_log_likelihood, np.zeros(len(systems)), method="BFGS",
                               options={"gtol": 1e-9})
    got = rank_systems(frame, ties="davidson", reference="alpha", n_resamples=2)
    np.testing.assert_allclose(coefficients(got).drop("alpha").to_numpy(), direct.x[:-1], atol=1e-5)
    nu = got.loc[got["metric"] == "tie_parameter", "estimate"].item()
    assert nu == pytest.approx(np.exp(direct.x[-1]), abs=1e-5)
    # win probability = P(win) + P(tie)/2 against the reference, at the fitted coefficients
    theta = coefficients(got)
    p = coefficients(got, "win_probability")
    d = theta["delta"]
    denominator = np.exp(d / 2) + np.exp(-d / 2) + nu
    assert p["delta"] == pytest.approx((np.exp(d / 2) + nu / 2) / denominator, abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_covariate_coefficients_equal_statsmodels_logit_with_the_covariate(seed: int) -> None:
    """Invariant: with covariates=["len_diff"], the systems' and the covariate's coefficients equal a Logit on the
    +1/-1 design plus the len_diff column, to 1e-6."""
    frame, _ = tournament(seed, per_pair=12, len_effect=0.7)
    systems = sorted(NAMES[:5])
    got = rank_systems(frame, reference="alpha", covariates=["len_diff"], n_resamples=2)
    exog = design(frame, systems, "alpha").assign(len_diff=frame["len_diff"])
    logit = sm.Logit((frame["winner"] == "A").astype(float), exog).fit(disp=0, method="newton", tol=1e-12)
    np.testing.assert_allclose(coefficients(got).drop("alpha").to_numpy(),
                               logit.params.drop("len_diff").sort_index().to_numpy(), atol=1e-6)
    row = got[got["metric"] == "covariate_coefficient"]
    assert row["term"].item() == "len_diff"
    assert row["estimate"].item() == pytest.approx(logit.params["len_diff"], abs=1e-6)


@pytest.mark.parametrize("seed", range(3))
def test_shuffling_battles_and_swapping_sides_leaves_the_result_unchanged(seed: int) -> None:
    """Invariant: the whole result (coefficients, CIs, rank intervals) is the same after the rows are shuffled and a
    random half of the battles have A and B swapped (winner flipped, covariate negated), clustered or not."""
    frame, _ = tournament(seed, per_pair=6, tie_rate=0.2, len_effect=0.3, n_prompts=25)
    rng = np.random.default_rng(100 + seed)
    other = frame.iloc[rng.permutation(len(frame))].reset_index(drop=True)
    swap = rng.random(len(other)) < 0.5
    other.loc[swap, ["model_a", "model_b"]] = other.loc[swap, ["model_b", "model_a"]].to_numpy()
    other.loc[swap, "winner"] = other.loc[swap, "winner"].map({"A": "B", "B": "A", "tie": "tie"})
    other.loc[swap, "len_diff"] = -other.loc[swap, "len_diff"]
    for options in ({"covariates": ["len_diff"]}, {"cluster": "prompt", "ties": "davidson"}):
        first = rank_systems(frame, n_resamples=60, seed=seed, **options)
        second = rank_systems(other, n_resamples=60, seed=seed, **options)
        pd.testing.assert_frame_equal(first, second, rtol=1e-8)
    # Elo reads the order: the same shuffle moves it
    assert not np.allclose(coefficients(elo_ratings(frame), "elo_rating"), coefficients(elo_ratings(other), "elo_rating"))


def test_elo_follows_the_update_rule_in_row_order() -> None:
    """Invariant: each battle moves A by k (score - expected) and B by the opposite, starting from base."""
    frame = pd.DataFrame({"model_a": ["x", "y", "x"], "model_b": ["y", "z", "z"], "winner": ["A", "tie", "B"]})
    got = coefficients(elo_ratings(frame, k=32, scale=400, base=1500), "elo_rating")
    r = {"x": 1500.0, "y": 1500.0, "z": 1500.0}
    for a, b, s in (("x", "y", 1.0), ("y", "z", 0.5), ("x", "z", 0.0)):
        e = 1 / (1 + 10 ** ((r[b] - r[a]) / 400))
        r[a], r[b] = r[a] + 32 * (s - e), r[b] - 32 * (s - e)
    assert got.to_dict() == pytest.approx(r, abs=1e-12)
    assert sum(got) == pytest.approx(4500.0)


def test_win_rate_matrix_is_the_observed_share_with_ties_as_half() -> None:
    """Invariant: estimate = (wins + ties/2) / battles of the ordered pair, the two orders sum to 1, n counts the
    pair's battles, and a pair that never met is a row with n 0 and NaN."""
    frame, _ = tournament(3, k=4, per_pair=5, tie_rate=0.2)
    frame = frame[~((frame["model_a"].isin(["alpha", "bravo"])) & (frame["model_b"].isin(["alpha", "bravo"])))]
    got = win_rate_matrix(frame, n_resamples=50).set_index(["system", "opponent"])
    assert len(got) == 4 * 3
    for (s, o), row in got.iterrows():
        mine = frame[((frame["model_a"] == s) & (frame["model_b"] == o)) | ((frame["model_a"] == o)
                                                                           & (frame["model_b"] == s))]
        score = np.where(mine["winner"] == "tie", 0.5, ((mine["winner"] == "A") == (mine["model_a"] == s)) * 1.0)
        assert row["n"] == len(mine)
        if len(mine):
            assert row["estimate"] == pytest.approx(score.mean(), abs=1e-12)
            assert row["estimate"] + got.loc[(o, s), "estimate"] == pytest.approx(1.0)
            assert row["ci_low"] <= row["estimate"] <= row["ci_high"]
        else:
            assert np.isnan(row["estimate"]) and "never met" in row["note"]


def test_arena_spellings_and_dropped_ties_are_counted() -> None:
    """Invariant: Chatbot Arena's model_a / model_b / tie / 'tie (bothbad)' read as A / B / tie; ties='drop' equals
    fitting the decisive battles alone and reports how many ties it dropped."""
    frame, _ = tournament(2, per_pair=8, tie_rate=0.3)
    arena = frame.assign(winner=frame["winner"].map({"A": "model_a", "B": "model_b"}).fillna("tie (bothbad)"))
    dropped = rank_systems(arena, ties="drop", n_resamples=20)
    decisive = rank_systems(frame[frame["winner"] != "tie"], n_resamples=20)
    pd.testing.assert_series_equal(coefficients(dropped), coefficients(decisive))
    n_ties = int((frame["winner"] == "tie").sum())
    assert (dropped["n_ties_dropped"] == n_ties).all()
    assert dropped["note"].str.contains(f"{n_ties} ties dropped").all()
    pd.testing.assert_frame_equal(rank_systems(arena, n_resamples=20), rank_systems(frame, n_resamples=20))


def _refusal(frame: pd.DataFrame, **options: object) -> str:
    with pytest.raises(StatsInputError) as caught:
        rank_systems(frame, n_resamples=5, **options)
    message = str(caught.value)
    assert message.count(". ") == 0 and "\n" not in message  # one sentence
    return message


def test_refusals_name_the_problem_in_one_sentence() -> None:
    """Invariant: every input that cannot be ranked as given is a StatsInputError naming the system, value or
    column; nothing is dropped silently."""
    frame, _ = tournament(0, k=4, per_pair=4)
    winner_always = frame.copy()
    winner_always.loc[winner_always["model_a"] == "delta", "winner"] = "A"
    winner_always.loc[winner_always["model_b"] == "delta", "winner"] = "B"
    assert "'delta' never loses" in _refusal(winner_always)
    loser_always = frame.copy()
    loser_always.loc[loser_always["model_a"] == "alpha", "winner"] = "B"
    loser_always.loc[loser_always["model_b"] == "alpha", "winner"] = "A"
    assert "System 'alpha' never wins nor ties" in _refusal(loser_always)
    apart = pd.concat([frame[frame["model_a"].isin(["alpha", "bravo"]) & frame["model_b"].isin(["alpha", "bravo"])],
                       frame[frame["model_a"].isin(["charlie", "delta"])
                             & frame["model_b"].isin(["charlie", "delta"])]])
    message = _refusal(apart)
    assert "disconnected" in message and "{'alpha', 'bravo'} | {'charlie', 'delta'}" in message
    unknown = frame.assign(winner=frame["winner"].where(frame.index != 3, "draw"))
    assert "'draw' (1 battles)" in _refusal(unknown)
    missing_winner = frame.assign(winner=frame["winner"].where(frame.index != 3, None))
    assert "<missing>" in _refusal(missing_winner)
    self_battle = frame.copy()
    self_battle.loc[5, "model_b"] = self_battle.loc[5, "model_a"]
    assert "both sides" in _refusal(self_battle)
    no_name = frame.copy()
    no_name.loc[2, "model_a"] = np.nan
    assert "no system name in column 'model_a'" in _refusal(no_name)
    assert "no rows" in _refusal(frame.iloc[:0])
    assert "no column 'judge'" in _refusal(frame, winner="judge")
    assert "'omega' is not one of the systems" in _refusal(frame, reference="omega")
    assert "No battle is a tie" in _refusal(frame, ties="davidson")
    assert "not numeric" in _refusal(frame.assign(len_diff="long"), covariates=["len_diff"])
    all_ties = frame.assign(winner="tie")
    assert "all" in _refusal(all_ties, ties="drop")


def _coverage(n_tournaments: int, n_resamples: int, seed0: int) -> tuple[float, float, float, float]:
    """Rank-interval coverage, coefficient-CI coverage, mean rank-interval width, mean coefficient-CI width."""
    rank_hits, coef_hits, rank_widths, coef_widths = [], [], [], []
    for t in range(n_tournaments):
        frame, strength = tournament(seed0 + t, k=5, per_pair=12, spread=0.6, n_prompts=40)
        got = rank_systems(frame, cluster="prompt", n_resamples=n_resamples, seed=t)
        rows = got[got["metric"] == "bt_coefficient"].set_index("system").loc[NAMES[:5]]
        true = strength - strength.mean()
        true_rank = 1 + (true[None, :] > true[:, None]).sum(axis=1)
        rank_hits += list((rows["rank_low"] <= true_rank) & (true_rank <= rows["rank_high"]))
        rank_widths += list(rows["rank_high"] - rows["rank_low"])
        coef_hits += list((rows["ci_low"] <= true) & (true <= rows["ci_high"]))
        coef_widths += list(rows["ci_high"] - rows["ci_low"])
    return (float(np.mean(rank_hits)), float(np.mean(coef_hits)), float(np.mean(rank_widths)),
            float(np.mean(coef_widths)))


def test_rank_intervals_and_coefficient_intervals_cover_the_truth() -> None:
    """Invariant: over 40 seeded Bradley-Terry tournaments with known strengths (prompts as clusters), the 95% rank
    intervals hold the true rank and the coefficient CIs hold the true centred strength in at least 88% of
    system-tournaments."""
    rank_coverage, coef_coverage, _, _ = _coverage(40, 100, 0)
    assert rank_coverage >= 0.88
    assert 0.88 <= coef_coverage <= 1.0


@pytest.mark.long
@pytest.mark.timeout(3600)  # a long simulation: minutes on an idle machine, more on a shared one
def test_rank_interval_coverage_over_1000_tournaments() -> None:
    """Invariant: as above over 1,000 tournaments and 200 resamples each (about 6 min): rank intervals hold the true
    rank in at least 95% of system-tournaments; coefficient CIs within 4 points of 95% (the percentile interval
    with 40 prompt clusters runs a little short of nominal: it measured 92.6% here). Prints both with the widths."""
    rank_coverage, coef_coverage, rank_width, coef_width = _coverage(1000, 200, 5000)
    print(f"rank intervals: coverage {rank_coverage:.4f}, mean width {rank_width:.3f} ranks; coefficient CIs: "
          f"coverage {coef_coverage:.4f}, mean width {coef_width:.3f}")
    assert rank_coverage >= 0.95
    assert 0.91 <= coef_coverage <= 0.99


def test_resamples_without_a_finite_estimate_are_counted_and_left_out() -> None:
    """Invariant: when a system lost only one battle, the resamples that leave that battle out have no finite MLE;
    they are counted in n_invalid_resamples and the note (never refitted or kept), and the rest give the intervals."""
    frame, _ = tournament(4, k=4, per_pair=6)
    strong = frame.copy()
    strong.loc[strong["model_a"] == "delta", "winner"] = "A"
    strong.loc[strong["model_b"] == "delta", "winner"] = "B"
    lost_once = strong.index[strong["model_a"] == "delta"][0]
    strong.loc[lost_once, "winner"] = "B"
    got = rank_systems(strong, n_resamples=200, seed=1)
    n_invalid = int(got["n_invalid_resamples"].iloc[0])
    # P(one given battle is left out of a resample of n battles) = (1 - 1/n)^n, about 37%
    assert 0.2 * 200 < n_invalid < 0.55 * 200
    assert got["note"].str.contains(f"{n_invalid} of 200 resamples had no finite maximum-likelihood estimate").all()
    assert "never loses nor ties" in got["note"].iloc[0]
    delta = got[(got["metric"] == "bt_coefficient") & (got["system"] == "delta")].iloc[0]
    assert delta["rank"] == 1 and delta["rank_low"] == 1 and np.isfinite(delta["ci_high"])
    assert str(got["rank"].dtype) == "Int64" and got["method"].str.contains("average system").iloc[0]


_JUNK = st.one_of(st.integers(-3, 3), st.floats(allow_nan=True), st.text(max_size=8), st.none(), st.booleans(),
                  st.lists(st.text(max_size=4), max_size=2), st.just(["len_diff"]), st.just("prompt"),
                  st.just(pd.DataFrame({"x": [1.0]})))


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([rank_systems, win_rate_matrix, elo_ratings]), st.data())
def test_junk_in_any_argument_is_a_judgelab_error(func: Callable[..., pd.DataFrame], data: st.DataObject) -> None:
    """Invariant: a valid battles frame with a generated junk value (number, NaN, text, None, list, frame) in any one
    argument either ranks or raises a JudgelabError -- never another exception."""
    frame, _ = tournament(0, k=4, per_pair=4, n_prompts=5)
    names = list(inspect.signature(func).parameters)
    target = data.draw(st.sampled_from(names), label="argument")
    kwargs: dict[str, Any] = {"battles": frame, **({"n_resamples": 5} if "n_resamples" in names else {})}
    kwargs[target] = data.draw(_JUNK, label="value")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            func(**kwargs)
    except JudgelabError:
        pass
