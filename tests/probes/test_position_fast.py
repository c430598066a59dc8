"""position.analyze's bootstrap of a mean over few distinct values (issue 28) against stats.bootstrap_ci's mean.

Seeded generated points (0 / 0.5 / 1 win points and a few stated confidences); each test states its invariant.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgelab import stats
from judgelab.probes.position import _mean_ci, calibrate
from judgelab.rubrics import combine_swapped_passes
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



# ---- calibrate, vectorized, against the row-wise version it replaced (kept here as the reference)

def _old_preference(winner: Any, confidence: Any) -> float:
    """Side A's preference in [0, 1] from one pass: the confidence toward the winner (1 when absent)."""
    if not isinstance(winner, str):
        return math.nan
    conf = 1.0 if confidence is None or pd.isna(confidence) else float(confidence)
    return {"A": 0.5 + conf / 2, "B": 0.5 - conf / 2}.get(winner, 0.5)


def _old_labels(series: pd.Series) -> list[str | None]:
    """Winner labels as str or None (pandas may hold a missing label as NaN or NA)."""
    return [w if isinstance(w, str) else None for w in series]


def _previous_calibrate(pairs: pd.DataFrame, gold_labels: pd.Series | None) -> pd.DataFrame:
    """The row-wise calibrate before the vectorized one (reference)."""
    out = pd.DataFrame(index=pairs.index)
    # plain lists, not iterrows: a row of all-missing values would turn None winners into NaN
    wo, ws = _old_labels(pairs["winner_original"]), _old_labels(pairs["winner_swapped"])
    co, cs = list(pairs["confidence_original"]), list(pairs["confidence_swapped"])
    combined = [combine_swapped_passes({"winner": a, "confidence": ca}, {"winner": b, "confidence": cb})
                for a, ca, b, cb in zip(wo, co, ws, cs, strict=True)]
    out["tie"] = pd.Series([c["winner"] for c in combined], index=pairs.index, dtype=object)
    out["tie_confidence"] = [c["confidence"] for c in combined]
    out["drop"] = pd.Series([a if a is not None and a == b else None for a, b in zip(wo, ws, strict=True)],
                            index=pairs.index, dtype=object)
    out["first"] = pd.Series([a if f == "original" else b for a, b, f in zip(wo, ws, pairs["first_shown"], strict=True)],
                             index=pairs.index, dtype=object)
    pref = [(_old_preference(a, ca) + _old_preference(b, cb)) / 2 for a, ca, b, cb in zip(wo, co, ws, cs, strict=True)]
    out["average_preference_A"] = pref
    out["average"] = pd.Series([None if math.isnan(p) else "A" if p > 0.5 else "B" if p < 0.5 else "TIE" for p in pref],
                               index=pairs.index, dtype=object)
    if gold_labels is not None:
        out["gold"] = gold_labels.reindex(out.index.astype(str)).astype(object)
    return out


_WINNERS = st.one_of(st.sampled_from(["A", "B", "TIE"]), st.none(), st.just(float("nan")), st.just(pd.NA),
                     st.integers(0, 1))
_CONFIDENCES = st.one_of(st.none(), st.floats(0, 1), st.just(float("nan")))


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.tuples(_WINNERS, _WINNERS, _CONFIDENCES, _CONFIDENCES, st.sampled_from(["original", "swapped"])),
                     max_size=30),
       gold=st.booleans(), bad=st.sampled_from([None, "X", "a"]))
def test_calibrate_equals_the_rowwise_version(rows: list, gold: bool, bad: str | None) -> None:
    """Invariant (generated pairs: A/B/TIE, missing winners as None, NaN or NA, non-string winners, stated and
    missing confidences, either order shown first, with and without gold; sometimes a winner that is no
    label): the vectorized calibrate gives the same frame, values and dtypes, as the row-wise version, or the
    same error."""
    pairs = pd.DataFrame(rows, columns=["winner_original", "winner_swapped", "confidence_original",
                                        "confidence_swapped", "first_shown"], index=[f"i{k}" for k in range(len(rows))])
    pairs = pairs.astype({"winner_original": object, "winner_swapped": object, "confidence_original": float,
                          "confidence_swapped": float})
    if bad is not None and len(rows):
        pairs.iloc[len(rows) // 2, len(rows) % 2] = bad
    labels = pd.Series(["A"] * len(rows), index=pairs.index, dtype=object) if gold else None
    try:
        expected = _previous_calibrate(pairs, labels)
    except ValueError as exc:
        with pytest.raises(ValueError) as got:
            calibrate(pairs, labels)
        assert str(got.value) == str(exc)
        return
    pd.testing.assert_frame_equal(calibrate(pairs, labels), expected)
