"""Edges found against R: McNemar with no discordant pair, BCa's tie convention, exact rank-correlation p-values."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats
from statsmodels.stats.contingency_tables import mcnemar

from judgelab.stats import bootstrap, kendall, mcnemar_test, mean_statistic, spearman
from judgelab.stats.bootstrap import TableStatistic

binary = st.lists(st.booleans(), min_size=1, max_size=60)


@settings(max_examples=60, deadline=None)
@given(binary, st.sampled_from([True, False, None]))
def test_mcnemar_without_discordant_pairs_gives_p_one(before: list[bool], exact: bool | None) -> None:
    """Invariant: when nothing changed (after == before) the p-value is 1, exact or chi-square -- never 0 -- and the
    chi-square statistic is NaN, never inf; statsmodels' exact test agrees (p = 1)."""
    out = mcnemar_test(before, before, exact=exact).iloc[0]
    assert out["p_value"] == 1.0 and out["estimate"] == 0.0
    assert math.isnan(out["ci_low"]) and "no discordant item" in out["note"]
    table = [[sum(before), 0], [0, len(before) - sum(before)]]
    assert mcnemar(table, exact=True).pvalue == 1.0
    if exact is False:
        assert math.isnan(out["statistic"])
    else:
        assert out["statistic"] == 0.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=2, max_size=80), st.booleans(), st.booleans())
def test_mcnemar_with_discordant_pairs_matches_statsmodels(pairs: list[tuple[bool, bool]], exact: bool,
                                                           correction: bool) -> None:
    """Invariant: with at least one discordant pair, p and the statistic are statsmodels' mcnemar, exact or
    chi-square, corrected or not."""
    before = np.array([p[0] for p in pairs])
    after = np.array([p[1] for p in pairs])
    if not (before != after).any():
        after[0] = not after[0]
    out = mcnemar_test(before, after, exact=exact, correction=correction).iloc[0]
    table = [[np.sum(before & after), np.sum(before & ~after)], [np.sum(~before & after), np.sum(~before & ~after)]]
    ref = mcnemar(table, exact=exact, correction=correction)
    assert out["p_value"] == pytest.approx(ref.pvalue, abs=1e-12)
    assert out["statistic"] == pytest.approx(ref.statistic, abs=1e-12)
    assert 0 < out["p_value"] <= 1


def test_bca_counts_resamples_equal_to_the_estimate_as_half_below() -> None:
    """The BCa bias correction is z0 = Phi^-1((#below + #equal / 2) / B), as the method string says; recomputed by
    hand from the replicates and the jackknife, the interval matches (a share of 15 binary values: many ties)."""
    rng = np.random.default_rng(2)
    x = rng.integers(0, 2, 15).astype(float)
    result = bootstrap(lambda idx: x[idx].mean(axis=1), 15, n_resamples=2000, interval="bca", seed=4)
    assert "bias correction counts resamples equal to the estimate as half below" in result.method
    dist = result.distribution
    equal = np.sum(dist == result.estimate)
    assert equal > 200  # the tie convention matters here
    z0 = special.ndtri((np.sum(dist < result.estimate) + 0.5 * equal) / len(dist))
    jack = np.array([np.delete(x, i).mean() for i in range(15)])
    d = jack.mean() - jack
    accel = np.sum(d**3) / (6 * np.sum(d**2) ** 1.5)
    z = special.ndtri([0.025, 0.975])
    probs = special.ndtr(z0 + (z0 + z) / (1 - accel * (z0 + z)))
    assert [result.ci_low, result.ci_high] == pytest.approx(list(np.quantile(dist, probs)), abs=1e-12)


def test_bca_method_string_on_the_table_path_too() -> None:
    cells = np.repeat([0, 1], [10, 20])
    stat = TableStatistic(cells, 2, lambda counts: counts[:, 1] / counts.sum(axis=1))
    assert "half below" in bootstrap(stat, 30, n_resamples=200, interval="bca").method
    assert "half below" not in bootstrap(mean_statistic(cells), 30, n_resamples=200).method


untied_pair = st.integers(3, 60).flatmap(lambda n: st.tuples(
    st.permutations(list(range(n))), st.permutations(list(range(n)))))


