"""The analysis-only position probe on LLMBar's released GPT-4 / ChatGPT outputs must reproduce the
published position consistency (statistics.json "equal": verdict identical in both orders, an
unreadable verdict counting as its own value -- the probe's unscored="tie" policy)."""

from __future__ import annotations

import pytest

from judgelab import probes
from judgelab.datasets import llmbar
from judgelab.datasets.llmbar_published import llmbar_published_statistics

# A spread of splits, both judges, plain / CoT / Swap / Rating strategies, and folders whose
# outputs include unreadable verdicts (all 137 released folders agree; these keep the test short).
CASES = [
    ("LLMBar/Natural", "GPT-4", "Vanilla"),
    ("LLMBar/Natural", "GPT-4", "Swap_CoT"),
    ("LLMBar/Adversarial/GPTInst", "ChatGPT", "CoT"),
    ("LLMBar/Adversarial/Neighbor", "GPT-4", "Metrics_Reference"),
    ("LLMBar/Adversarial/Manual", "ChatGPT", "Rating"),
    ("LLMBar/Natural", "GPT-4", "Rating_Metrics_Reference"),
    ("Processed/FairEval", "GPT-4", "Metrics_Reference"),
    ("Processed/MT-Bench", "ChatGPT", "Vanilla_NoRules"),
]


@pytest.mark.parametrize("split, judge, strategy", CASES)
def test_consistency_rate_matches_published_equal_field(data_dir, split, judge, strategy):
    rating_winner = "as_published" if strategy.startswith("Rating") else "from_scores"
    data = llmbar(split, judge, strategy, data_dir=data_dir, rating_winner=rating_winner)
    published = llmbar_published_statistics(split, judge, strategy, data_dir=data_dir)
    result = probes.position.analyze(data.table, unscored="tie", n_resamples=200)
    row = result.statistic("consistency_rate")
    assert row["n"] == published["equal_n"]
    assert round(row["estimate"] * row["n"]) == published["equal_count"]
    assert row["estimate"] * 100 == pytest.approx(published["equal_percent"], abs=0.05)
    # the calibrated sensitivity table scores every item against the gold labels
    assert set(result.details["sensitivity"]["policy"]) == {"tie", "drop", "first", "average"}
    assert "accuracy" in set(result.details["sensitivity"]["statistic"])


def test_unscored_policy_changes_the_denominator(data_dir):
    data = llmbar("LLMBar/Adversarial/GPTInst", "ChatGPT", "CoT", data_dir=data_dir)
    unscored = int((data.table["status"] != "ok").sum())
    assert unscored > 0  # this folder holds unreadable verdicts
    as_tie = probes.position.analyze(data.table, unscored="tie", n_resamples=200).statistic("consistency_rate")
    excluded = probes.position.analyze(data.table, unscored="exclude", n_resamples=200).statistic("consistency_rate")
    assert excluded["n"] < as_tie["n"] and "excluded" in excluded["note"]
