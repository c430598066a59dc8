"""pairwise_accuracy: policies for ties and unscored verdicts, intervals, and input errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from judgelab.errors import JudgelabError
from judgelab.judgments import make_table, validate
from judgelab.stats.pairwise import POLICIES, pairwise_accuracy, pairwise_policy_sensitivity


def _table(verdicts: dict[str, tuple[str | None, str | None]], gold: dict[str, str]) -> pd.DataFrame:
    """A pairwise table: verdict None means an unscored (parse_error) row."""
    rows = []
    for item, label in gold.items():
        rows.append({"run_id": "r", "item_id": item, "rubric": "p", "criterion": "overall", "judge": "gold",
                     "condition": "original", "status": "ok", "winner": label})
    for item, pair in verdicts.items():
        for condition, winner in zip(("original", "swapped"), pair, strict=True):
            row = {"run_id": "r", "item_id": item, "rubric": "p", "criterion": "overall", "judge": "j",
                   "condition": condition}
            if winner is None:
                row |= {"status": "parse_error", "unscored_reason": "unreadable"}
            else:
                row |= {"status": "ok", "winner": winner}
            rows.append(row)
    return validate(make_table(rows))


# 6 items, gold A except i6 (B):
#   i1 A/A correct both; i2 A/B flip; i3 B/B wrong both; i4 TIE/A; i5 unscored/unscored; i6 B/unscored
VERDICTS = {"i1": ("A", "A"), "i2": ("A", "B"), "i3": ("B", "B"), "i4": ("TIE", "A"), "i5": (None, None),
            "i6": ("B", None)}
GOLD = {"i1": "A", "i2": "A", "i3": "A", "i4": "A", "i5": "A", "i6": "B"}


def _by_metric(policy: str) -> pd.DataFrame:
    return pairwise_accuracy(_table(VERDICTS, GOLD), policy=policy, n_resamples=200).set_index("metric")


def test_exclude_policy_drops_ties_and_unscored_from_denominators() -> None:
    r = _by_metric("exclude")
    assert (r.loc["accuracy_original", "n_correct"], r.loc["accuracy_original", "n"]) == (3, 4)  # i1 i2 i3 i6
    assert (r.loc["accuracy_swapped", "n_correct"], r.loc["accuracy_swapped", "n"]) == (2, 4)  # i1 i2 i3 i4
    assert (r.loc["accuracy_mean", "n_correct"], r.loc["accuracy_mean", "n"]) == (5, 8)
    assert (r.loc["correct_both", "n_correct"], r.loc["correct_both", "n"]) == (1, 3)  # i1 of i1 i2 i3
    assert (r.loc["position_consistency", "n_correct"], r.loc["position_consistency", "n"]) == (2, 3)
    assert set(r["policy"]) == {"exclude"}


def test_tie_policy_treats_unscored_as_tie_and_compares_verdicts() -> None:
    r = _by_metric("tie")
    assert r.loc["accuracy_original", "n_correct"] == 3 and r.loc["accuracy_original", "n"] == 6
    assert r.loc["accuracy_swapped", "n_correct"] == 2
    assert r.loc["correct_both", "n_correct"] == 1
    # i1, i3 identical; i5 unscored twice = TIE/TIE counts as consistent (LLMBar's "equal" convention)
    assert r.loc["position_consistency", "n_correct"] == 3
    assert r.loc["accuracy_mean", "estimate"] == pytest.approx(5 / 12)


def test_wrong_policy_counts_every_tie_and_unscored_verdict_as_a_failure() -> None:
    r = _by_metric("wrong")
    assert r.loc["accuracy_original", "n_correct"] == 3 and r.loc["accuracy_original", "n"] == 6
    assert r.loc["position_consistency", "n_correct"] == 2  # i1, i3 only: i5 (unscored twice) fails
    assert r.loc["correct_both", "n"] == 6


def test_sensitivity_table_puts_every_policy_side_by_side() -> None:
    wide = pairwise_policy_sensitivity(_table(VERDICTS, GOLD), n_resamples=200)
    assert list(wide["metric"].astype(str)) == [
        "accuracy_original", "accuracy_swapped", "accuracy_mean", "correct_both", "position_consistency",
        "accuracy_net"]
    for policy in POLICIES:
        assert f"estimate_{policy}" in wide and f"n_{policy}" in wide
    consistency = wide.set_index(wide["metric"].astype(str)).loc["position_consistency"]
    assert consistency["estimate_exclude"] == pytest.approx(2 / 3)
    assert consistency["estimate_tie"] == pytest.approx(3 / 6)
    assert consistency["spread"] == pytest.approx(2 / 3 - 2 / 6)
    net = wide.set_index(wide["metric"].astype(str)).loc["accuracy_net"]
    assert np.isnan(net["estimate_tie"]) and not np.isnan(net["estimate_net"])  # a "net"-only metric
    assert np.isnan(net["spread"])


def test_exact_interval_is_clopper_pearson_and_p_value_is_binomial_vs_chance() -> None:
    rng = np.random.default_rng(3)
    n = 80
    gold = {f"i{k}": "A" if rng.random() < 0.5 else "B" for k in range(n)}
    flip = {"A": "B", "B": "A"}
    verdicts = {i: (g if rng.random() < 0.7 else flip[g], g if rng.random() < 0.6 else flip[g]) for i, g in gold.items()}
    r = pairwise_accuracy(_table(verdicts, gold), policy="exclude", n_resamples=500).set_index("metric")
    k, m = int(r.loc["accuracy_original", "n_correct"]), int(r.loc["accuracy_original", "n"])
    ref = stats.binomtest(k, m).proportion_ci(confidence_level=0.95, method="exact")
    assert r.loc["accuracy_original", "ci_low"] == pytest.approx(ref.low, abs=1e-10)
    assert r.loc["accuracy_original", "ci_high"] == pytest.approx(ref.high, abs=1e-10)
    assert r.loc["accuracy_original", "p_value"] == pytest.approx(stats.binomtest(k, m, 0.5).pvalue)
    assert "Clopper-Pearson" in r.loc["accuracy_original", "method"]
    mean = r.loc["accuracy_mean"]
    assert "bootstrap" in mean["method"] and mean["ci_low"] < mean["estimate"] < mean["ci_high"]
    assert np.isnan(r.loc["position_consistency", "p_value"])


def test_bootstrap_option_resamples_items_for_every_metric_and_is_seeded() -> None:
    table = _table(VERDICTS, GOLD)
    a = pairwise_accuracy(table, policy="tie", ci="bootstrap", n_resamples=300, seed=7)
    b = pairwise_accuracy(table, policy="tie", ci="bootstrap", n_resamples=300, seed=7)
    pd.testing.assert_frame_equal(a, b)
    assert a["method"].str.contains("bootstrap").all()


def test_gold_can_be_a_mapping_and_groups_split_by_judge() -> None:
    table = _table(VERDICTS, GOLD)
    other = table[table["judge"] == "j"].copy()
    other["judge"] = "k"
    both = pd.concat([table, other], ignore_index=True)
    res = pairwise_accuracy(both[both["judge"] != "gold"], gold=GOLD, policy="tie", n_resamples=100)
    assert set(res["judge"]) == {"j", "k"}
    assert (res.groupby("metric")["estimate"].nunique() == 1).all()


def test_bad_input_is_a_clear_error() -> None:
    table = _table(VERDICTS, GOLD)
    with pytest.raises(JudgelabError, match="policy must be one of"):
        pairwise_accuracy(table, policy="drop")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no judged items have no gold|have no gold label"):
        pairwise_accuracy(table, gold={"i1": "A"})
    with pytest.raises(ValueError, match="no scored gold rows"):
        pairwise_accuracy(table, gold="referee")
    with pytest.raises(ValueError, match="gold labels must be"):
        pairwise_accuracy(table, gold={k: "1" for k in GOLD})
    doubled = pd.concat([table, table[table["judge"] == "j"].assign(run_id="r")], ignore_index=True)
    with pytest.raises(ValueError, match=r"one verdict per item and order: 12 \(item_id, condition\) key\(s\)"):
        pairwise_accuracy(doubled)


def test_nothing_usable_is_nan_with_a_note_and_errors_are_stats_input_errors() -> None:
    from judgelab.stats import StatsInputError

    table = _table({"i1": (None, None), "i2": ("TIE", None)}, {"i1": "A", "i2": "B"})
    res = pairwise_accuracy(table, policy="exclude", n_resamples=50).set_index("metric")
    row = res.loc["accuracy_original"]
    assert row["n"] == 0 and np.isnan(row["estimate"]) and "no item is usable under policy 'exclude'" in row["note"]
    assert res.loc["accuracy_original", "n_excluded"] == 2
    with pytest.raises(StatsInputError, match="no judge rows"):
        pairwise_accuracy(table[table["judge"] == "gold"])
