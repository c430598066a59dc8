"""Correlations against scipy, judgments-table input, and the meta-evaluation levels against hand computations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from judgelab.judgments import make_table
from judgelab.stats import (
    DuplicateRatingsError,
    StatsInputError,
    correlation,
    group_level_correlation,
    kendall,
    meta_evaluation,
    pair_judges,
    pearson,
    per_group_correlations,
    spearman,
    system_level_correlation,
    system_pair_accuracy,
)

FAST = {"n_resamples": 300}


def _tied_scores(seed: int, n: int = 60) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.integers(1, 6, n).astype(float)
    return x, np.clip(x + rng.integers(-2, 3, n), 1, 5)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_estimates_and_p_values_match_scipy_with_ties(seed: int) -> None:
    x, y = _tied_scores(seed)
    checks = [
        (spearman(x, y, **FAST), stats.spearmanr(x, y)),
        (pearson(x, y, **FAST), stats.pearsonr(x, y)),
        (kendall(x, y, **FAST), stats.kendalltau(x, y, variant="b")),
        (kendall(x, y, variant="c", **FAST), stats.kendalltau(x, y, variant="c")),
    ]
    for ours, ref in checks:
        assert ours["estimate"].iloc[0] == pytest.approx(ref.statistic, abs=1e-12)
        assert ours["p_value"].iloc[0] == pytest.approx(ref.pvalue, rel=1e-9)
        assert ours["ci_low"].iloc[0] < ours["estimate"].iloc[0] < ours["ci_high"].iloc[0]
    assert kendall(x, y, variant="c", **FAST)["metric"].iloc[0] == "kendall_tau_c"


def test_one_sided_alternative_is_passed_to_scipy() -> None:
    x, y = _tied_scores(4)
    ours = spearman(x, y, alternative="greater", **FAST)
    assert ours["p_value"].iloc[0] == pytest.approx(stats.spearmanr(x, y, alternative="greater").pvalue)


def test_nan_dropped_pairwise_and_counted() -> None:
    x, y = _tied_scores(5, 30)
    x[[1, 4]] = np.nan
    y[[4, 9]] = np.nan
    out = spearman(x, y, **FAST).iloc[0]
    keep = ~(np.isnan(x) | np.isnan(y))
    assert out["n"] == 27 and out["n_missing_dropped"] == 3
    assert out["estimate"] == pytest.approx(stats.spearmanr(x[keep], y[keep]).statistic)


def test_constant_side_and_tiny_n_give_nan_with_note() -> None:
    const = spearman(np.ones(10), np.arange(10.0), **FAST).iloc[0]
    assert np.isnan(const["estimate"]) and np.isnan(const["ci_low"]) and "x constant" in const["note"]
    two = pearson([1.0, 2.0], [3.0, 5.0], **FAST).iloc[0]
    assert two["estimate"] == pytest.approx(1.0) and two["n"] == 2
    one = correlation([1.0], [2.0], **FAST).iloc[0]
    assert np.isnan(one["estimate"]) and "n=1" in one["note"]


def _summary_table() -> pd.DataFrame:
    """Judge and human scores of 8 systems x 20 documents, plus unscored judge rows."""
    rng = np.random.default_rng(11)
    rows = []
    for doc in range(20):
        for system in range(8):
            human = float(rng.integers(1, 6))
            judge = float(np.clip(human + rng.integers(-1, 2), 1, 5))
            item = f"d{doc}-s{system}"
            base = {"run_id": "r", "item_id": item, "rubric": "summ", "criterion": "coherence",
                    "condition": "original", "document_id": f"d{doc}", "system": f"s{system}"}
            rows.append({**base, "judge": "human", "status": "ok", "score": human})
            unscored = doc == 3 and system == 2
            rows.append({**base, "judge": "gpt", "status": "parse_error" if unscored else "ok",
                         "score": None if unscored else judge, "unscored_reason": "no score" if unscored else None})
    return make_table(rows)


def test_judgments_table_input_uses_only_ok_rows_and_reports_exclusions() -> None:
    table = _summary_table()
    wide = pair_judges(table, ["gpt", "human"], keep=["document_id"])
    assert wide["n_unscored"].sum() == 1 and len(wide) == 160
    out = spearman("gpt", "human", data=table, cluster="document_id", **FAST).iloc[0]
    keep = wide["gpt"].notna()
    assert out["n"] == 159 and out["n_unscored_excluded"] == 1 and out["n_missing_dropped"] == 1
    assert out["estimate"] == pytest.approx(stats.spearmanr(wide["gpt"][keep], wide["human"][keep]).statistic)
    assert "clustered by document_id (20 clusters" in out["method"]


def test_pair_judges_rejects_duplicate_keys_and_unknown_judges() -> None:
    table = _summary_table()
    doubled = make_table(pd.concat([table, table.assign(run_id="r2")], ignore_index=True))
    with pytest.raises(DuplicateRatingsError, match=r"159 \(item_id, criterion, side\) key\(s\).*differ in run_id"):
        pair_judges(doubled, ["gpt", "human"])
    with pytest.raises(StatsInputError, match=r"\['claude'\] have no rows.*'gpt', 'human'"):
        pair_judges(table, ["claude", "human"])


def _long_frame() -> pd.DataFrame:
    table = _summary_table()
    wide = pair_judges(table, ["gpt", "human"], keep=["document_id", "system"])
    frame = wide.rename(columns={"document_id": "doc"})
    # make document d0 constant for humans: it must be skipped
    frame.loc[frame["doc"] == "d0", "human"] = 3.0
    return frame


def test_group_level_skips_constant_groups_and_averages_the_rest() -> None:
    frame = _long_frame()
    expected = []
    skipped = 0
    for _, part in frame.dropna(subset=["gpt", "human"]).groupby("doc"):
        if part["gpt"].nunique() < 2 or part["human"].nunique() < 2:
            skipped += 1
            continue
        expected.append(stats.spearmanr(part["gpt"], part["human"]).statistic)
    out = group_level_correlation("gpt", "human", "doc", data=frame, **FAST).iloc[0]
    assert out["estimate"] == pytest.approx(np.mean(expected))
    assert out["n_groups_skipped"] == skipped >= 1 and out["n_groups_used"] == len(expected) == out["n"]
    per_group = per_group_correlations("gpt", "human", "doc", data=frame)
    assert per_group.loc[per_group["group"] == "d0", "note"].iloc[0].startswith("correlation undefined")


def test_system_level_and_pair_accuracy_match_hand_computation() -> None:
    frame = _long_frame().dropna(subset=["gpt", "human"])
    means = frame.groupby("system")[["gpt", "human"]].mean()
    sys_out = system_level_correlation("gpt", "human", "system", item="doc", data=frame, **FAST).iloc[0]
    ref = stats.spearmanr(means["gpt"], means["human"])
    assert sys_out["estimate"] == pytest.approx(ref.statistic) and sys_out["p_value"] == pytest.approx(ref.pvalue)
    assert sys_out["n"] == 8 and sys_out["ci_low"] <= sys_out["estimate"] <= sys_out["ci_high"]
    agree = [np.sign(means["gpt"].iloc[i] - means["gpt"].iloc[j]) == np.sign(means["human"].iloc[i] - means["human"].iloc[j])
             for i in range(8) for j in range(i + 1, 8)]
    pair_out = system_pair_accuracy("gpt", "human", "system", item="doc", data=frame, **FAST).iloc[0]
    assert pair_out["estimate"] == pytest.approx(np.mean(agree)) and pair_out["n"] == 28


def test_meta_evaluation_reports_every_level() -> None:
    frame = _long_frame()
    out = meta_evaluation("gpt", "human", data=frame, group="doc", system="system", item="doc", **FAST)
    assert list(out["level"]) == ["pooled", "group", "system", "system_pairs"]
    assert out["estimate"].notna().all() and (out["ci_low"] <= out["ci_high"]).all()
    assert out.columns[-1] == "note"