def _spearman_statistic(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    ra = np.argsort(np.argsort(a, axis=axis), axis=axis).astype(float)
    rb = np.argsort(np.argsort(b, axis=axis), axis=axis).astype(float)
    ra -= ra.mean(axis=axis, keepdims=True)
    rb -= rb.mean(axis=axis, keepdims=True)
    return (ra * rb).sum(axis=axis) / np.sqrt((ra * ra).sum(axis=axis) * (rb * rb).sum(axis=axis))


@settings(max_examples=60, deadline=None)
@given(untied_pair, st.sampled_from(["two-sided", "greater", "less"]))
def test_kendall_is_exact_below_50_untied_pairs(pair: tuple[list[int], list[int]], alternative: str) -> None:
    """Invariant: without ties Kendall's p is scipy's exact one for n < 50 and its asymptotic one from 50 on (R's
    cor.test rule), to 1e-12, and the method string says which."""
    x, y = (np.array(v, dtype=float) for v in pair)
    tau = kendall(x, y, alternative=alternative, n_resamples=20).iloc[0]
    which = "exact" if len(x) < 50 else "asymptotic"
    ref = stats.kendalltau(x, y, method=which, alternative=alternative)
    assert tau["p_value"] == pytest.approx(ref.pvalue, abs=1e-12) and f"p {which}" in tau["method"]


@settings(max_examples=20, deadline=None)
@given(st.integers(3, 5).flatmap(lambda n: st.tuples(st.permutations(list(range(n))),
                                                      st.permutations(list(range(n))))),
       st.sampled_from(["two-sided", "greater", "less"]))
def test_spearman_exact_p_is_scipys_permutation_test(pair: tuple[list[int], list[int]], alternative: str) -> None:
    """Invariant: for small untied samples Spearman's p is scipy.stats.permutation_test over all n! pairings, to 1e-12
    (scipy enumerates slowly, so n <= 5 here; 7 to 9 are checked against a plain enumeration below)."""
    x, y = (np.array(v, dtype=float) for v in pair)
    rho = spearman(x, y, alternative=alternative, n_resamples=20).iloc[0]
    ref = stats.permutation_test((x, y), _spearman_statistic, permutation_type="pairings", vectorized=True,
                                 n_resamples=np.inf, alternative=alternative)
    assert rho["p_value"] == pytest.approx(ref.pvalue, abs=1e-12) and "p exact" in rho["method"]


@pytest.mark.parametrize("n", [7, 8, 9, 10])
def test_spearman_exact_up_to_nine_then_asymptotic(n: int) -> None:
    """Up to n = 9 (R's AS 89 enumeration) the p-value is the share of all n! rank pairings whose rho is at least as
    extreme (twice the smaller tail), enumerated here directly; from n = 10 it is scipy's t approximation."""
    rng = np.random.default_rng(n)
    x = rng.permutation(n).astype(float)
    y = x + rng.normal(0, 2.5, n)
    rho = spearman(x, y, n_resamples=20).iloc[0]
    if n > 9:
        assert rho["p_value"] == pytest.approx(stats.spearmanr(x, y).pvalue, abs=1e-12)
        assert "p asymptotic" in rho["method"]
        return
    pairings = np.array(list(itertools.permutations(range(n))), dtype=float)
    ranks_x = np.argsort(np.argsort(x)).astype(float)
    every = _spearman_statistic(np.broadcast_to(ranks_x, pairings.shape), pairings)
    observed = stats.spearmanr(x, y).statistic
    tol = 1e-12
    greater, less = np.mean(every >= observed - tol), np.mean(every <= observed + tol)
    assert rho["p_value"] == pytest.approx(min(1.0, 2 * min(greater, less)), abs=1e-12)
    assert "p exact" in rho["method"]


def test_ties_or_large_samples_use_the_asymptotic_p_value_and_say_so() -> None:
    rng = np.random.default_rng(8)
    tied_x = rng.integers(1, 6, 20).astype(float)
    tied_y = tied_x + rng.integers(-1, 2, 20)
    tau = kendall(tied_x, tied_y, n_resamples=20).iloc[0]
    assert "p asymptotic" in tau["method"]
    assert tau["p_value"] == pytest.approx(stats.kendalltau(tied_x, tied_y).pvalue, abs=1e-12)
    x = rng.permutation(60).astype(float)
    y = x + rng.normal(0, 20, 60)
    tau = kendall(x, y, n_resamples=20).iloc[0]
    assert "p asymptotic" in tau["method"]
    assert tau["p_value"] == pytest.approx(stats.kendalltau(x, y, method="asymptotic").pvalue, abs=1e-12)
    rho = spearman(tied_x[:8], tied_y[:8], n_resamples=20).iloc[0]
    assert "p asymptotic" in rho["method"]
